"""Activity counters shared by every instance through Redis: cluster-wide and all-time.

``record`` stays the in-memory increment of :class:`~sudokupool.activity.Activity`: a request never
waits for Redis. A background flusher sends what this instance counted since its last flush every
``flush_seconds``, as one pipelined ``MULTI``/``HINCRBY``.../``EXEC`` (one round trip, applied
atomically). A failed flush changes nothing locally, so its deltas go with the next one; they are a
handful of integers, so waiting never grows memory.

The totals live in one hash (``sudokupool:activity``), one field per event plus ``since``, the first
instance's start, written with ``HSETNX``. The endpoint reads it with one ``HGETALL``, cached for
``cache_seconds`` so API traffic cannot become Redis traffic, and adds what this instance has not
flushed yet. When Redis cannot be read the endpoint reports this instance's counts with scope
``instance`` and says why. Failures are logged at most once per ``log_interval`` seconds.

A flush that times out after Redis applied it is sent again by the next flush (counted twice):
a counter of plays may be off by one batch in that rare case, which is why this is not the limiter.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import redis.asyncio

from sudokupool.activity import DOWNLOADS, PLAYS, Activity, shape
from sudokupool.redisutil import ThrottledWarnings, fail_fast_client

logger = logging.getLogger(__name__)

EVENTS = PLAYS + DOWNLOADS
SINCE_FIELD = "since"


class RedisActivity(Activity):
    """Counts of all instances sharing one Redis. ``start`` runs the flusher; ``aclose`` stops it
    after a final flush and closes the client."""

    scope = "cluster"

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        flush_seconds: float = 5.0,
        cache_seconds: float = 1.0,
        retry_interval: float = 1.0,
        log_interval: float = 10.0,
        key: str = "sudokupool:activity",
        now: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(now=now)
        self._client = client
        self._key = key
        self._flush_seconds = flush_seconds
        self._cache_seconds = cache_seconds
        self._retry_interval = retry_interval
        self._monotonic = monotonic
        # The counts as of the last successful flush: ``counts - flushed`` is what Redis has not seen yet.
        self._flushed: dict[str, int] = dict.fromkeys(EVENTS, 0)
        self._since_written = False
        # One lock for flushes and reads, so a read's totals contain exactly the flushes before it and
        # ``counts - flushed`` (taken under the same lock) adds the rest without counting anything twice.
        self._lock = asyncio.Lock()
        self._cached: tuple[float, int, dict[str, int], dict[str, int]] | None = None
        self._down_until = float("-inf")
        #: Whether the last call to Redis failed (for the metrics).
        self.down = False
        self._warnings = ThrottledWarnings(logger, log_interval, clock=monotonic)
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def from_url(cls, url: str, *, timeout: float, **options: Any) -> RedisActivity:
        """A counter with its own client for ``url`` (see :func:`~sudokupool.redisutil.fail_fast_client`)."""
        client = fail_fast_client(url, timeout=timeout)
        return cls(client, **options)

    @property
    def pending(self) -> dict[str, int]:
        """What this instance counted that no flush has sent yet."""
        return {name: self.counts[name] - self._flushed[name] for name in EVENTS}

    async def flush(self) -> bool:
        """Send this instance's unsent counts in one round trip; False (and the counts kept) on failure."""
        async with self._lock:
            current = dict(self.counts)
            deltas = {name: current[name] - self._flushed[name] for name in EVENTS}
            deltas = {name: delta for name, delta in deltas.items() if delta}
            if not deltas and self._since_written:
                return True
            pipe = self._client.pipeline(transaction=True)
            pipe.hsetnx(self._key, SINCE_FIELD, self.since)
            for name, delta in deltas.items():
                pipe.hincrby(self._key, name, delta)
            try:
                await pipe.execute()
            except Exception as exc:
                # Whatever Redis does, the counts stay here for the next flush.
                self._log_failure("flush", exc)
                return False
            self._flushed = current
            self._since_written = True
            self.down = False
            return True

    async def snapshot_async(self) -> dict[str, Any]:
        """The cluster totals plus this instance's unsent counts, or this instance's counts if Redis fails."""
        read = await self._read()
        if read is None:
            covers = "this instance since it started: the cluster counters in Redis are unavailable right now"
            return shape("instance", covers, self.since, dict(self.counts))
        since, totals, flushed = read
        counts = {name: totals[name] + self.counts[name] - flushed[name] for name in EVENTS}
        stamp = datetime.fromtimestamp(since, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return shape(self.scope, f"all instances sharing this Redis, all-time (since {stamp})", since, counts)

    async def _read(self) -> tuple[int, dict[str, int], dict[str, int]] | None:
        """(since, totals in Redis, this instance's flushed counts when they were read), cached; None if down."""
        if self._monotonic() < self._down_until:
            return None
        async with self._lock:
            now = self._monotonic()
            cached = self._cached
            if cached is not None and now - cached[0] < self._cache_seconds:
                return cached[1], cached[2], cached[3]
            try:
                raw = await self._client.hgetall(self._key)
                values = {_text(field): int(value) for field, value in raw.items()}
                self.down = False
            except Exception as exc:
                self._down_until = self._monotonic() + self._retry_interval
                self._log_failure("read", exc)
                return None
            since = values.get(SINCE_FIELD, self.since)
            totals = {name: values.get(name, 0) for name in EVENTS}
            flushed = dict(self._flushed)
            self._cached = (self._monotonic(), since, totals, flushed)
            return since, totals, flushed

    def _log_failure(self, what: str, exc: Exception) -> None:
        self.down = True
        self._warnings.warning(
            "Redis activity counters unavailable (%s: %s: %s); counting per instance meanwhile.",
            what,
            type(exc).__name__,
            exc,
        )

    async def start(self) -> None:
        """Start the flusher: one flush now (it records ``since``), then one every ``flush_seconds``."""
        if self._task is None:
            self._stopping.clear()
            self._task = asyncio.create_task(self._run(), name="sudokupool-activity-flush")

    async def _run(self) -> None:
        while True:
            await self.flush()
            # Waiting on the event (not cancelling the task) means a stop never interrupts a flush in flight.
            try:
                await asyncio.wait_for(self._stopping.wait(), self._flush_seconds)
            except TimeoutError:
                continue
            return

    async def aclose(self) -> None:
        """Stop the flusher, send what is left (one try), close the client."""
        task, self._task = self._task, None
        if task is not None:
            self._stopping.set()
            await task
        await self.flush()
        await self._client.aclose()


def _text(field: bytes | str) -> str:
    # The client does not decode responses (no ``decode_responses``), but its types allow either.
    return field.decode() if isinstance(field, bytes) else field
