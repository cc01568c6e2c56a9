"""The shared limiter store: fixed-window counters in Redis (or Valkey), one round trip per request.

A Lua script increments the window's counter and sets its expiry in one atomic command, so
concurrent requests on any number of instances are counted exactly. The window is part of the
key (``sudokupool:rl:<window>:<identity>``), so instances agree on it as long as their clocks do.

Redis failing never becomes a 500. After a failure the store stops asking Redis for
``retry_interval`` seconds (so a dead Redis costs no timeout per request) and, per
``SUDOKUPOOL_REDIS_FAILURE_MODE``, either counts in process memory meanwhile (``open``: the limits
then hold per instance, not per fleet) or raises :class:`LimiterUnavailable` (``closed``: 503).
Failures are logged at most once per ``log_interval`` seconds.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import redis.asyncio

from sudokupool.ratelimit.memory import MemoryStore
from sudokupool.ratelimit.store import LimiterUnavailable
from sudokupool.ratelimit.window import WINDOW_SECONDS, Clock, Decision, decide, wall_clock, window_index
from sudokupool.redisutil import ThrottledWarnings, fail_fast_client

logger = logging.getLogger(__name__)

# INCR then EXPIRE on the first hit only: the key lives a window plus a minute of clock skew.
_HIT_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then
    redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return count
"""

_KEY_TTL = 2 * WINDOW_SECONDS


class RedisStore:
    """Fixed-window counts shared by every instance through one Redis."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        failure_mode: str = "open",
        clock: Clock = wall_clock,
        key_prefix: str = "sudokupool:rl:",
        retry_interval: float = 1.0,
        log_interval: float = 10.0,
    ) -> None:
        if failure_mode not in ("open", "closed"):
            raise ValueError(f"failure_mode must be 'open' or 'closed', not {failure_mode!r}")
        self._client = client
        self._script = client.register_script(_HIT_SCRIPT)
        self._closed_on_failure = failure_mode == "closed"
        self._clock = clock
        self._prefix = key_prefix
        self._retry_interval = retry_interval
        self._warnings = ThrottledWarnings(logger, log_interval)
        self._fallback = MemoryStore(clock=clock)
        self._down_until = 0.0
        #: Whether the last call to Redis failed, and requests counted in process memory because of it.
        self.down = False
        self.fallbacks = 0

    @classmethod
    def from_url(cls, url: str, *, timeout: float, failure_mode: str = "open", **options: Any) -> RedisStore:
        """A store with its own client for ``url`` (see :func:`~sudokupool.redisutil.fail_fast_client`)."""
        client = fail_fast_client(url, timeout=timeout)
        return cls(client, failure_mode=failure_mode, **options)

    async def hit(self, identity: str, limit: int) -> Decision:
        """Count one request of ``identity`` in Redis; on failure apply the failure mode."""
        if time.monotonic() < self._down_until:
            return self._unavailable(identity, limit, None)
        now = self._clock()
        key = f"{self._prefix}{window_index(now)}:{identity}"
        try:
            count = int(await self._script(keys=[key], args=[_KEY_TTL]))
        except Exception as exc:
            # Whatever Redis does (refused, timed out, out of memory, a script error), it must not become a 500.
            self._down_until = time.monotonic() + self._retry_interval
            self.down = True
            return self._unavailable(identity, limit, exc)
        self.down = False
        return decide(count, limit, now)

    def _unavailable(self, identity: str, limit: int, exc: Exception | None) -> Decision:
        if exc is not None:
            self._log_failure(exc)
        if self._closed_on_failure:
            raise LimiterUnavailable("rate limiter unavailable")
        self.fallbacks += 1
        return self._fallback.hit_now(identity, limit)

    def _log_failure(self, exc: Exception) -> None:
        mode = "answering 503" if self._closed_on_failure else "limiting per process meanwhile"
        self._warnings.warning("Redis rate limiter unavailable (%s: %s); %s.", type(exc).__name__, exc, mode)

    async def aclose(self) -> None:
        await self._client.aclose()
