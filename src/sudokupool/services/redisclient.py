"""The client for the Redis the fleet shares (one server or a Redis Cluster).

The rate limiter and the activity counters both talk to it, on the request path or beside it, so a slow
or absent Redis must cost a bounded time and a bounded amount of logging: a socket timeout on every call,
no retry of a call that timed out, and one log line when a server becomes unreachable and one when it is
back (:func:`sudokupool.services.outages.redis_outages`, which :func:`pinger` lets probe a server that stopped
answering).

One retry is made, on a fresh connection, of a call whose connection failed without a timeout
(:func:`stale`): a connection kept from before a server restarted fails on its first use ("Connection
lost"), and the server is answering again on a new one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import redis.asyncio
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import AskError, ClusterCrossSlotError, ConnectionError, TimeoutError

T = TypeVar("T")

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
    """``host:port`` of a Redis URL (the socket's path for ``unix://``), for log lines and the metrics'
    node label (never the password it may carry)."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return parts.path
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}"


def stale(error: BaseException) -> bool:
    """Whether ``error`` is a connection that failed without a timeout (refused, reset, closed by the
    server): worth one retry on a fresh connection. A timeout is not retried: it would double the time a
    slow server holds a request."""
    return isinstance(error, ConnectionError | ConnectionResetError | BrokenPipeError) and not isinstance(
        error, TimeoutError
    )


async def once_more(call: Callable[[], Awaitable[T]]) -> T:
    """``call()``, and once more if its connection was :func:`stale` (redis-py's clients drop a connection
    that failed, so the second call opens a new one)."""
    try:
        return await call()
    except Exception as exc:
        if not stale(exc):
            raise
    return await call()


def cluster_reply(error: BaseException) -> bool:
    """Whether ``error`` is a Redis Cluster node's answer to a client that does not know it is one: ``MOVED``
    or ``ASK`` (the key lives on another node), ``CROSSSLOT`` (keys of several slots in one command)."""
    return isinstance(error, AskError | ClusterCrossSlotError)


def cluster_hint(server: str) -> str:
    """The one line that says single mode is talking to a cluster node."""
    return (
        f"Redis {server} is a node of a Redis Cluster (it answered MOVED or CROSSSLOT), but SUDOKUPOOL_REDIS_MODE "
        "is single: set SUDOKUPOOL_REDIS_MODE=cluster. Meanwhile the rate limiter answers per its failure mode "
        "for the clients whose counters live on other nodes, and the activity counters count per worker process"
    )


def pinger(url: str, *, timeout: float, mode: Mode | str = "single") -> Callable[[str], Awaitable[None]]:
    """A probe for :func:`~sudokupool.services.outages.redis_outages`: a PING to a server, on a connection of its own
    opened for it and closed after, within ``timeout`` seconds per step.

    Single mode pings the server of ``url`` (whatever name it is given); cluster mode pings the node named
    (``host:port``, as :meth:`RedisCluster.get_node_from_key` names it) with ``url``'s credentials.
    """
    options: dict[str, Any] = {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "retry": Retry(NoBackoff(), 0),
    }
    pool = redis.asyncio.ConnectionPool.from_url(url, **options)
    base = dict(pool.connection_kwargs)
    if mode == "cluster":
        base.pop("db", None)  # a cluster node has database 0 only, and SELECT is not needed for it

    async def ping(server: str) -> None:
        kwargs = dict(base)
        if mode == "cluster":
            host, _, port = server.rpartition(":")
            kwargs["host"], kwargs["port"] = host, int(port)
        connection = pool.connection_class(**kwargs)
        try:
            await connection.connect()  # type: ignore[no-untyped-call]
            await connection.send_command("PING", check_health=False)
            await connection.read_response()
        finally:
            await connection.disconnect()

    return ping
