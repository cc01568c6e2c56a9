"""Aggregate play and download counters for ``/api/v2/stats/activity``: counts only, no personal data.

:mod:`sudokupool.activity.counters` counts in this process; with ``SUDOKUPOOL_REDIS_URL`` set,
:func:`make_activity` returns the cluster-wide counter of :mod:`sudokupool.activity.redis` instead. Both
have the same interface, so handlers and the lifespan have one code path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sudokupool.activity.counters import Activity
from sudokupool.services import redis_or_local

if TYPE_CHECKING:
    from sudokupool.config import Settings
    from sudokupool.services.outages import OutageLog
    from sudokupool.services.redisclient import Client


def make_activity(settings: Settings, *, outages: OutageLog | None = None) -> Activity:
    """Counters in Redis when ``SUDOKUPOOL_REDIS_URL`` is set, else in process memory. Opens no connection yet.

    ``outages``: the log of Redis outages this process shares with its rate limiter.
    """

    def in_redis(client: Client, server: str) -> Activity:
        from sudokupool.activity.redis import RedisActivity

        return RedisActivity(client, server=server, flush_seconds=settings.activity_flush_seconds, outages=outages)

    return redis_or_local(settings, in_redis, Activity)
