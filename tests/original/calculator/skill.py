#!/usr/bin/env python3
"""A one-shot JSON-RPC skill: reads one request from stdin, prints one reply, exits."""
import ast
import json
import math
import operator
import sys

BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def arithmetic(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        return BINARY[type(node.op)](arithmetic(node.left), arithmetic(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -arithmetic(node.operand)
    raise ValueError("unsupported expression")


def invoke(params):
    operation = params.get("operation")
    text = params.get("input", "")
    if operation == "reverse":
        return {"result": text[::-1]}
    if operation == "is_palindrome":
        return {"result": "true" if text == text[::-1] else "false"}
    expression = params.get("expression", "").replace(" ", "")
    if expression.endswith("!"):
        return {"result": str(math.factorial(int(expression[:-1])))}
    return {"result": str(arithmetic(ast.parse(expression, mode="eval").body))}


def main():
    request = json.loads(sys.stdin.read())
    params = request.get("params", {})  # crashes on "params": null, as the original's skills do
    try:
        reply = {"jsonrpc": "2.0", "result": invoke(params), "id": request.get("id")}
    except Exception as exc:  # a skill reports any failure as a JSON-RPC error
        reply = {"jsonrpc": "2.0", "error": {"code": -32000, "message": str(exc)}, "id": request.get("id")}
    print(json.dumps(reply))


if __name__ == "__main__":
    main()
