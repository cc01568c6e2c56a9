"""What a job submitted to the work pool can end in besides its result."""

from __future__ import annotations


class WorkError(Exception):
    """Base of the pool's own refusals and failures (a job's own exception is re-raised as it is)."""


class WorkQueueFull(WorkError):
    """The pool's queue is full: the job was not taken. Answer 503 with ``Retry-After: retry_after``."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"the work queue is full; retry in {retry_after} s")
        self.retry_after = retry_after


class WorkBudgetExceeded(WorkError):
    """The job ran longer than its budget: its process was stopped (and is replaced for the next job)."""

    def __init__(self, budget: float, retry_after: int) -> None:
        super().__init__(f"the job ran past its budget of {budget:g} s")
        self.budget = budget
        self.retry_after = retry_after


class WorkDropped(WorkError):
    """The job's client left while it waited in the queue: it was never started."""


class WorkCrashed(WorkError):
    """The work process ended without an answer (killed, out of memory): the job has no result."""
