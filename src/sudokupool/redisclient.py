"""The client for the Redis the fleet shares (one server or a Redis Cluster), and the log of its outages.

The rate limiter and the activity counters both talk to it, on the request path or beside it, so a slow
or absent Redis must cost a bounded time and a bounded amount of logging: no retries, a socket timeout
on every call, and one log line when a server becomes unreachable and one when it is back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import redis.asyncio
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

logger = logging.getLogger(__name__)

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


@dataclass
class _Down:
    since: float
    failures: int = 0
    without: int = 0


class Outages:
    """One WARNING line when a Redis server starts failing, one when it answers again, nothing in between.

    ``failed`` records a failed call to ``server`` (``host:port``), ``skipped`` the requests answered
    without Redis meanwhile, ``succeeded`` a call that worked. The limiter and the activity counters of
    one process share one instance, so an outage is two lines, whoever notices it first.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, log: logging.Logger = logger) -> None:
        self._clock = clock
        self._log = log
        self._down: dict[str, _Down] = {}

    def is_down(self, server: str) -> bool:
        return server in self._down

    @property
    def down(self) -> bool:
        """Whether any server is failing now (for the metrics)."""
        return bool(self._down)

    def failed(self, server: str, what: str, exc: BaseException) -> None:
        down = self._down.get(server)
        if down is None:
            down = self._down[server] = _Down(self._clock())
            self._log.warning(
                "Redis %s unavailable (%s: %s: %s); %s until it is back.",
                server,
                what,
                type(exc).__name__,
                exc,
                "the rate limiter answers per its failure mode and the activity counters count per instance",
            )
        down.failures += 1

    def skipped(self, server: str, requests: int = 1) -> None:
        down = self._down.get(server)
        if down is not None:
            down.without += requests

    def succeeded(self, server: str) -> None:
        if not self._down:
            return
        down = self._down.pop(server, None)
        if down is not None:
            self._log.warning(
                "Redis %s is back after %.1f s: %d call(s) failed, %d request(s) answered without it meanwhile.",
                server,
                self._clock() - down.since,
                down.failures,
                down.without,
            )
