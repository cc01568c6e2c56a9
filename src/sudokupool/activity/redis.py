"""Activity counters shared by every instance through Redis: cluster-wide, since the shared counters started.

``record`` stays the in-memory increment of :class:`~sudokupool.activity.counters.Activity`: a request never
waits for Redis. A background flusher sends what this instance counted since its last flush every
``flush_seconds``, as one Lua script call: ``HSETNX`` and ``HINCRBY``s on one key, in one round trip,
applied atomically, and the same on one server and on a Redis Cluster (whose redis-py client leaves a
connection on a closed event loop after a ``MULTI`` pipeline). A failed flush changes nothing locally,
so its deltas go with the next one; they are a handful of integers, so waiting never grows memory.

The totals live in one hash (``sudokupool:activity``), one field per event plus ``since``: when the
counters it holds started, written with ``HSETNX`` by every flush. The value a flush offers is the
start of what its own counts cover (its previous successful flush, or the instance's start), so when
Redis loses the hash (a restart without persistence, a flush, an eviction) the next flush starts it
again with a ``since`` that tells the truth about the counts, instead of claiming the first
instance's start. The instance that finds its counters gone logs it. With a Redis Cluster the hash
lives on the node its key maps to; every command names that one key.

The endpoint reads the hash with one ``HGETALL``, cached for ``cache_seconds`` so API traffic cannot
become Redis traffic, and adds what this instance has not flushed yet. When Redis cannot be read the
endpoint reports this instance's counts with scope ``instance`` and says why. An outage is logged once
when it starts and once when it ends (:class:`~sudokupool.services.outages.OutageLog`). A call whose connection
failed without a timeout is sent once more on a fresh connection first
(:func:`~sudokupool.services.redisclient.once_more`), and a cluster node's answer to single mode is a setting to
change, logged once as such.

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

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from sudokupool.activity.counters import DOWNLOADS, PLAYS, Activity, shape
from sudokupool.services.outages import OutageLog, redis_outages
from sudokupool.services.redisclient import Client, Mode, cluster_hint, cluster_reply, connect, once_more, server_name

logger = logging.getLogger(__name__)

EVENTS = PLAYS + DOWNLOADS
SINCE_FIELD = "since"

# KEYS[1]: the hash; ARGV[1]: the ``since`` to offer; then (field, delta) pairs. Returns 1 if it set ``since``.
_FLUSH_SCRIPT = """
local created = redis.call('HSETNX', KEYS[1], 'since', ARGV[1])
for i = 2, #ARGV, 2 do
    redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
