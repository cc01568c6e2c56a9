"""The bounded pool for computed work (renders, print sheets, live grades and hints) and its result cache.

Submit a job with :meth:`WorkPool.submit`; see :mod:`sudokupool.work.pool` for its bounds.
"""

from __future__ import annotations

from sudokupool.work.errors import WorkBudgetExceeded, WorkCrashed, WorkDropped, WorkError, WorkQueueFull
from sudokupool.work.pool import OUTCOMES, WorkPool, WorkTally

__all__ = [
    "OUTCOMES",
    "WorkBudgetExceeded",
    "WorkCrashed",
    "WorkDropped",
    "WorkError",
    "WorkPool",
    "WorkQueueFull",
    "WorkTally",
]
