"""The image formats side by side: uncached SVG against an uncached PNG render, every cached format against the
baseline's cached PNG, and the render cache's byte budget under a flood of distinct representations.

    python bench/images.py [--baseline main] [--pool snapshots] [--rounds 3] [--seconds 3] [--flood-seconds 10]

Three services of the same pool run at once, started as the harness starts them (the Procfile's command,
``/api/v2`` behind the limiter through a key whose limit never trips):

- **this, no cache** (``SUDOKUPOOL_IMAGE_CACHE_BYTES=0``): every answer is a first render. Targets: PNG, SVG
  and WebP of random ids from the whole pool (the same ids for each format).
- **this** (default budget) and **baseline** (BASELINE checked out in a temporary worktree): every answer is a
  cached one. Targets: 300 ids, rendered once before the rounds, as PNG on both and as SVG and WebP (480 px)
  and a 1000 px PNG on this.

wrk alternates between all targets in the harness's rotated rounds; the script prints the median req/s of
each and the two ratios the goals name (SVG/PNG uncached, each cached format/baseline cached PNG). Then the
flood: wrk sends distinct (id, variant, format, size) requests for ``--flood-seconds`` to a fourth service
with a 2 MiB budget while its metrics port is read every 0.1 s, and the script prints the most the cache
ever held against its budget.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import threading
import time
from pathlib import Path

import httpx

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, baseline_tree, latest_export, pool_dir, rounds, service  # noqa: E402
from load import Target, sample_ids, summarize, wrk  # noqa: E402
from servers import free_port  # noqa: E402

ROOT = BENCH.parent
FLOOD_BUDGET = 2 * 1024 * 1024


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def warm(base: str, ids: list[str], queries: list[str]) -> None:
    """Render every (id, query) once, so the rounds only see cached answers."""
    with httpx.Client(base_url=base, headers={"X-API-Key": KEY}, timeout=60) as client:
        for query in queries:
            for cid in ids:
                response = client.get(f"/api/v2/puzzles/{cid}/image?{query}")
                response.raise_for_status()


def flood(directory: Path, ids: list[str], seconds: float) -> tuple[float, int, int]:
    """(most bytes the cache held at any reading, its budget, readings) under a flood of distinct requests."""
    rng = random.Random(11)
    # 20,000 paths over the pool's ids: nearly every one a representation no other path asks for.
    paths = [
        f"{rng.choice(ids)}/image?variant={rng.choice(('puzzle', 'solution'))}"
        f"&format={rng.choice(('png', 'svg', 'webp'))}&size={rng.randint(100, 2000)}"
        for _ in range(20_000)
    ]
    flood_ids = write_lines(OUT / "images-flood-ids.txt", paths)
    metrics_port = free_port()
    env = {"SUDOKUPOOL_IMAGE_CACHE_BYTES": str(FLOOD_BUDGET), "SUDOKUPOOL_METRICS_PORT": str(metrics_port)}
    svc = service(directory, OUT / "images-flood.log", env=env)
    svc.start()
    readings: list[float] = []
    stop = threading.Event()

    def watch() -> None:
        pattern = re.compile(r"^sudokupool_image_cache_bytes (\S+)$", re.MULTILINE)
        while not stop.is_set():
            found = pattern.search(httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).text)
            if found:
                readings.append(float(found.group(1)))
            time.sleep(0.1)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run = wrk(Target("flood", svc.base, "/api/v2/puzzles/{id}", {"X-API-Key": KEY}, flood_ids), seconds=seconds,
                  connections=16)  # fmt: skip
    finally:
        stop.set()
        watcher.join()
        svc.stop()
    print(f"  flood: {run.requests} requests ({run.rps:.0f}/s), {run.status_errors} non-2xx, {run.errors} errors")
    return max(readings, default=0.0), FLOOD_BUDGET, len(readings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="main", help="git revision whose cached PNG is the baseline")
    parser.add_argument("--pool", default=str(ROOT / "snapshots"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--flood-seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    all_ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    hot = all_ids.read_text().split()[:300]
    hot_ids = write_lines(OUT / "images-hot-ids.txt", hot)
    key = {"X-API-Key": KEY}
    image = "/api/v2/puzzles/{id}/image"
    with baseline_tree(args.baseline) as tree:
        cold = service(directory, OUT / "images-cold.log", env={"SUDOKUPOOL_IMAGE_CACHE_BYTES": "0"})
        this = service(directory, OUT / "images-this.log")
        base = service(directory, OUT / "images-baseline.log")
        base.env["PYTHONPATH"] = str(tree / "src")
        for svc in (cold, this, base):
            svc.start()
        try:
            warm(base.base, hot, ["variant=puzzle"])
            warm(this.base, hot, ["variant=puzzle", "format=svg", "format=webp", "size=1000"])
            targets = [
                Target("uncached png", cold.base, image, key, all_ids),
                Target("uncached svg", cold.base, image + "?format=svg", key, all_ids),
                Target("uncached webp", cold.base, image + "?format=webp", key, all_ids),
                Target("baseline: cached png", base.base, image, key, hot_ids),
                Target("this: cached png", this.base, image, key, hot_ids),
                Target("this: cached svg", this.base, image + "?format=svg", key, hot_ids),
                Target("this: cached webp", this.base, image + "?format=webp", key, hot_ids),
                Target("this: cached png 1000 px", this.base, image + "?size=1000", key, hot_ids),
            ]
            runs = rounds(targets, count=args.rounds, seconds=args.seconds, connections=32)
        finally:
            for svc in (cold, this, base):
                svc.stop()
    summary = {name: summarize(found) for name, found in runs.items()}
    for name, found in summary.items():
        if found["errors"] or found["status_errors"]:
            raise RuntimeError(f"{name}: {found['status_errors']} non-2xx, {found['errors']} errors")
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, median req/s")
    for name, found in summary.items():
        print(f"  {name:28s} {found['rps']:9,.0f}  p50 {found['p50_ms']:6.2f} ms")
    rps = {name: found["rps"] for name, found in summary.items()}
    print(f"  SVG / PNG, uncached: {rps['uncached svg'] / rps['uncached png']:.1f}x (goal >= 5)")
    baseline = rps["baseline: cached png"]
    for name in ("this: cached png", "this: cached svg", "this: cached webp", "this: cached png 1000 px"):
        print(f"  {name} / baseline cached png: {rps[name] / baseline:.3f} (goal >= 0.90)")
    most, budget, readings = flood(directory, all_ids.read_text().split(), args.flood_seconds)
    print(f"  render cache under the flood: at most {most:,.0f} of {budget:,} bytes over {readings} readings")
    return 0 if most <= budget else 1


if __name__ == "__main__":
    raise SystemExit(main())
