"""The client for the Redis the fleet shares (one server or a Redis Cluster).

The rate limiter and the activity counters both talk to it, on the request path or beside it, so a slow
or absent Redis must cost a bounded time and a bounded amount of logging: no retries, a socket timeout
on every call, and one log line when a server becomes unreachable and one when it is back
(:func:`sudokupool.outages.redis_outages`).
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

import redis.asyncio
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

Mode = Literal["single", "cluster"]
Client = redis.asyncio.Redis | RedisCluster


def connect(url: str, *, timeout: float, mode: Mode | str = "single") -> Client:
    """A client for ``url`` whose every socket operation times out after ``timeout`` seconds.

    ``cluster``: redis-py's cluster client, which discovers the other nodes from the one in ``url``.
    Retries are off in both modes: a retry would multiply the time a slow Redis can hold a request.
    """
    options: dict[str, Any] = {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "health_check_interval": 0,
        "retry": Retry(NoBackoff(), 0),
    }
    if mode == "cluster":
        return RedisCluster.from_url(url, **options)
    return redis.asyncio.Redis.from_url(url, **options)


def server_name(url: str) -> str:
    """``host:port`` of a Redis URL, for log lines (never the password it may carry)."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}"
