"""A unit converter MCP server (stdio), written with the official ``mcp`` SDK.

Tool ``convert``: ``{"value": 5, "from_unit": "km", "to_unit": "mi"}`` -> ``"3.1069"`` (rounded to 4 decimals,
no trailing zeros). Length (mm, cm, m, km, in, ft, yd, mi), mass (mg, g, kg, oz, lb) and temperature (C, F, K).
An unknown unit, or units of two different kinds, is a tool error (``isError``) that says so.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("units")

# how many of the kind's base unit (metre, gram) one unit is
FACTORS: dict[str, dict[str, float]] = {
    "length": {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "yd": 0.9144,
               "mi": 1609.344},
    "mass": {"mg": 0.001, "g": 1.0, "kg": 1000.0, "oz": 28.349523125, "lb": 453.59237},
}
TEMPERATURES = {"C", "F", "K"}


def _kind(unit: str) -> str:
    if unit in TEMPERATURES:
        return "temperature"
    for kind, factors in FACTORS.items():
        if unit in factors:
            return kind
    raise ToolError(f"unknown unit {unit!r}")


def _to_kelvin(value: float, unit: str) -> float:
    return {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[unit]


def _from_kelvin(value: float, unit: str) -> float:
    return {"C": value - 273.15, "F": (value - 273.15) * 9 / 5 + 32, "K": value}[unit]


@server.tool(description="Convert a value between units of length, mass or temperature.")
def convert(value: float, from_unit: str, to_unit: str) -> str:
    kind, target = _kind(from_unit), _kind(to_unit)
    if kind != target:
        raise ToolError(f"cannot convert {kind} ({from_unit}) to {target} ({to_unit})")
    if kind == "temperature":
        result = _from_kelvin(_to_kelvin(value, from_unit), to_unit)
    else:
        result = value * FACTORS[kind][from_unit] / FACTORS[kind][to_unit]
    rounded = round(result, 4)
    return f"{rounded:.4f}".rstrip("0").rstrip(".") if rounded % 1 else str(int(rounded))


if __name__ == "__main__":
    server.run()
