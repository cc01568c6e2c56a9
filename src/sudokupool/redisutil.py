"""What the Redis-backed rate limiter and activity counters share: a fail-fast client and a quiet log.

Both sit on the request path or beside it, so a slow or absent Redis must cost a bounded time and a
bounded amount of logging, never a retry storm or a log line per request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import redis.asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff


def fail_fast_client(url: str, *, timeout: float) -> redis.asyncio.Redis:
    """A client for ``url`` whose every socket operation times out after ``timeout`` seconds.

    Retries are off: a retry would multiply the time a slow Redis can hold a request.
    """
    return redis.asyncio.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
        health_check_interval=0,
    )


class ThrottledWarnings:
    """Log a repeated failure at most once per ``interval`` seconds, with the count since the last line."""

    def __init__(self, logger: logging.Logger, interval: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._logger = logger
        self._interval = interval
        self._clock = clock
        self._last = float("-inf")
        self._unlogged = 0

    def warning(self, message: str, *args: Any) -> None:
        self._unlogged += 1
        now = self._clock()
        if now - self._last < self._interval:
            return
        self._logger.warning(message + " %d failure(s) since the last message.", *args, self._unlogged)
        self._last = now
        self._unlogged = 0
