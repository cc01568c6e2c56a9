"""In-process costs, no sockets: the app, the rate limiter and uvicorn's protocol."""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio
import uvloop
from uvicorn.config import Config
from uvicorn.server import ServerState

from bench.child import receive, scope, send
from bench.harness import ROOT, Children, interleave, options, pool_dir, pool_ids
from sudokupool.api.dispatch import ApiRouter
from sudokupool.api.endpoints import Reply
from sudokupool.api.limiter import RateLimiter
from sudokupool.ratelimit import Limits, MemoryStore
from sudokupool.ratelimit.keys import Keyring, digest
from sudokupool.ratelimit.redis import RedisStore
from sudokupool.ratelimit.store import LimiterStore
from sudokupool.serving.protocol import BoundedHttpToolsProtocol


def app_cost_main(argv: list[str] | None = None) -> int:
    """The app's own CPU per answer, with no server and no socket: the ASGI app called in a loop on the demo pool.

    What is left of a request when the server's part (HTTP parsing, writing, the event loop's I/O) is taken away:
    the front, the client address, the limiter (on, never tripping), the router and the handler's prepared bytes,
    in a process of its own (``python -m bench.child app``, as ``python -m bench ab metrics`` runs it). Each path
    is called as an identity client and as a gzip client; CPU time per call, the median of the rounds.
    """
    parser = options(app_cost_main.__doc__, rounds=3)
    parser.add_argument("--requests", type=int, default=20000)
    args = parser.parse_args(argv)
    cases = {
        "v2 solution": "/api/v2/puzzles/{id}/solution",
        "v2 by id, gzip client": "/api/v2/puzzles/{id} gzip",
        "v2 by id, identity client": "/api/v2/puzzles/{id}",
        "v2 random, gzip client": "/api/v2/puzzles/random gzip",
        "v2 random, identity client": "/api/v2/puzzles/random",
        "v1 by id, gzip client (no limiter)": "/api/v1/puzzles/{id} gzip",
    }
    directory = pool_dir("demo")
    env = {"SUDOKUPOOL_EXPORTS": str(directory), "SUDOKUPOOL_METRICS_PORT": ""}
    with Children({"this": (ROOT / "src", env)}, "app", str(pool_ids(directory))) as child:
        found = interleave(
            list(cases), args.rounds, lambda case, _: child.ask("this", f"{args.requests} {cases[case]}")
        )
    print("| path | app CPU µs per answer (median) |\n|---|---:|")
    for name, values in found.items():
        print(f"| {name} | {statistics.median(values):.1f} |")
    return 0


def collector_main(argv: list[str] | None = None) -> int:
    """The pause of a full collection of the cyclic garbage collector in a started worker, with what startup left
    out of collections (``gc.freeze``: the modules and the app) left out, and put back for it, in one process
    (``python -m bench.child collector``, the demo pool), the order rotated over the rounds: CPU ms per collection
    (the event loop waits that long), and the objects it visits; the median of the rounds and their ratio."""
    parser = options(collector_main.__doc__, rounds=15)
    args = parser.parse_args(argv)
    env = {"SUDOKUPOOL_EXPORTS": str(pool_dir("demo")), "SUDOKUPOOL_METRICS_PORT": ""}
    with Children({"this": (ROOT / "src", env)}, "collector") as child:
        found = interleave(["unfrozen", "frozen"], args.rounds, lambda case, _: child.ask("this", case))
    ms = {case: statistics.median(ms for ms, _ in values) for case, values in found.items()}
    visited = {case: statistics.median(n for _, n in values) for case, values in found.items()}
    print("| a full collection | CPU ms (median) | objects visited |\n|---|---:|---:|")
    for case in ("unfrozen", "frozen"):
        label = "startup's objects left out (this)" if case == "frozen" else "startup's objects put back"
        print(f"| {label} | {ms[case]:.2f} | {visited[case]:,.0f} |")
    print(f"ratio left out / put back: {ms['frozen'] / ms['unfrozen']:.3f}x")
    return 0


# --- limiter -------------------------------------------------------------------------------------------------------


