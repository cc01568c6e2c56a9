"""The rate limiter's cost: memory and time per request of the process-local store under a flood of
distinct identities, the window rollover, and the middleware's overhead per request.

    python bench/bench_limiter.py [--identities 1000000] [--redis redis://127.0.0.1:6379/0]

With ``--redis`` it also measures the CPU of one Redis call through redis-py's client against one on a
connection of the caller's own (what the Redis store does), and the store's cost per hit when 32 hits
wait together (one batch) against the process-local store.

Not a test: numbers depend on the machine. See docs for reported results.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import tracemalloc

from starlette.types import Message, Scope

from sudokupool.api.endpoints import Reply
from sudokupool.api.gate import RateLimiter
from sudokupool.api.router import ApiRouter
from sudokupool.keys import Keyring, digest
from sudokupool.ratelimit import Limits, MemoryStore
from sudokupool.ratelimit.store import LimiterStore

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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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


if __name__ == "__main__":
    asyncio.run(main())
