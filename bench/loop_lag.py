"""How long a live reload holds up the serving event loop, with no requests to blur it.

    python bench/loop_lag.py [--pool 1m-lean] [--niceness 10] [--rounds 2]

Loads the pool's latest export once (as startup does), then, with a probe task on the loop that sleeps
1 ms and records how late it wakes, loads it again as a live sync does (``background=True``, the
loader's thread ``--niceness`` steps nicer) and drops the old pool. An export with a
pack beside it reloads by mapping the pack. It prints the probe's lateness
in steady state and during the reload (p50, p99, p99.9, max) and the reload's time. A late wake-up is
time the loop could not serve a request: the loader's own work on the loop, or the GIL held by one of
its threads. CPU taken by the loader's other processes shows too, but far less (see docs/benchmarks.md,
"Swap under load").
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import pool_dir  # noqa: E402
from sudokupool.loading.loader import LoadLimits, load_latest  # noqa: E402
from sudokupool.storage.local import LocalStore  # noqa: E402


def quantiles(lags: list[float]) -> str:
    ordered = sorted(lags)

    def at(q: float) -> float:
        return ordered[min(int(len(ordered) * q), len(ordered) - 1)]

    return f"p50 {at(0.5):.2f} p99 {at(0.99):.2f} p99.9 {at(0.999):.2f} max {ordered[-1]:.2f} ms"


async def measure(directory: Path, rounds: int, limits: LoadLimits) -> None:
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default="1m-lean")
    parser.add_argument("--niceness", type=int, default=LoadLimits.sync_niceness)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"pool {args.pool}, background loads {args.niceness} steps nicer")
    asyncio.run(measure(pool_dir(args.pool), args.rounds, LoadLimits(sync_niceness=args.niceness)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
