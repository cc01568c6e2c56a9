"""The shared limiter store: fixed-window counters in Redis (or Valkey, or a Redis Cluster).

Every request waiting for a count at the same moment (the same turn of the event loop) goes to Redis in
one round trip: a Lua script adds each identity's hits to its window's counter (``INCRBY``, and the
expiry on the first hit) and returns the new totals. The hits of one identity in a batch get consecutive
counts, ``total - n + 1 .. total``, exactly what ``n`` separate increments would have returned, so
concurrent requests on any number of instances are counted exactly. The window is part of the key
(``sudokupool:rl:<window>:<identity>``), so instances agree on it as long as their clocks do.

On a single server the batch is one script call over all its keys. On a Redis Cluster the keys spread
over the slots by identity, so the batch is one pipeline per node of single-key script calls, sent to
the nodes in parallel; a node that fails affects only the identities it holds, and makes the store
ask the cluster for its map again (a replica may have taken over the node's slots).

An identity this process has seen refused in the current window is answered from a local note until the
window ends, with no Redis call: it cannot be allowed again before then.

Redis failing never becomes a 500. A call whose connection failed without a timeout (a connection
kept from before the server restarted) is sent once more on a fresh one first
(:func:`~sudokupool.services.redisclient.stale`). After a failed call the store stops asking that server for
``retry_interval`` seconds (so a dead Redis costs no timeout per request) and, per
``SUDOKUPOOL_REDIS_FAILURE_MODE``, either counts in process memory meanwhile (``open``: the limits
then hold per instance, not per fleet) or raises :class:`LimiterUnavailable` (``closed``: 503).
An outage is logged once when it starts and once when it ends, which the outage log's probe finds out
when the server answers, whether or not a request needs it then (:class:`~sudokupool.services.outages.OutageLog`).

In single mode, a server that answers ``MOVED`` or ``CROSSSLOT`` is a node of a Redis Cluster: that is a
setting to change, logged once as such (:func:`~sudokupool.services.redisclient.cluster_hint`), not an outage.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import redis.asyncio
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import NoScriptError, ResponseError

from sudokupool.ratelimit.memory import MemoryStore
from sudokupool.ratelimit.store import LimiterUnavailable
from sudokupool.ratelimit.window import WINDOW_SECONDS, Clock, Decision, decide, wall_clock, window_index
from sudokupool.services.outages import OutageLog, redis_outages
from sudokupool.services.redisclient import Client, Mode, cluster_hint, cluster_reply, connect, server_name, stale

logger = logging.getLogger(__name__)

# KEYS: the counters; ARGV[1]: their time to live; ARGV[i + 1]: the hits to add to KEYS[i].
_HIT_SCRIPT = """
local ttl = ARGV[1]
local totals = {}
for i, key in ipairs(KEYS) do
    local hits = tonumber(ARGV[i + 1])
    local total = redis.call('INCRBY', key, hits)
    if total == hits then
        redis.call('EXPIRE', key, ttl)
    end
    totals[i] = total
