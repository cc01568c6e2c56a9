"""Aggregate play and download counters for ``/api/v2/stats/activity``: counts only, no personal data.

:mod:`sudokupool.activity.counters` counts in this process; with ``SUDOKUPOOL_REDIS_URL`` set,
:func:`make_activity` returns the cluster-wide counter of :mod:`sudokupool.activity.redis` instead. Both
have the same interface, so handlers and the lifespan have one code path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sudokupool.activity.counters import Activity

if TYPE_CHECKING:
    from sudokupool.config import Settings
    from sudokupool.services.outages import OutageLog


def make_activity(settings: Settings, *, outages: OutageLog | None = None) -> Activity:
    """Counters in Redis when ``SUDOKUPOOL_REDIS_URL`` is set, else in process memory. Opens no connection yet.

    ``outages``: the log of Redis outages this process shares with its rate limiter.
    """
    if settings.redis_url:
        # Imported here so a process-local deployment never imports redis-py.
        from sudokupool.activity.redis import RedisActivity

        return RedisActivity.from_url(
            settings.redis_url,
            timeout=settings.redis_timeout,
            mode=settings.redis_mode,
            flush_seconds=settings.activity_flush_seconds,
            outages=outages,
        )
    return Activity()
