"""The results store: evaluations and their task results in one SQLite file, migrated on open.

Layer rule: this package imports only ``errors``, ``results`` and ``formats``; never a runner or the CLI.
"""

from __future__ import annotations

from .migrations import MIGRATIONS, migrate
from .sqlite import EVALUATION_STATUSES, OUTPUT_LIMIT, TEXT_LIMIT, TRUNCATED_KEY, Store, encode_output
from .verdicts import VerdictStore

__all__ = [
    "EVALUATION_STATUSES",
    "MIGRATIONS",
    "OUTPUT_LIMIT",
    "TEXT_LIMIT",
    "TRUNCATED_KEY",
    "Store",
    "VerdictStore",
    "encode_output",
    "migrate",
]