def flood(max_identities: int, identities: list[str]) -> None:
    """The process-local store's memory and time per hit under a flood of distinct identities, a known client's
    hit during it, and the first request of the next window (which drops the old one)."""
    now = [1_800_000_000 - 1_800_000_000 % 60 + 1.0]  # a fake clock, one second into a window
    store = MemoryStore(clock=lambda: now[0], max_identities=max_identities)
    gc.collect()
    tracemalloc.start()
    # The identity string is built per request as the middleware builds it, so the store keeps it alive.
    for address in identities:
        store.hit_now("ip:" + address, 60)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    label = f"cap {max_identities:>9,}"
    print(f"{label}: memory after {len(identities):,} distinct identities: "
          f"{current / 2**20:6.1f} MiB (peak {peak / 2**20:.1f})")  # fmt: skip
    store = MemoryStore(clock=lambda: now[0], max_identities=max_identities)
    started = time.perf_counter()
    for address in identities:
        store.hit_now("ip:" + address, 60)
    flood_ns = (time.perf_counter() - started) / len(identities) * 1e9
    samples = []
    for _ in range(20):
        started = time.perf_counter()
        for _ in range(10_000):
            store.hit_now("ip:192.0.2.1", 10**9)
        samples.append((time.perf_counter() - started) / 10_000 * 1e9)
    now[0] += 60
    started = time.perf_counter()
    store.hit_now("ip:192.0.2.1", 60)
    print(f"{label}: {flood_ns:6.0f} ns per new identity, {statistics.median(samples):5.0f} ns per hit of a known one "
          f"during the flood, {(time.perf_counter() - started) * 1e3:.1f} ms for the first request of the next "
          "window (drops the old one)")  # fmt: skip


async def cpu_us(call: Callable[[], Awaitable[Any]], calls: int, warm_up: int = 0) -> float:
    """CPU µs per call of ``call``, ``calls`` times after ``warm_up`` untimed calls."""
    for _ in range(warm_up):
        await call()
    started = time.process_time()
    for _ in range(calls):
        await call()
    return (time.process_time() - started) / calls * 1e6


async def middleware_overhead(store: LimiterStore, label: str, calls: int) -> None:
    """The /api/v2 router's CPU per request without a limiter and what the limiter adds, best of 5."""
    keyring = Keyring.parse([(f"{digest('bench-key')}:pro", "bench")])
    routes = {"/puzzles/random": lambda scope, param: Reply(200, [(b"content-type", b"application/json")], b"{}")}
    limiter = RateLimiter(store=store, keyring=keyring, limits=Limits(anonymous=10**9, keyed=10**9, pro=10**9))
    plain, limited = ApiRouter("/api/v2", routes), ApiRouter("/api/v2", routes, limiter=limiter)
    headers = [(b"host", b"example.org"), (b"user-agent", b"bench")]
    cases = {
        "without a limiter": (plain, scope("/api/v2/puzzles/random", headers)),
        "anonymous": (limited, scope("/api/v2/puzzles/random", headers)),
        "key in header": (limited, scope("/api/v2/puzzles/random", [*headers, (b"x-api-key", b"bench-key")])),
        "key in query": (limited, scope("/api/v2/puzzles/random", headers, b"difficulty=easy&api_key=bench-key")),
    }
    base = 0.0
    for name, (router, request) in cases.items():

        async def call(router: ApiRouter = router, request: dict[str, Any] = request) -> None:
            await router(dict(request), receive, send)

        best = min([await cpu_us(call, calls) for _ in range(5)])
        base = base or best
        print(f"{label}: the router, {name:<17}: {best:.2f} µs CPU per request (+{best - base:.2f} µs)")


async def redis_costs(url: str, calls: int = 3000) -> None:
    """The router through the Redis store; one Redis call through redis-py's client against one on a connection of
    the caller's own (what the Redis store does); a hit when 32 wait together (one batch) in the Redis and the
    process-local store."""
    store = RedisStore.from_url(url, timeout=1.0)
    await middleware_overhead(store, "redis", 2_000)
    await store.aclose()
    client = redis.asyncio.Redis.from_url(url)
    connection = client.connection_pool.make_connection()  # type: ignore[no-untyped-call]
    await connection.connect()

    async def through_client() -> None:
        await client.execute_command("GET", "bench")

    async def own_connection() -> None:
        await connection.send_packed_command(connection.pack_command("GET", "bench"))
        await connection.read_response()

    for name, call in (("through the client", through_client), ("own connection", own_connection)) * 2:
        print(f"redis: one GET {name:>18}: {await cpu_us(call, calls, 200):6.1f} µs CPU")
    await connection.disconnect()
    await client.aclose()
    for label, store in (("memory", MemoryStore()), ("redis", RedisStore.from_url(url, timeout=1.0))) * 2:

        async def batch(store: LimiterStore = store) -> None:
            await asyncio.gather(*(store.hit("key:bench", 10**9) for _ in range(32)))

        print(f"{label}: a hit, 32 waiting together: {await cpu_us(batch, calls, 100) / 32:5.1f} µs CPU")
        await store.aclose()


