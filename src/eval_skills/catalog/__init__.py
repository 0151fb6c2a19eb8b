"""The benchmarks a user can run: the built-ins, those in a benchmarks folder, and converters that turn
local copies of public data sets (GAIA, ToolBench) into benchmark files. No data set ships with eval-skills."""

from __future__ import annotations

from .gaia import GAIA_ID, import_gaia
from .listing import PLACEHOLDERS, BenchmarkInfo, list_benchmarks, write_benchmark
from .toolbench import TOOLBENCH_ID, import_toolbench

__all__ = ["GAIA_ID", "PLACEHOLDERS", "TOOLBENCH_ID", "BenchmarkInfo", "import_gaia", "import_toolbench",
           "list_benchmarks", "write_benchmark"]
