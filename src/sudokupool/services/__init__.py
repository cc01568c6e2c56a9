"""The services the app depends on and does not run: the client of the Redis the fleet shares (the rate
limiter and the activity counters use it), and the outage log of Redis and of export storage.

:func:`redis_or_local` is the one choice between the shared Redis and process memory that both of its users make.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from sudokupool.config import Settings
    from sudokupool.services.redisclient import Client

T = TypeVar("T")


def redis_or_local(settings: Settings, shared: Callable[[Client, str], T], local: Callable[[], T]) -> T:
    """``shared(client, server)`` when ``SUDOKUPOOL_REDIS_URL`` is set: a client of that Redis with the settings'
    timeout and mode, and its server's name for log lines; else ``local()``. Opens no connection yet.

    ``shared`` is called only with a Redis: the place to import what needs redis-py."""
    if not settings.redis_url:
        return local()
    # Imported here so a process-local deployment never imports redis-py.
    from sudokupool.services.redisclient import connect, server_name

    client = connect(settings.redis_url, timeout=settings.redis_timeout, mode=settings.redis_mode)
    return shared(client, server_name(settings.redis_url))
