"""The bounded pool for computed work (renders, print sheets, live grades and hints) and its result cache.

Submit a job with :meth:`WorkPool.submit`; see :mod:`sudokupool.work.pool` for its bounds. The app's pool is
``runtime.work``. A job is a module-level function with picklable arguments, run in a work process::

    result = await runtime.work.submit(grade_text, puzzle, kind="grade", left=client_left_coroutine_function)

An HTTP handler of the API router uses :mod:`sudokupool.api.computed` instead: ``await charge(scope, cost)`` counts
the work in the client's ``/api/v2`` limit (a 429 before any work), then ``await submit(scope, runtime.work, kind,
function, *args)`` submits it, dropped if the client leaves, with the pool's refusals as JSON errors (503 with
``Retry-After`` for a full queue or a job past its budget).
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
