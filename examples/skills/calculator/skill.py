"""A calculator tool skill: JSON-RPC 2.0 on stdin/stdout, one request per line (standard library only).

Methods:
  invoke       params {"expression": "2 + 3 * 4"}                  -> {"result": "14"}
               params {"expression": "5!"}                          -> {"result": "120"}
               params {"expression": "100/4"}                       -> {"result": "25.0"}
               params {"operation": "reverse", "text": "hello"}       -> {"result": "olleh"}
               params {"operation": "is_palindrome", "text": "Racecar"} -> {"result": "true"}
  healthcheck  params {}                                            -> {"status": "ok"}

Expressions are parsed with the ``ast`` module and only numbers, + - * / // % ** (also written ^),
unary signs, parentheses and postfix factorial ``n!`` are allowed: nothing is ever ``eval``-ed.
Results print the way Python prints them: ``/`` gives a float (``25.0``), integer operations an int.
Works persistent (many lines) and one-shot (one line, then end of input).
"""

import ast
import json
import math
import operator
import sys

MAX_EXPRESSION = 10_000
MAX_FACTORIAL = 1_000
MAX_POWER_BITS = 1_000_000

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(100_000)


class CalcError(ValueError):
    """A request the calculator refuses: answered as a JSON-RPC error."""


def _factorial(value):
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 0:
        raise CalcError(f"factorial needs a non-negative integer, got {value!r}")
    if value > MAX_FACTORIAL:
        raise CalcError(f"factorial argument larger than {MAX_FACTORIAL}")
    return math.factorial(value)


def _power(base, exponent):
    if (isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1
            and exponent * abs(base).bit_length() > MAX_POWER_BITS):
        raise CalcError("result too large")
    return operator.pow(base, exponent)


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _power}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _evaluate(node):
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_fact"
            and len(node.args) == 1 and not node.keywords):
        return _factorial(_evaluate(node.args[0]))
    raise CalcError(f"not allowed in an expression: {type(node).__name__}")


def _wrap_operand(text):
    """Wrap the operand that ends ``text`` in ``_fact(...)``: the meaning of a postfix ``!``."""
    end = len(text.rstrip())
    start = end
    if start and text[start - 1] == ")":
        depth = 0
        while start > 0:
            start -= 1
            if text[start] == ")":
                depth += 1
            elif text[start] == "(":
                depth -= 1
                if depth == 0:
                    break
        if depth != 0:
            raise CalcError("unbalanced parentheses before '!'")
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1  # a function name before the parenthesis, as in 3!!
    else:
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "._"):
            start -= 1
    if start == end:
        raise CalcError("'!' must follow a number or a parenthesis")
    return text[:start] + "_fact(" + text[start:end] + ")" + text[end:]


def _rewrite(expression):
    """Calculator spellings to Python: ``^`` is power, ``×`` and ``÷``, postfix ``!`` is factorial."""
    expression = expression.replace("^", "**").replace("×", "*").replace("÷", "/").strip().rstrip("=")
    out = ""
    for index, char in enumerate(expression):
        if char == "!" and expression[index + 1:index + 2] != "=":
            out = _wrap_operand(out)
        else:
            out += char
    return out


def calculate(expression):
    if not isinstance(expression, str | int | float) or isinstance(expression, bool):
        raise CalcError("expression must be a string")
    expression = str(expression)
    if not expression.strip():
        raise CalcError("expression is empty")
    if len(expression) > MAX_EXPRESSION:
        raise CalcError(f"expression longer than {MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(_rewrite(expression), mode="eval")
    except SyntaxError:
        raise CalcError(f"cannot parse expression {expression!r}") from None
    try:
        value = _evaluate(tree)
    except ZeroDivisionError:
        raise CalcError("division by zero") from None
    except (OverflowError, RecursionError):
        raise CalcError("result too large") from None
    try:
        return str(value)
    except ValueError:
        raise CalcError("result too large to print") from None


def is_palindrome(text):
    letters = [char.casefold() for char in text if char.isalnum()]
    return "true" if letters == letters[::-1] else "false"


def invoke(params):
    if not isinstance(params, dict):
        raise CalcError("params must be an object")
    operation = params.get("operation")
    if operation is None or operation in ("calculate", "evaluate"):
        if "expression" not in params:
            raise CalcError("give an 'expression', or an 'operation' with 'text'")
        return {"result": calculate(params["expression"])}
    text = params.get("text")
    if not isinstance(text, str):
        raise CalcError(f"operation {operation!r} needs a string 'text'")
    if operation == "reverse":
        return {"result": text[::-1]}
    if operation == "is_palindrome":
        return {"result": is_palindrome(text)}
    raise CalcError(f"unknown operation {operation!r} (known: calculate, reverse, is_palindrome)")


def respond(line):
    try:
        request = json.loads(line)
    except ValueError:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
    if not isinstance(request, dict):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request"}}
    request_id = request.get("id")
    method = request.get("method")
    try:
        if method == "invoke":
            result = invoke(request.get("params"))
        elif method == "healthcheck":
            result = {"status": "ok"}
        else:
            return {"jsonrpc": "2.0", "id": request_id,
                    "error": {"code": -32601, "message": f"method not found: {method!r}"}}
    except CalcError as exc:
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": str(exc)}}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def main():
    read = sys.stdin.buffer.readline
    out = sys.stdout.buffer
    while True:
        line = read()
        if not line:
            break
        if line.strip():
            out.write(json.dumps(respond(line)).encode() + b"\n")
            out.flush()


if __name__ == "__main__":
    main()
