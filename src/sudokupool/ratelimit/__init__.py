"""Rate limiting for ``/api/v2``: fixed one-minute windows per client address or key.

``window`` holds the arithmetic, ``memory`` and ``redis`` the two stores behind
:class:`~sudokupool.ratelimit.store.LimiterStore`, ``limits`` the requests per window of each tier. The
HTTP gate that counts each request (keys, client address, 401 and 429) is :mod:`sudokupool.api.limiter`.
:func:`make_store` picks the store the settings ask for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sudokupool.config import Settings
from sudokupool.ratelimit.limits import Limits
from sudokupool.ratelimit.memory import MemoryStore
from sudokupool.ratelimit.store import LimiterStore, LimiterUnavailable
from sudokupool.ratelimit.window import Decision
from sudokupool.services import redis_or_local
from sudokupool.services.outages import OutageLog

if TYPE_CHECKING:
    from sudokupool.services.redisclient import Client

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

    def in_redis(client: Client, server: str) -> LimiterStore:
        from sudokupool.ratelimit.redis import RedisStore

        return RedisStore(client, failure_mode=settings.redis_failure_mode, server=server, outages=outages)

    return redis_or_local(settings, in_redis, MemoryStore)
