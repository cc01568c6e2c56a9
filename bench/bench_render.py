"""Benchmark the PNG renderer and its cache.

Measures, for many different valid puzzles: the cold render time per image (render_png called
directly, median and p90) and the PNG byte sizes for each zlib level in --levels (7 is the default
in render.py, 9 is Pillow's optimize=True); cold render throughput with 1 and 2 worker threads and
2 worker processes (the PNG encoder holds the GIL, so threads do not add up); cold renders through
RenderCache (executor hop included); the event loop's lag while renders run in the cache's threads;
cached get throughput; and a burst of concurrent gets for one uncached key.

    python bench/bench_render.py [--puzzles 200] [--size 480] [--levels 7,9] [--hits 200000] [--burst 1000]

The HTTP-level comparison with the JSON by-id path belongs with the app benchmark.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import random
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
from functools import partial

from sudokupool.images.cache import RenderCache
from sudokupool.images.render import PNG_COMPRESS_LEVEL, VARIANTS, Variant, render_png

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


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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


if __name__ == "__main__":
    main()
