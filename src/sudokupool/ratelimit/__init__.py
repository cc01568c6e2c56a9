"""Rate limiting for ``/api/v2``: fixed one-minute windows per client address or key.

``window`` holds the arithmetic, ``memory`` and ``redis`` the two stores behind
:class:`~sudokupool.ratelimit.store.LimiterStore`, ``limits`` the requests per window of each tier. The
HTTP gate that counts each request (keys, client address, 401 and 429) is :mod:`sudokupool.api.limiter`.
:func:`make_store` picks the store the settings ask for.
"""

from __future__ import annotations

from sudokupool.config import Settings
from sudokupool.ratelimit.limits import Limits
from sudokupool.ratelimit.memory import MemoryStore
from sudokupool.ratelimit.store import LimiterStore, LimiterUnavailable
from sudokupool.ratelimit.window import Decision
from sudokupool.services.outages import OutageLog

__all__ = [
    "Decision",
    "LimiterStore",
    "LimiterUnavailable",
    "Limits",
    "MemoryStore",
    "make_store",
]


def make_store(settings: Settings, *, outages: OutageLog | None = None) -> LimiterStore:
    """Redis when ``SUDOKUPOOL_REDIS_URL`` is set, else process memory. Opens no connection yet.

    ``outages``: the log of Redis outages this process shares with its activity counters.
    """
    if settings.redis_url:
        # Imported here so a process-local deployment never imports redis-py.
        from sudokupool.ratelimit.redis import RedisStore

        return RedisStore.from_url(
            settings.redis_url,
            timeout=settings.redis_timeout,
            failure_mode=settings.redis_failure_mode,
            mode=settings.redis_mode,
            outages=outages,
        )
    return MemoryStore()