end
return totals
"""

# A window plus a minute of clock skew.
_KEY_TTL = 2 * WINDOW_SECONDS

# The refused identities noted per window are bounded: past this many, refusals ask Redis again.
_MAX_REFUSED = 100_000

# What a waiting hit receives when its batch could not be counted.
_FAILED = -1

Batch = dict[str, list["asyncio.Future[int]"]]


class RedisStore:
    """Fixed-window counts shared by every instance through one Redis or one Redis Cluster."""

    def __init__(
        self,
        client: Client,
        *,
        failure_mode: str = "open",
        clock: Clock = wall_clock,
        key_prefix: str = "sudokupool:rl:",
        retry_interval: float = 1.0,
        outages: OutageLog | None = None,
        server: str = "redis",
    ) -> None:
        if failure_mode not in ("open", "closed"):
            raise ValueError(f"failure_mode must be 'open' or 'closed', not {failure_mode!r}")
        self._client = client
        self._cluster = isinstance(client, RedisCluster)
        self._script = client.register_script(_HIT_SCRIPT)
        self._closed_on_failure = failure_mode == "closed"
        self._clock = clock
        self._prefix = key_prefix
        self._retry_interval = retry_interval
        self._outages = outages if outages is not None else redis_outages()
        self._server = server
        self._fallback = MemoryStore(clock=clock)
        self._down_until: dict[str, float] = {}
        self._batch: Batch = {}
        self._sender: asyncio.Task[None] | None = None
        self._connection: AbstractConnection | None = None
        # Cluster only: ask for the map of the cluster again after a node failed (see _send_cluster).
        self._refresh_map = False
        self._next_refresh = 0.0
        self._window = -1
        self._refused: set[str] = set()
        #: Round trips to Redis so far (a batch to each node counts one), for tests and benchmarks.
        self.calls = 0
        #: Requests counted in process memory because Redis failed (failure mode open), for the metrics.
        self.fallbacks = 0

    @classmethod
    def from_url(
        cls, url: str, *, timeout: float, failure_mode: str = "open", mode: Mode | str = "single", **options: Any
    ) -> RedisStore:
        """A store with its own client for ``url`` (see :func:`~sudokupool.services.redisclient.connect`)."""
        client = connect(url, timeout=timeout, mode=mode)
        return cls(client, failure_mode=failure_mode, server=server_name(url), **options)

    async def hit(self, identity: str, limit: int, cost: int = 1) -> Decision:
        """Count one request of ``identity`` in Redis, as ``cost`` requests (``cost`` hits of one batch; the
        decision is the last one's); on failure apply the failure mode."""
        now = self._clock()
        window = window_index(now)
        if window != self._window:
            self._window = window
            self._refused = set()
        elif identity in self._refused:
            return decide(limit + 1, limit, now)
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[int]] = [loop.create_future() for _ in range(cost)]
        future = futures[-1]
        key = f"{self._prefix}{window}:{identity}"
        waiting = self._batch.get(key)
        if waiting is None:
            self._batch[key] = futures
        else:
            waiting.extend(futures)
        if self._sender is None:
            # The sender starts at the next turn of the event loop, after every request of this turn
            # has added its hit; while it waits for Redis, the hits of later turns gather for its next batch.
            self._sender = asyncio.create_task(self._send_batches())
        count = await future
        if count == _FAILED:
            return self._unavailable(identity, limit, cost)
        decision = decide(count, limit, now)
        if not decision.allowed and window == self._window and len(self._refused) < _MAX_REFUSED:
            self._refused.add(identity)
        return decision

    async def _send_batches(self) -> None:
        try:
            while self._batch:
                batch, self._batch = self._batch, {}
                try:
                    if self._cluster:
                        await self._send_cluster(batch)
                    else:
                        await self._send(self._server, batch, self._client)
                except BaseException:
                    # Cancelled (shutdown) or a bug: no waiting request may hang on it.
                    _settle(batch, None)
                    raise
        finally:
            self._sender = None

    async def _send_cluster(self, batch: Batch) -> None:
        client = self._client
        assert isinstance(client, RedisCluster)
        now = time.monotonic()
        if now < self._down_until.get(self._server, 0.0):
            # No map of the cluster at the last try: skip it like a failed server.
            self._outages.skipped(sum(map(len, batch.values())), server=self._server)
            _settle(batch, None)
            return
        if self._refresh_map and now >= self._next_refresh:
            # A node failed: ask the cluster for its map again (a replica may have taken over its slots),
            # at most once per retry interval. Without a new map the old one serves.
            self._next_refresh = now + self._retry_interval
            try:
                await client.nodes_manager.initialize()
                self._refresh_map = False
            except Exception:
                logger.debug("could not refresh the Redis Cluster map", exc_info=True)
        try:
            await client.initialize()  # the first map, on first use
            nodes: dict[str, tuple[ClusterNode, Batch]] = {}
            for key, futures in batch.items():
                node = client.get_node_from_key(key)
                assert node is not None
                nodes.setdefault(node.name, (node, {}))[1][key] = futures
        except Exception as exc:
            # No map of the cluster (every node it knows is unreachable, or slots are uncovered): not one
            # node to probe; the next batch that gets a map ends this outage.
            self._failed(self._server, exc, batch, probe=False)
            return
        await asyncio.gather(*(self._send(name, part, node) for name, (node, part) in nodes.items()))

    async def _send(self, server: str, batch: Batch, node: Any) -> None:
        """Count ``batch`` on ``server`` (the client, or one node of the cluster) and settle its hits."""
        if time.monotonic() < self._down_until.get(server, 0.0):
            self._outages.skipped(sum(map(len, batch.values())), server=server)
            _settle(batch, None)
            return
        try:
            try:
                totals = await self._count(batch, node)
            except Exception as exc:
                if not stale(exc):
                    raise
                # A connection from before a restart: once more on a fresh one (the single server's was
                # dropped by _call; a node's spare connections may be as old, so they go too).
                if self._cluster:
                    await node.disconnect_free_connections()
                totals = await self._count(batch, node)
        except Exception as exc:
            # Whatever Redis does (refused, timed out, out of memory, a script error), it must not become a 500.
            if not self._cluster and cluster_reply(exc):
                # The server answers, as a cluster node: a setting to change, not an outage to log twice a second.
                self._outages.configuration_error(cluster_hint(server))
                _settle(batch, None)
                return
            self._failed(server, exc, batch, probe=not isinstance(exc, ResponseError))
            return
        self._down_until.pop(server, None)
        self._outages.recovered(server)
        _settle(batch, totals)

    async def _count(self, batch: Batch, node: Any) -> list[int]:
        """The new totals of the batch's keys, in order: one script call, or one pipeline on a cluster node."""
        keys = list(batch)
        hits = [len(futures) for futures in batch.values()]
        self.calls += 1
        for attempt in (1, 2):
            try:
                if not self._cluster:
                    totals: list[int] = await self._call("EVALSHA", self._script.sha, len(keys), *keys, _KEY_TTL, *hits)
                    return totals
                pipe = self._client.pipeline()
                for key, n in zip(keys, hits, strict=True):
                    # Through execute_command: redis-py blocks its evalsha method on cluster pipelines, because
                    # a script may name keys of several slots. This one names one key, routed by that key.
                    pipe.execute_command("EVALSHA", self._script.sha, 1, key, _KEY_TTL, n)
                results = await pipe.execute(raise_on_error=False)
                for result in results:
                    # Raised as it came: with raise_on_error the message would quote the key, an identity.
                    if isinstance(result, Exception):
                        raise result
                return [total for (total,) in results]
            except NoScriptError:
                # A server that restarted, or a node that has not run the script yet: load it there once.
                if attempt == 2:
                    raise
                if self._cluster:
                    await self._client.execute_command("SCRIPT LOAD", _HIT_SCRIPT, target_nodes=node)
                else:
                    await self._call("SCRIPT", "LOAD", _HIT_SCRIPT)
        raise AssertionError("unreachable")

    async def _call(self, *args: str | int) -> Any:
        """One command on this store's own connection to a single server (opened on first use, and again
        after a failure).

        Batches go one at a time, so one connection is enough, and talking to it directly costs less CPU than
        a call through the client, with its pool, retry and bookkeeping layers (docs/benchmarks.md, "Figures
        the code's design rests on").
        """
        connection = self._connection
        if connection is None:
            assert isinstance(self._client, redis.asyncio.Redis)
            connection = self._connection = self._client.connection_pool.make_connection()  # type: ignore[no-untyped-call]
        try:
            if not connection.is_connected:
                await connection.connect()
            await connection.send_packed_command(connection.pack_command(*args), check_health=False)
            return await connection.read_response()
        except ResponseError:
            raise  # the server answered: the connection is fine
        except BaseException:
            await connection.disconnect()
            raise

    def _failed(self, server: str, exc: Exception, batch: Batch, *, probe: bool) -> None:
        self._down_until[server] = time.monotonic() + self._retry_interval
        self._refresh_map = self._cluster
        self._outages.failed("rate limiter", error=exc, server=server, probe=probe)
        self._outages.skipped(sum(map(len, batch.values())), server=server)
        _settle(batch, None)

    def _unavailable(self, identity: str, limit: int, cost: int = 1) -> Decision:
        if self._closed_on_failure:
            raise LimiterUnavailable("rate limiter unavailable")
        self.fallbacks += 1
        return self._fallback.hit_now(identity, limit, cost)

    async def aclose(self) -> None:
        sender = self._sender
        if sender is not None:
            await asyncio.gather(sender, return_exceptions=True)
        if self._connection is not None:
            await self._connection.disconnect()
        await self._outages.aclose()
        await self._client.aclose()


def _settle(batch: Batch, totals: list[int] | None) -> None:
    """Give each waiting hit its count: ``total - n + 1 .. total`` for the ``n`` hits of a key, or failure."""
    for index, futures in enumerate(batch.values()):
        first = _FAILED if totals is None else int(totals[index]) - len(futures) + 1
        for offset, future in enumerate(futures):
            if not future.done():  # the request may have been cancelled meanwhile
                future.set_result(_FAILED if totals is None else first + offset)
