"""In-process costs, no sockets: the app, the metrics, the rate limiter, rendering, uvicorn's protocol and the
event loop's lag."""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import gc
import os
import random
import shlex
import statistics
import sys
import time
import tracemalloc
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import uvloop
from starlette.types import Message, Scope
from uvicorn.config import Config
from uvicorn.server import ServerState

from bench.harness import OUT, latest_export, pool_dir, sample_ids
from sudokupool.api.endpoints import Reply
from sudokupool.api.gate import RateLimiter
from sudokupool.api.router import ApiRouter
from sudokupool.images.cache import RenderCache
from sudokupool.images.render import PNG_COMPRESS_LEVEL, VARIANTS, Variant, render_png
from sudokupool.keys import Keyring, digest
from sudokupool.loading.loader import LoadLimits, load_latest
from sudokupool.ratelimit import Limits, MemoryStore
from sudokupool.ratelimit.store import LimiterStore
from sudokupool.server import BoundedHttpToolsProtocol
from sudokupool.storage.local import LocalStore

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


# --- app_cost ------------------------------------------------------------------------------------------------------

APP_COST_DOC = """\
The app's own CPU per answer, with no server and no socket: the ASGI app called in a loop on the demo pool.

    python -m bench app-cost [--requests 20000] [--rounds 3]

What is left of a request when the server's part (HTTP parsing, writing, the event loop's I/O) is taken
away: the front, the client address, the limiter (on, never tripping), the router and the handler's
prepared bytes. Each path is called with the headers of an identity client and of a gzip client; the
figure is CPU time (``time.process_time``) per call, the median of the rounds.
"""


def scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000), "scheme": "http", "method": "GET", "root_path": "", "path": path,
            "raw_path": path.encode(), "query_string": b"", "headers": headers}  # fmt: skip


