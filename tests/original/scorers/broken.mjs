export default function (output {
