"""Worker process pools for the work spread over processes (grading, building, merging), stopped cleanly by
signals."""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.pool import Pool

_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _worker_started() -> None:
    # Ctrl-C reaches the whole process group: the parent alone reports it and terminates the pool, so a worker
    # ignores SIGINT. SIGTERM, which Pool.terminate() sends, ends a worker at once, whatever handler the
    # parent had when it forked.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


@contextmanager
def worker_pool(jobs: int) -> Iterator[Pool]:
    """A pool of ``jobs`` worker processes, terminated on leaving the block, also by an exception (Ctrl-C)."""
    # The stop signals stay blocked while the pool forks, so that no worker gets one before it has set its
    # handlers; one that reaches the parent meanwhile is delivered when the mask is restored, inside the
    # ``with``, so the pool is still terminated.
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        pool = multiprocessing.get_context().Pool(jobs, initializer=_worker_started)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        raise
    with pool:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        yield pool