async def app_cost_measure(requests: int, rounds: int) -> dict[str, float]:
    os.environ.update(
        SUDOKUPOOL_EXPORTS=str(ROOT / "snapshots"), SUDOKUPOOL_LIMIT_ANONYMOUS="1000000000",
        SUDOKUPOOL_SYNC_INTERVAL="0", SUDOKUPOOL_LOG_LEVEL="warning",
    )  # fmt: skip
    from sudokupool.app import create_app

    app = create_app()
    startup: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await startup.put({"type": "lifespan.startup"})
    started = asyncio.Event()

    async def lifespan_send(message: dict[str, Any]) -> None:
        if message["type"].startswith("lifespan.startup"):
            started.set()

    lifespan = asyncio.create_task(app({"type": "lifespan"}, startup.get, lifespan_send))
    await started.wait()
    OUT.mkdir(exist_ok=True)
    sampled = sample_ids(latest_export(ROOT / "snapshots"), OUT / "ids-snapshots.txt")
    ids = random.choices(sampled.read_text().split(), k=requests)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        return None

    identity = [(b"host", b"127.0.0.1:8000")]
    gzipped = [*identity, (b"accept-encoding", b"gzip")]
    cases = {
        "v2 solution": ("/api/v2/puzzles/{id}/solution", identity),
        "v2 by id, gzip client": ("/api/v2/puzzles/{id}", gzipped),
        "v2 by id, identity client": ("/api/v2/puzzles/{id}", identity),
        "v2 random, gzip client": ("/api/v2/puzzles/random", gzipped),
        "v2 random, identity client": ("/api/v2/puzzles/random", identity),
        "v1 by id, gzip client (no limiter)": ("/api/v1/puzzles/{id}", gzipped),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (template, headers) in cases.items():
            scopes = [scope(template.replace("{id}", i), headers) for i in ids]
            begin = time.process_time()
            for s in scopes:
                await app(s, receive, send)
            times[name].append((time.process_time() - begin) / len(scopes) * 1e6)
    await startup.put({"type": "lifespan.shutdown"})
    await lifespan
    return {name: round(statistics.median(values), 1) for name, values in times.items()}


def app_cost_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=APP_COST_DOC.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    results = asyncio.run(app_cost_measure(args.requests, args.rounds))
    print("| path | app CPU µs per answer (median) |\n|---|---:|")
    for name, value in results.items():
        print(f"| {name} | {value} |")
    return 0


def run_app_cost() -> int:
    """``python -m bench app-cost``."""
    return app_cost_main()


# --- bench_limiter -------------------------------------------------------------------------------------------------

BENCH_LIMITER_DOC = """\
The rate limiter's cost: memory and time per request of the process-local store under a flood of
distinct identities, the window rollover, and the middleware's overhead per request.

    python -m bench limiter [--identities 1000000] [--redis redis://127.0.0.1:6379/0]

With ``--redis`` it also measures the CPU of one Redis call through redis-py's client against one on a
connection of the caller's own (what the Redis store does), and the store's cost per hit when 32 hits
wait together (one batch) against the process-local store.

Not a test: numbers depend on the machine. See docs for reported results.
"""

MINUTE = 1_800_000_000 - 1_800_000_000 % 60


class Clock:
    def __init__(self) -> None:
        self.now = MINUTE + 1.0

    def __call__(self) -> float:
        return self.now


def addresses(count: int) -> list[str]:
    return [f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}" if n < 2**24 else str(n) for n in range(count)]


def flood(max_identities: int, identities: list[str]) -> None:
    clock = Clock()
    store = MemoryStore(clock=clock, max_identities=max_identities)
    gc.collect()
    tracemalloc.start()
    # The identity string is built per request as the middleware builds it, so the store keeps it alive.
    for address in identities:
        store.hit_now("ip:" + address, 60)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    label = f"cap {max_identities:>9,}"
    print(
        f"{label}: memory after {len(identities):,} distinct identities: "
        f"{current / 2**20:6.1f} MiB (peak {peak / 2**20:.1f})"
    )

    store = MemoryStore(clock=clock, max_identities=max_identities)
    started = time.perf_counter()
    for address in identities:
        store.hit_now("ip:" + address, 60)
    flood_ns = (time.perf_counter() - started) / len(identities) * 1e9
    # A regular client during the flood: its identity is already counted (or in the overflow).
    samples = []
    for _ in range(20):
        started = time.perf_counter()
        for _ in range(10_000):
            store.hit_now("ip:192.0.2.1", 10**9)
        samples.append((time.perf_counter() - started) / 10_000 * 1e9)
    clock.now += 60
    started = time.perf_counter()
    store.hit_now("ip:192.0.2.1", 60)
    rollover_ms = (time.perf_counter() - started) * 1e3
    print(
        f"{label}: {flood_ns:6.0f} ns per new identity, {statistics.median(samples):5.0f} ns per hit of a known one "
        f"during the flood, {rollover_ms:.1f} ms for the first request of the next window (drops the old one)"
    )


def _ok(scope: Scope, param: str | None) -> Reply:
    return Reply(200, [(b"content-type", b"application/json")], b"{}")


async def _receive() -> Message:
    return {"type": "http.request"}


async def _send(message: Message) -> None:
    return None


def scope_of(headers: list[tuple[bytes, bytes]], query: bytes = b"") -> Scope:
    return {
        "type": "http",
        "method": "GET",
        "path": "/api/v2/puzzles/random",
        "query_string": query,
        "headers": [(b"host", b"example.org"), (b"user-agent", b"bench"), (b"accept", b"*/*"), *headers],
        "client": ("192.0.2.1", 1234),
    }


async def per_request(app: ApiRouter, scope: Scope, rounds: int) -> float:
    call = app
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(rounds):
            await call(dict(scope), _receive, _send)
        best = min(best, (time.perf_counter() - started) / rounds * 1e6)
    return best


async def middleware_overhead(store: LimiterStore, label: str, rounds: int) -> None:
    key = "bench-key"
    keyring = Keyring.parse([(f"{digest(key)}:pro", "bench")])
    limits = Limits(anonymous=10**9, keyed=10**9, pro=10**9)
    routes = {"/puzzles/random": _ok}
    plain = ApiRouter("/api/v2", routes)
    limited = ApiRouter("/api/v2", routes, limiter=RateLimiter(store=store, keyring=keyring, limits=limits))
    base = await per_request(plain, scope_of([]), rounds)
    print(f"{label}: the router without a limiter {base:.2f} µs per request")
    cases = {
        "anonymous": scope_of([]),
        "key in header": scope_of([(b"x-api-key", key.encode())]),
        "key in query": scope_of([], b"difficulty=easy&api_key=" + key.encode()),
    }
    for name, scope in cases.items():
        cost = await per_request(limited, scope, rounds)
        print(f"{label}: with limiter, {name:<13}: {cost:.2f} µs per request (+{cost - base:.2f} µs)")


async def redis_costs(url: str, rounds: int = 3000) -> None:
    import redis.asyncio

    from sudokupool.ratelimit.redis import RedisStore

    client = redis.asyncio.Redis.from_url(url)
    connection = client.connection_pool.make_connection()  # type: ignore[no-untyped-call]
    await connection.connect()

    async def through_client() -> None:
        await client.execute_command("GET", "bench")

    async def own_connection() -> None:
        await connection.send_packed_command(connection.pack_command("GET", "bench"))
        await connection.read_response()

    for name, call in (("through the client", through_client), ("own connection", own_connection)) * 2:
        for _ in range(200):
            await call()
        started = time.process_time()
        for _ in range(rounds):
            await call()
        print(f"redis: one GET {name:>18}: {(time.process_time() - started) / rounds * 1e6:6.1f} µs CPU")
    await connection.disconnect()
    await client.aclose()
    for label, store in (("memory", MemoryStore()), ("redis", RedisStore.from_url(url, timeout=1.0))) * 2:
        for _ in range(100):
            await asyncio.gather(*(store.hit("key:bench", 10**9) for _ in range(32)))
        started = time.process_time()
        for _ in range(rounds):
            await asyncio.gather(*(store.hit("key:bench", 10**9) for _ in range(32)))
        cost = (time.process_time() - started) / rounds / 32 * 1e6
        print(f"{label}: a hit, 32 waiting together: {cost:5.1f} µs CPU")
        await store.aclose()


async def bench_limiter_main() -> None:
    parser = argparse.ArgumentParser(description=BENCH_LIMITER_DOC.split("\n\n")[0])
    parser.add_argument("--identities", type=int, default=1_000_000)
    parser.add_argument("--redis", default="", help="also measure the Redis store at this URL")
    args = parser.parse_args()
    identities = addresses(args.identities)
    flood(100_000, identities)
    flood(args.identities * 2, identities)
    await middleware_overhead(MemoryStore(), "memory", 50_000)
    if args.redis:
        from sudokupool.ratelimit.redis import RedisStore

        store = RedisStore.from_url(args.redis, timeout=1.0)
        try:
            await middleware_overhead(store, "redis", 2_000)
        finally:
            await store.aclose()
        await redis_costs(args.redis)


def run_bench_limiter() -> int:
    """``python -m bench bench-limiter``."""
    asyncio.run(bench_limiter_main())
    return 0


# --- bench_render --------------------------------------------------------------------------------------------------

BENCH_RENDER_DOC = """\
Benchmark the PNG renderer and its cache.

Measures, for many different valid puzzles: the cold render time per image (render_png called
directly, median and p90) and the PNG byte sizes for each zlib level in --levels (7 is the default
in render.py, 9 is Pillow's optimize=True); cold render throughput with 1 and 2 worker threads and
2 worker processes (the PNG encoder holds the GIL, so threads do not add up); cold renders through
RenderCache (executor hop included); the event loop's lag while renders run in the cache's threads;
cached get throughput; and a burst of concurrent gets for one uncached key.

    python -m bench render [--puzzles 200] [--size 480] [--levels 7,9] [--hits 200000] [--burst 1000]

The HTTP-level comparison with the JSON by-id path belongs with the app benchmark.
"""

BASE_SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"


def make_pairs(count: int, seed: int = 7) -> list[tuple[str, str]]:
    """Valid (puzzle, solution) pairs: the base solution under random validity-preserving transforms and masks."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        perm = dict(zip("123456789", rng.sample("123456789", 9), strict=True))
        bands = rng.sample(range(3), 3)
        rows = [b * 3 + r for b in bands for r in rng.sample(range(3), 3)]
        stacks = rng.sample(range(3), 3)
        cols = [s * 3 + c for s in stacks for c in rng.sample(range(3), 3)]
        solution = "".join(perm[BASE_SOLUTION[r * 9 + c]] for r in rows for c in cols)
        keep = set(rng.sample(range(81), rng.randint(22, 40)))
        puzzle = "".join(d if i in keep else "." for i, d in enumerate(solution))
        pairs.append((puzzle, solution))
    return pairs


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def cold_direct(pairs: Sequence[tuple[str, str]], variant: Variant, size: int, level: int) -> None:
    times: list[float] = []
    sizes: list[int] = []
    for puzzle, solution in pairs:
        start = time.perf_counter()
        data = render_png(puzzle, solution, variant, size=size, compress_level=level)
        times.append(time.perf_counter() - start)
        sizes.append(len(data))
    p90 = statistics.quantiles(times, n=10)[-1]
    print(
        f"cold render_png {variant:8} zlib {level}  median {ms(statistics.median(times))}  p90 {ms(p90)}  "
        f"bytes median {int(statistics.median(sizes))} (min {min(sizes)}, max {max(sizes)})"
    )


def _render_job(job: tuple[str, str, Variant, int]) -> bytes:
    puzzle, solution, variant, size = job
    return render_png(puzzle, solution, variant, size=size)


def cold_throughput(pairs: Sequence[tuple[str, str]], size: int, workers: int, processes: bool) -> None:
    jobs = [(p, s, v, size) for p, s in pairs for v in VARIANTS]
    pool: concurrent.futures.Executor
    if processes:
        pool = concurrent.futures.ProcessPoolExecutor(workers)
        list(pool.map(_render_job, jobs[:workers]))  # start the workers and build their glyph tiles first
    else:
        pool = concurrent.futures.ThreadPoolExecutor(workers)
    with pool:
        start = time.perf_counter()
        list(pool.map(_render_job, jobs, chunksize=8 if processes else 1))
        elapsed = time.perf_counter() - start
    kind = "process(es)" if processes else "thread(s)"
    print(f"cold renders, {workers} {kind:11}   {len(jobs) / elapsed:8.0f} images/s over {len(jobs)} images")


async def loop_lag(cache: RenderCache, pairs: Sequence[tuple[str, str]], size: int) -> None:
    """How late a 1 ms ticker on the event loop runs while solution images render through the cache."""
    lateness: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            start = time.perf_counter()
            await asyncio.sleep(0.001)
            lateness.append(time.perf_counter() - start - 0.001)

    tick = asyncio.create_task(ticker())
    renders = [partial(render_png, p, s, "solution", size=size) for p, s in pairs]
    await asyncio.gather(*(cache.get(("lag", i), render) for i, render in enumerate(renders)))
    done.set()
    await tick
    p99 = statistics.quantiles(lateness, n=100)[-1]
    print(
        f"event-loop lag during {len(renders)} concurrent cold renders: median {ms(statistics.median(lateness))}, "
        f"p99 {ms(p99)}, max {ms(max(lateness))}"
    )


async def through_cache(pairs: Sequence[tuple[str, str]], size: int, hits: int, burst: int) -> None:
    with concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="render") as pool:
        cache = RenderCache(64 * 1024 * 1024, executor=pool)
        miss_times: list[float] = []
        for index, (puzzle, solution) in enumerate(pairs):
            start = time.perf_counter()
            await cache.get(("bench", index, "puzzle"), partial(render_png, puzzle, solution, "puzzle", size=size))
            miss_times.append(time.perf_counter() - start)
        print(f"cold cache.get puzzle (executor hop)  median {ms(statistics.median(miss_times))}")
        await loop_lag(cache, pairs, size)

        keys = [("bench", i % len(pairs), "puzzle") for i in range(hits)]

        def never() -> bytes:
            raise AssertionError("a cached key was rendered again")

        start = time.perf_counter()
        for key in keys:
            await cache.get(key, never)
        elapsed = time.perf_counter() - start
        print(f"cached cache.get              {hits / elapsed:10.0f} gets/s  ({elapsed / hits * 1e6:.2f} us per get)")

        render = partial(render_png, *pairs[0], "solution", size=size)
        before = cache.stats()["renders"]
        start = time.perf_counter()
        results = await asyncio.gather(*(cache.get(("burst", 0), render) for _ in range(burst)))
        elapsed = time.perf_counter() - start
        assert len(set(results)) == 1
        renders = cache.stats()["renders"] - before
        print(f"burst of {burst} gets for one uncached key: {renders} render(s), all answered in {ms(elapsed)}")
        print(f"cache stats: {cache.stats()}")


def bench_render_main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=BENCH_RENDER_DOC, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--puzzles", type=int, default=200, help="distinct puzzles to render (default 200)")
    parser.add_argument("--size", type=int, default=480, help="image size in pixels (default 480)")
    parser.add_argument(
        "--levels", default=f"{PNG_COMPRESS_LEVEL},9", help=f"zlib levels to time (default {PNG_COMPRESS_LEVEL},9)"
    )
    parser.add_argument("--hits", type=int, default=200_000, help="cached gets to time (default 200000)")
    parser.add_argument("--burst", type=int, default=1000, help="concurrent gets for one uncached key (default 1000)")
    args = parser.parse_args(argv)
    print("command: python " + shlex.join(sys.argv))
    pairs = make_pairs(args.puzzles)
    render_png(*pairs[0], "solution", size=args.size)  # build the glyph tiles for this size once
    for level in (int(v) for v in args.levels.split(",")):
        for variant in VARIANTS:
            cold_direct(pairs, variant, args.size, level)
    for workers, processes in ((1, False), (2, False), (2, True)):
        cold_throughput(pairs, args.size, workers, processes)
    asyncio.run(through_cache(pairs, args.size, args.hits, args.burst))


def run_bench_render() -> int:
    """``python -m bench bench-render``."""
    bench_render_main()
    return 0


# --- protocol_cost -------------------------------------------------------------------------------------------------

PROTOCOL_COST_DOC = """\
CPU per request of the service's uvicorn protocol alone: no socket, no app work, in one process.

    python -m bench protocol-cost [--requests 20000] [--rounds 5] [--cors]
    PYTHONPATH=<a checkout of an earlier commit>/src python -m bench protocol-cost    # its protocol

``sudokupool.server.BoundedHttpToolsProtocol`` on a stand-in transport (writes are counted and dropped)
is fed a by-id request, one read per request, and answers it from a trivial app with the headers of a
v2 by-id answer (``--cors``: and the two CORS headers every answer carries). The figure is CPU time
(``time.process_time``) per request, median of the rounds: what the protocol's parsing, bounds, timers
and header writing cost, without the network and the app that swamp it in a wrk run on a shared machine.
"""

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
    """Takes every write; never pauses, never closes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: Any) -> None:
        self.writes += 1

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

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name, default)


