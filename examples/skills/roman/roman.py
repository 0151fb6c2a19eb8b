"""A LangChain skill: a ``langchain-core`` tool that writes numbers in Roman numerals.

``to_roman.ainvoke({"number": 1994})`` -> ``"MCMXCIV"``. Numbers outside 1..3999 raise ``ToolException``.
"""

from __future__ import annotations

from langchain_core.tools import ToolException, tool

NUMERALS = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
            (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


@tool
def to_roman(number: int) -> str:
    """Write a whole number from 1 to 3999 in Roman numerals."""
    if not 1 <= number <= 3999:
        raise ToolException(f"{number} is outside 1..3999")
    parts = []
    for value, numeral in NUMERALS:
        count, number = divmod(number, value)
        parts.append(numeral * count)
    return "".join(parts)
