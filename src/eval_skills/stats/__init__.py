"""Statistics: pure functions, each tested against values computed by hand.

- :mod:`.skill`: a tool skill's metrics (completion, error rate, consistency, percentiles, composite);
- :mod:`.classification`: precision, recall, F1 and accuracy of a binary classification (routing tests);
- :mod:`.estimators`: estimators shared by every kind of evaluation (sample summaries, unbiased pass@k and
  pass^k, a seeded bootstrap interval, a paired sign-flip permutation test, the Wilson interval).
"""

from __future__ import annotations

from .estimators import (
    bootstrap_ci,
    min_two_sided_p,
    pass_at_k_task,
    pass_hat_k_task,
    sample_summary,
    sign_flip_test,
    wilson_interval,
)
from .skill import composite_score, nearest_rank, skill_summary

__all__ = [
    "bootstrap_ci",
    "composite_score",
    "min_two_sided_p",
    "nearest_rank",
    "pass_at_k_task",
    "pass_hat_k_task",
    "sample_summary",
    "sign_flip_test",
    "skill_summary",
    "wilson_interval",
]