async def protocol_cost_measure(requests: int, rounds: int, headers: list[tuple[bytes, bytes]]) -> list[float]:
    done = asyncio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": list(headers)})
        await send({"type": "http.response.body", "body": BODY})
        done.set()

    config = Config(app=app, loop="none", log_level="warning", access_log=False, server_header=False)
    config.load()
    protocol = BoundedHttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
    protocol.connection_made(Transport())
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
    parser = argparse.ArgumentParser(description=PROTOCOL_COST_DOC.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cors", action="store_true", help="answers carry the two CORS headers too")
    args = parser.parse_args(argv)
    rounds = uvloop.run(protocol_cost_measure(args.requests, args.rounds, HEADERS + (CORS if args.cors else [])))
    shown = ", ".join(f"{value:.2f}" for value in rounds)
    what = " (CORS headers)" if args.cors else ""
    print(f"protocol CPU µs per request{what}: median {statistics.median(rounds):.2f} ({shown})")
    return 0


def run_protocol_cost() -> int:
    """``python -m bench protocol-cost``."""
    return protocol_cost_main()


# --- loop_lag ------------------------------------------------------------------------------------------------------

LOOP_LAG_DOC = """\
How long a live reload holds up the serving event loop, with no requests to blur it.

    python -m bench loop-lag [--pool 1m-lean] [--niceness 10] [--rounds 2]

Loads the pool's latest export once (as startup does), then, with a probe task on the loop that sleeps
1 ms and records how late it wakes, loads it again as a live sync does (``background=True``, the
loader's thread ``--niceness`` steps nicer) and drops the old pool. An export with a
pack beside it reloads by mapping the pack. It prints the probe's lateness
in steady state and during the reload (p50, p99, p99.9, max) and the reload's time. A late wake-up is
time the loop could not serve a request: the loader's own work on the loop, or the GIL held by one of
its threads. CPU taken by the loader's other processes shows too, but far less (see docs/benchmarks.md,
"Swap under load").
"""


def quantiles(lags: list[float]) -> str:
    ordered = sorted(lags)

    def at(q: float) -> float:
        return ordered[min(int(len(ordered) * q), len(ordered) - 1)]

    return f"p50 {at(0.5):.2f} p99 {at(0.99):.2f} p99.9 {at(0.999):.2f} max {ordered[-1]:.2f} ms"


async def loop_lag_measure(directory: Path, rounds: int, limits: LoadLimits) -> None:
    store = LocalStore(directory)
    pool, _ = await load_latest(store)
    gc.collect()
    lags: list[float] = []
    running = True

    async def probe() -> None:
        while running:
            started = time.perf_counter()
            await asyncio.sleep(0.001)
            lags.append((time.perf_counter() - started - 0.001) * 1000)

    task = asyncio.create_task(probe())
    await asyncio.sleep(2)
    print(f"steady: {quantiles(lags)}", flush=True)
    for n in range(rounds):
        lags.clear()
        started = time.perf_counter()
        fresh, _ = await load_latest(store, background=True, limits=limits)
        seconds = time.perf_counter() - started
        during = list(lags)
        started = time.perf_counter()
        pool = fresh  # the old pool is freed here, on the loop, as a swap does
        freed = (time.perf_counter() - started) * 1000
        print(f"reload {n + 1} ({seconds:.1f} s, {len(during)} wake-ups): {quantiles(during)}; "
              f"freeing the old pool {freed:.0f} ms", flush=True)  # fmt: skip
    running = False
    await task
    del pool


def loop_lag_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=LOOP_LAG_DOC.split("\n\n")[0])
    parser.add_argument("--pool", default="1m-lean")
    parser.add_argument("--niceness", type=int, default=LoadLimits.sync_niceness)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"pool {args.pool}, background loads {args.niceness} steps nicer")
    asyncio.run(loop_lag_measure(pool_dir(args.pool), args.rounds, LoadLimits(sync_niceness=args.niceness)))
    return 0


def run_loop_lag() -> int:
    """``python -m bench loop-lag``."""
    return loop_lag_main()