def limiter_main(argv: list[str] | None = None) -> int:
    """The rate limiter's cost: memory and time per request of the process-local store under a flood of distinct
    identities (fake clock), the window rollover, and the /api/v2 router's CPU per request with and without it.

    With ``--redis`` also the Redis store through the router, one Redis call through redis-py's client against one on
    a connection of the caller's own (what the Redis store does), and the store's cost per hit when 32 hits wait
    together (one batch) against the process-local store's.
    """
    parser = options(limiter_main.__doc__)
    parser.add_argument("--identities", type=int, default=1_000_000)
    parser.add_argument("--redis", default="", metavar="URL", help="also measure the Redis store at this URL")
    args = parser.parse_args(argv)
    addresses = [
        f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}" if n < 2**24 else str(n) for n in range(args.identities)
    ]
    flood(100_000, addresses)
    flood(args.identities * 2, addresses)
    asyncio.run(middleware_overhead(MemoryStore(), "memory", 50_000))
    if args.redis:
        asyncio.run(redis_costs(args.redis))
    return 0


# --- protocol_cost -------------------------------------------------------------------------------------------------

REQUEST = (
    b"GET /api/v2/puzzles/ABCDEFGHJKMNP HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nUser-Agent: wrk\r\nX-API-Key: bench\r\n\r\n"
)
HEADERS = [
    (b"content-type", b"application/json"), (b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding"),
    (b"etag", b'W/"abcdef0123456789"'), (b"cache-control", b"public, max-age=3600"),
    (b"content-length", b"3765"), (b"x-ratelimit-limit", b"1000000000"),
    (b"x-ratelimit-remaining", b"999999"), (b"x-ratelimit-reset", b"42"),
]  # fmt: skip
CORS = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-expose-headers", b"X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, "
     b"ETag"),
]  # fmt: skip
BODY = b"x" * 3765


class Transport(asyncio.Transport):
    """Takes every write and drops it; never pauses, never closes."""

    def write(self, data: Any) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass


async def protocol_cost_measure(requests: int, rounds: int, headers: list[tuple[bytes, bytes]]) -> list[float]:
    done = asyncio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": list(headers)})
        await send({"type": "http.response.body", "body": BODY})
        done.set()

    config = Config(app=app, loop="none", log_level="warning", access_log=False, server_header=False)
    config.load()
    protocol = BoundedHttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
    protocol.connection_made(Transport({"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}))
    found = []
    for _ in range(rounds):
        begin = time.process_time()
        for _ in range(requests):
            done.clear()
            protocol.data_received(REQUEST)
            await done.wait()
        found.append((time.process_time() - begin) / requests * 1e6)
    return found


def protocol_cost_main(argv: list[str] | None = None) -> int:
    """CPU per request of the service's uvicorn protocol alone: no socket, no app work, in one process.

    ``sudokupool.serving.protocol.BoundedHttpToolsProtocol`` on a stand-in transport (writes are counted and
    dropped) is fed a by-id request, one read per request, and answers it from a trivial app with the headers of a
    v2 by-id answer (``--cors``: and the two CORS headers every answer carries). CPU time per request, median of the
    rounds: what the protocol's parsing, bounds, timers and header writing cost, without the network and the app
    that swamp it in a wrk run on a shared machine. ``PYTHONPATH=<a checkout of an earlier commit>/src``: that
    commit's protocol.
    """
    parser = options(protocol_cost_main.__doc__, rounds=5)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--cors", action="store_true", help="answers carry the two CORS headers too")
    args = parser.parse_args(argv)
    rounds = uvloop.run(protocol_cost_measure(args.requests, args.rounds, HEADERS + (CORS if args.cors else [])))
    shown = ", ".join(f"{value:.2f}" for value in rounds)
    what = " (CORS headers)" if args.cors else ""
    print(f"protocol CPU µs per request{what}: median {statistics.median(rounds):.2f} ({shown})")
    return 0
