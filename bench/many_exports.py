"""A directory of many exports: how long a local listing takes, this checkout against an earlier commit.

    python bench/many_exports.py BASELINE [--files 200000] [--rounds 5]

Fills a temporary directory (on the same filesystem as bench/out) with ``--files`` empty files named as
exports, a second apart, one in ten with a pack beside it, and a few names with no real time in them
(``pool-20261399T000000Z.ndjson``). Then, round after round and in turn, a process of each version lists
it as the live sync does (the 16 newest) and as ``pool-exports`` does (the 1,000 newest), in a fresh
process each time so no listing warms the next beyond the kernel's directory cache; then how late a 1 ms
probe on the event loop wakes while a sync's listing runs in its thread ("loop lag max": the GIL the
listing holds; "loop lag idle" is the same probe for as long with nothing else to do). Prints the median
seconds of each, and the ratio this/baseline. A baseline before names with no real time were ignored fails
on them: run it with ``--no-misdated``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

LIMITS = (16, 1000)


def child(directory: Path) -> None:
    import asyncio

    from sudokupool.storage.local import LocalStore

    found: dict[str, float] = {}
    for limit in LIMITS:
        started = time.perf_counter()
        listing = asyncio.run(LocalStore(directory).list_exports(limit))
        found[f"limit {limit}"] = time.perf_counter() - started
        assert len(listing.objects) == limit
    found["loop lag max"], took = asyncio.run(lag(LocalStore(directory)))
    found["loop lag idle"], _ = asyncio.run(lag(None, took))
    print(json.dumps(found))


async def lag(store: Any, seconds: float = 0.0) -> tuple[float, float]:
    """The most a 1 ms probe on the event loop wakes late while a sync's listing (the 16 newest, in a
    thread, as the live sync lists) runs three times, or for ``seconds`` without ``store``: time the loop
    could not have served a request. Returns it and how long the probe ran."""
    import asyncio

    worst, began = 0.0, time.perf_counter()

    async def three() -> None:
        for _ in range(3):
            await store.list_exports(16)

    listing = asyncio.ensure_future(three() if store else asyncio.sleep(seconds))
    while not listing.done():
        asked = time.perf_counter()
        await asyncio.sleep(0.001)
        worst = max(worst, time.perf_counter() - asked - 0.001)
    await listing
    return worst, time.perf_counter() - began


def fill(directory: Path, files: int, *, misdated: bool) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for n in range(files):
        stamp = (start + timedelta(seconds=n)).strftime("%Y%m%dT%H%M%SZ")
        (directory / f"pool-{stamp}.ndjson.gz").touch()
        if n % 10 == 0:
            (directory / f"pool-{stamp}.pack").touch()
    if misdated:
        for name in ("pool-20261399T000000Z.ndjson", "pool-20260230T000000Z.ndjson.gz"):
            (directory / name).touch()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", nargs="?")
    parser.add_argument("--files", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-misdated", action="store_true", help="no names with an impossible time")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    from harness import OUT, baseline_tree

    OUT.mkdir(exist_ok=True)
    results: dict[str, list[dict[str, float]]] = {"this": [], "baseline": []}
    with tempfile.TemporaryDirectory(dir=OUT) as scratch, baseline_tree(args.baseline) as tree:
        directory = Path(scratch)
        fill(directory, args.files, misdated=not args.no_misdated)
        sources = {"this": BENCH.parent / "src", "baseline": tree / "src"}
        for n in range(args.rounds):
            for name in list(sources) if n % 2 == 0 else list(reversed(sources)):
                env = {**os.environ, "PYTHONPATH": str(sources[name])}
                done = subprocess.run(
                    [sys.executable, __file__, "--child", str(directory)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode:
                    print(f"round {n + 1} {name}: failed: {done.stderr.strip().splitlines()[-1]}", flush=True)
                    continue
                found = json.loads(done.stdout.splitlines()[-1])
                results[name].append(found)
                print(f"round {n + 1} {name:8s} " + "  ".join(f"{k} {v:.3f} s" for k, v in found.items()), flush=True)
    print(f"baseline {args.baseline}, {args.files} exports, {args.rounds} rounds, median seconds")
    for key in (*(f"limit {limit}" for limit in LIMITS), "loop lag max", "loop lag idle"):
        this = statistics.median(r[key] for r in results["this"])
        if results["baseline"]:
            base = statistics.median(r[key] for r in results["baseline"])
            print(f"  {key:11s} this {this:.3f}  baseline {base:.3f}  ratio {this / base:.3f}")
        else:
            print(f"  {key:11s} this {this:.3f}  baseline failed every round")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