return created
"""


class RedisActivity(Activity):
    """Counts of all instances sharing one Redis. ``start`` runs the flusher; ``aclose`` stops it
    after a final flush and closes the client."""

    scope = "cluster"

    def __init__(
        self,
        client: Client,
        *,
        flush_seconds: float = 5.0,
        cache_seconds: float = 1.0,
        retry_interval: float = 1.0,
        outages: OutageLog | None = None,
        server: str = "redis",
        key: str = "sudokupool:activity",
        now: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(now=now)
        self._client = client
        self._key = key
        self._flush_script = client.register_script(_FLUSH_SCRIPT)
        self._flush_seconds = flush_seconds
        self._cache_seconds = cache_seconds
        self._retry_interval = retry_interval
        self._monotonic = monotonic
        # The counts as of the last successful flush: ``counts - flushed`` is what Redis has not seen yet.
        self._flushed: dict[str, int] = dict.fromkeys(EVENTS, 0)
        self._since_written = False
        # When the counts not flushed yet started: the instance's start, then each successful flush.
        self._covered_from = self.since
        # One lock for flushes and reads, so a read's totals contain exactly the flushes before it and
        # ``counts - flushed`` (taken under the same lock) adds the rest without counting anything twice.
        self._lock = asyncio.Lock()
        self._cached: tuple[float, int, dict[str, int], dict[str, int]] | None = None
        self._down_until = float("-inf")
        self._outages = outages if outages is not None else redis_outages()
        self._server_name = server
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def from_url(cls, url: str, *, timeout: float, mode: Mode | str = "single", **options: Any) -> RedisActivity:
        """A counter with its own client for ``url`` (see :func:`~sudokupool.services.redisclient.connect`)."""
        client = connect(url, timeout=timeout, mode=mode)
        return cls(client, server=server_name(url), **options)

    @property
    def pending(self) -> dict[str, int]:
        """What this instance counted that no flush has sent yet."""
        return {name: self.counts[name] - self._flushed[name] for name in EVENTS}

    async def flush(self) -> bool:
        """Send this instance's unsent counts in one round trip; False (and the counts kept) on failure."""
        async with self._lock:
            current = dict(self.counts)
            flushed_at = int(time.time())
            deltas = {name: current[name] - self._flushed[name] for name in EVENTS}
            deltas = {name: delta for name, delta in deltas.items() if delta}
            if not deltas and self._since_written:
                return True
            args: list[str | int] = [self._covered_from]
            for name, delta in deltas.items():
                args += [name, delta]
            # Named before the call: on a cluster whose map is not known yet, the node asked is the URL's.
            server = self._server()
            try:
                created = await once_more(lambda: self._flush_script(keys=[self._key], args=args))
            except Exception as exc:
                # Whatever Redis does, the counts stay here for the next flush.
                self._call_failed("activity flush", exc, server)
                return False
            self._outages.recovered(server)
            if created and self._since_written:
                logger.warning(
                    "The activity counters in Redis were gone (Redis lost its data); they start again from %s.",
                    _stamp(self._covered_from),
                )
            self._flushed = current
            self._since_written = True
            self._covered_from = flushed_at
            return True

    async def snapshot_async(self) -> dict[str, Any]:
        """The cluster totals plus this instance's unsent counts, or this instance's counts if Redis fails."""
        read = await self._read()
        if read is None:
            covers = "this worker process since it started: the cluster counters in Redis are unavailable right now"
            return shape("instance", covers, self.since, dict(self.counts))
        since, totals, flushed = read
        counts = {name: totals[name] + self.counts[name] - flushed[name] for name in EVENTS}
        covers = f"all instances sharing this Redis, since their shared counters started ({_stamp(since)})"
        return shape(self.scope, covers, since, counts)

    async def _read(self) -> tuple[int, dict[str, int], dict[str, int]] | None:
        """(since, totals in Redis, this instance's flushed counts when they were read), cached; None if down."""
        if self._monotonic() < self._down_until:
            return None
        async with self._lock:
            now = self._monotonic()
            cached = self._cached
            if cached is not None and now - cached[0] < self._cache_seconds:
                return cached[1], cached[2], cached[3]
            server = self._server()
            try:
                raw = await once_more(lambda: self._client.hgetall(self._key))
                values = {_text(field): int(value) for field, value in raw.items()}
            except Exception as exc:
                self._down_until = self._monotonic() + self._retry_interval
                self._call_failed("activity read", exc, server)
                return None
            self._outages.recovered(server)
            since = values.get(SINCE_FIELD, self.since)
            totals = {name: values.get(name, 0) for name in EVENTS}
            flushed = dict(self._flushed)
            self._cached = (self._monotonic(), since, totals, flushed)
            return since, totals, flushed

    def _call_failed(self, reason: str, exc: Exception, server: str) -> None:
        if not isinstance(self._client, RedisCluster) and cluster_reply(exc):
            self._outages.configuration_error(cluster_hint(server))
        else:
            self._outages.failed(reason, error=exc, server=server, probe=not isinstance(exc, ResponseError))

    def _server(self) -> str:
        """``host:port`` of the server holding the counters: on a cluster, the node the key maps to."""
        if isinstance(self._client, RedisCluster):
            try:
                node = self._client.get_node_from_key(self._key)
            except Exception:  # no map of the cluster yet
                node = None
            if node is not None:
                return str(node.name)
        return self._server_name

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
        await self._outages.aclose()
        await self._client.aclose()


def _stamp(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _text(field: bytes | str) -> str:
    # The client does not decode responses (no ``decode_responses``), but its types allow either.
    return field.decode() if isinstance(field, bytes) else field
