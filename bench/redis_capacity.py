"""What the shared limiter costs Redis: valkey CPU per counted request and per call, and memory per counter.

    python bench/redis_capacity.py [--rounds 2000] [--batch 32]

Starts a valkey-server and a three-node Valkey cluster (tests/valkey.py) on loopback ports, and counts
batches of ``--batch`` hits of distinct identities (the worst case: every request a different client,
so every hit is its own counter) through :class:`~sudokupool.ratelimit.redis.RedisStore`, as an instance
does when that many requests wait at the same moment. Reports the CPU the valkey processes spent (from
/proc), per hit and per call, and the memory of one counter (``MEMORY USAGE``). The figures feed the
capacity note in docs/operations.md. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import redis  # noqa: E402
from tests.valkey import ValkeyCluster, ValkeyServer  # noqa: E402

from servers import cpu_seconds  # noqa: E402
from sudokupool.ratelimit.redis import RedisStore  # noqa: E402


async def load(store: RedisStore, *, rounds: int, batch: int) -> tuple[int, float]:
    """Hits counted and the seconds it took: ``rounds`` batches of ``batch`` distinct identities."""
    started = time.perf_counter()
    for n in range(rounds):
        identities = [f"ip:10.{n % 250}.{n // 250 % 250}.{k}" for k in range(batch)]
        await asyncio.gather(*(store.hit(identity, 10**9) for identity in identities))
    return rounds * batch, time.perf_counter() - started


async def measure(url: str, mode: str, pids: list[int], *, rounds: int, batch: int) -> dict[str, float]:
    store = RedisStore.from_url(url, timeout=2.0, mode=mode)
    try:
        await load(store, rounds=50, batch=batch)  # connect, load the script, warm up
        calls = store.calls
        before = sum(cpu_seconds(pid) for pid in pids)
        hits, seconds = await load(store, rounds=rounds, batch=batch)
        used = sum(cpu_seconds(pid) for pid in pids) - before
        calls = store.calls - calls
    finally:
        await store.aclose()
    return {
        "hits_per_second": round(hits / seconds),
        "valkey_cpu_us_per_hit": round(used / hits * 1e6, 2),
        "valkey_cpu_us_per_call": round(used / calls * 1e6, 1),
        "hits_per_call": round(hits / calls, 1),
    }


def counter_bytes(port: int) -> int:
    with redis.Redis(port=port) as client:
        keys = client.keys("sudokupool:rl:*")[:100]
        return round(sum(int(client.memory_usage(key) or 0) for key in keys) / len(keys))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sudokupool-redis-") as tmp:
        single_dir, cluster_dir = Path(tmp) / "single", Path(tmp) / "cluster"
        single_dir.mkdir()
        cluster_dir.mkdir()
        single = ValkeyServer(single_dir)
        cluster = ValkeyCluster(cluster_dir)
        single.start()
        cluster.start()
        try:
            for _ in range(2):  # interleaved, twice: the machine is shared
                for mode, url, nodes in (("single", single.url, [single]), ("cluster", cluster.url, cluster.nodes)):
                    pids = [node.process.pid for node in nodes if node.process is not None]
                    found = asyncio.run(measure(url, mode, pids, rounds=args.rounds, batch=args.batch))
                    print(f"{mode:>7}: {found}")
            print(f"one counter: {counter_bytes(single.port)} bytes (MEMORY USAGE)")
        finally:
            single.stop()
            cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
