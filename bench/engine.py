"""The engine over HTTP: the canonical form against main's, grid lookups against a by-id lookup, live grades
against the grader in process."""

from __future__ import annotations

import contextlib
import gzip
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench import harness


def _records(directory: Path) -> list[dict[str, Any]]:
    export = harness.latest_export(directory)
    opener = gzip.open if export.name.endswith(".gz") else open
    with opener(export, "rt") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def canonical_figures(records: list[dict[str, Any]], sample: int) -> None:
    """The canonical form of ``sample`` pool puzzles, this checkout against main's algorithm (kept as the tests'
    oracle, tests/sudoku/minlex_reference.py), interleaved puzzle by puzzle; best of 3 calls each."""
    sys.path.insert(0, str(harness.ROOT))
    from sudokupool.sudoku.canonical import canonical_form, canonical_transform
    from tests.sudoku.minlex_reference import canonical_form as main_form

    chosen = random.Random(1).sample(records, min(sample, len(records)))
    times: dict[str, list[float]] = {"main": [], "this": [], "this, with transform": []}
    for record in chosen:
        puzzle = record["puzzle"]
        for name, function in (
            ("main", main_form),
            ("this", canonical_form),
            ("this, with transform", canonical_transform),
        ):
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                function(puzzle)  # type: ignore[operator]
                best = min(best, time.perf_counter() - start)
            times[name].append(best * 1000)
    base = _quantiles(times["main"])
    print(f"canonical form, {len(chosen)} pool puzzles, best of 3 calls each (ms): median, p95, ratio of medians")
    for name, values in times.items():
        median, p95 = _quantiles(values)
        print(f"  {name:22} {median:7.3f} {p95:7.3f}  {median / base[0]:6.3f}")


def grids_files(records: list[dict[str, Any]], count: int) -> tuple[Path, Path]:
    """Files of pool puzzles as the pool holds them, and of ``count`` distinct other layouts of them."""
    sys.path.insert(0, str(harness.ROOT / "src"))
    from sudokupool.sudoku.transform import random_transform

    own = harness.OUT / "grids-own.txt"
    own.write_text("".join(record["puzzle"] + "\n" for record in records))
    rng = random.Random(47)
    moved = harness.OUT / "grids-moved.txt"
    moved.write_text("".join(random_transform(rng).apply(rng.choice(records)["puzzle"]) + "\n" for _ in range(count)))
    return own, moved


#: A grid graded before the timed ones, in no sample and no pool served here (Wikipedia's example puzzle).
WARM_UP = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"


def live_figures(base: str, grids: list[str], what: str = "grids") -> None:
    """Each grid graded through the service (its answer cache off) and by ``grade()`` in this process, in turn."""
    sys.path.insert(0, str(harness.ROOT / "src"))
    from sudokupool.sudoku.grader import grade

    http: list[float] = []
    local: list[float] = []
    with httpx.Client(base_url=base, headers=harness.KEYED, timeout=120) as client:
        # Not timed: the service's first job starts its work process.
        client.get(f"/api/v2/grids/{WARM_UP}")
        for grid in grids:
            start = time.perf_counter()
            response = client.get(f"/api/v2/grids/{grid}")
            http.append((time.perf_counter() - start) * 1000)
            if response.status_code != 200 or response.json()["in_pool"]:
                raise RuntimeError(f"{grid}: not graded live: {response.status_code} {response.text[:200]}")
            start = time.perf_counter()
            grade(grid)
            local.append((time.perf_counter() - start) * 1000)
    (h50, h95), (l50, l95) = _quantiles(http), _quantiles(local)
    print(f"live grades of {len(grids)} {what} (ms): median, p95")
    print(f"  GET /api/v2/grids/{{grid}}   {h50:9.1f} {h95:9.1f}")
    print(f"  grade() in process         {l50:9.1f} {l95:9.1f}")
    print(f"  HTTP and work pool overhead at the median: {h50 - l50:.1f} ms")


class Flood(threading.Thread):
    """One client asking for live grades of distinct hard grids, one after another, until stopped."""

    def __init__(self, base: str, grids: list[str]) -> None:
        super().__init__(daemon=True)
        self.base, self.grids = base, grids
        self.stop = threading.Event()
        self.statuses: dict[int, int] = {}

    def run(self) -> None:
        with httpx.Client(base_url=self.base, headers=harness.KEYED, timeout=60) as client:
            for grid in self.grids:
                if self.stop.is_set():
                    return
                status = client.get(f"/api/v2/grids/{grid}").status_code
                self.statuses[status] = self.statuses.get(status, 0) + 1


def flood_figures(base: str, count: int, seconds: float, connections: int) -> None:
    """``/puzzles/random`` alone and while 8 clients flood ``/grids/`` with distinct hard grids (the SE-rated
    files of bench/data, each moved by a random transformation), alternating, ``count`` rounds of each."""
    sys.path.insert(0, str(harness.ROOT / "src"))
    from sudokupool.sudoku.transform import random_transform

    hard = []
    for name in ("sudoku-exchange-se-sample.txt", "sudoku-exchange-se-fresh.txt"):
        lines = (harness.ROOT / "bench" / "data" / name).read_text().split("\n")
        hard += [line.split()[0] for line in lines if line.strip() and float(line.split()[1]) >= 7.0]
    rng = random.Random(5)
    target = harness.Target("random", base, "/api/v2/puzzles/random", harness.KEYED)
    statuses: dict[int, int] = {}

    def measure(name: str, n: int) -> Any:
        if name == "alone":
            return harness.wrk(target, seconds=seconds if n >= 0 else 1, connections=connections)
        flood = [Flood(base, [random_transform(rng).apply(rng.choice(hard)) for _ in range(500)]) for _ in range(8)]
        for thread in flood:
            thread.start()
        time.sleep(1)  # the queue fills
        try:
            return harness.wrk(target, seconds=seconds if n >= 0 else 1, connections=connections)
        finally:
            for thread in flood:
                thread.stop.set()
            for thread in flood:
                thread.join()
                for status, number in thread.statuses.items():
                    statuses[status] = statuses.get(status, 0) + number

    runs = harness.interleave(["alone", "flooded"], count, measure, warm_up=True)
    alone, flooded = harness.summarize(runs["alone"]), harness.summarize(runs["flooded"])
    print(
        f"/puzzles/random, {count} rounds x {seconds:g} s, {connections} connections, median; flood answers {statuses}"
    )
    print(f"  alone     {alone['rps']:8,.0f} req/s   p99 {alone['p99_ms']:7.2f} ms")
    ratios = f"throughput {flooded['rps'] / alone['rps']:.3f}x, p99 {flooded['p99_ms'] / alone['p99_ms']:.3f}x"
    print(f"  flooded   {flooded['rps']:8,.0f} req/s   p99 {flooded['p99_ms']:7.2f} ms   {ratios}")


def engine_main(argv: list[str] | None = None) -> int:
    """Grid lookups and live grades through the service, and the canonical form that finds a grid in the pool.

    1. The canonical form of pool puzzles: this checkout against main's algorithm, in process.
    2. wrk, side by side in rotated rounds on one service (its answer cache off, so every grid is computed):
       ``/puzzles/{id}`` (the by-id lookup), ``/grids/{grid}`` with the pool's own grids, and with other layouts of
       them (distinct grids, each a random transformation): req/s, p99 and server CPU per answer, and each ratio to
       by-id; with ``--baseline``, the same on a service of that revision in the same rounds.
    3. Live grades of the SE-rated sample (bench/data) through the service, one at a time, against ``grade()``; and
       of the pool's own puzzles (``--live-pool``, every level), through a service of a small pool of other puzzles
       (made by ``sudokupool build``), as the pool's puzzles would be graded by a service that does not hold them.
    4. ``/puzzles/random`` alone and during a flood of live grades of distinct hard grids (``--flood``).
    """
    parser = harness.options(engine_main.__doc__, pool="demo", rounds=3, seconds=5.0, connections=True)
    # --rounds 0 skips part 2.
    parser.add_argument("--canonical", type=int, default=400, help="pool puzzles for part 1 (0: skip)")
    parser.add_argument("--live", type=int, default=40, help="SE-sample grids for part 3 (0: skip)")
    parser.add_argument("--live-pool", type=int, default=40, help="pool puzzles for part 3 (0: skip)")
    parser.add_argument("--flood", action="store_true", help="part 4 only (parts 1-3 skipped)")
    parser.add_argument(
        "--setting", action="append", default=[], metavar="NAME=VALUE", help="a setting of this checkout's service only"
    )
    parser.add_argument("--baseline", help="part 2 also on this git revision (or sudokupool directory), same rounds")
    args = parser.parse_args(argv)
    directory = harness.pool_dir(args.pool)
    records = _records(directory)
    print(json.dumps(harness.machine()))
    if args.flood:
        with harness.service(
            directory, harness.OUT / "engine-flood.log", env={"SUDOKUPOOL_ENGINE_CACHE_BYTES": "0"}
        ) as server:
            flood_figures(server.base, args.rounds, args.seconds, args.connections)
        return 0
    if args.canonical:  # 0: part 1 skipped
        canonical_figures(records, args.canonical)
    env = {"SUDOKUPOOL_ENGINE_CACHE_BYTES": "0"}
    own = dict(setting.split("=", 1) for setting in args.setting)
    # Parts 2 and 3 share this checkout's service; part 2 alone the baseline's.
    trees = {"this": harness.ROOT / "src"} if args.rounds or args.live else {}
    with contextlib.ExitStack() as stack:
        if args.baseline and args.rounds:
            trees["baseline"] = stack.enter_context(harness.baseline_src(args.baseline))
        servers = {
            side: stack.enter_context(
                harness.service(
                    directory,
                    harness.OUT / f"engine-{side}.log",
                    env={**env, **(own if side == "this" else {}), "PYTHONPATH": str(tree)},
                )
            )
            for side, tree in trees.items()
        }
        if args.rounds:  # 0: part 2 skipped
            own, moved = grids_files(records, 20000)
            ids = harness.pool_ids(directory)
            targets = [
                harness.Target(f"{side}: {name}", server.base, path, harness.KEYED, found)
                for side, server in servers.items()
                for name, path, found in (
                    ("by id", "/api/v2/puzzles/{id}", ids),
                    ("grid, pool's layout", "/api/v2/grids/{id}", own),
                    ("grid, other layouts", "/api/v2/grids/{id}", moved),
                )
            ]
            meters = {t.name: {"cpu_us": harness.cpu_meter(servers[t.name.split(":")[0]])} for t in targets}
            summary = harness.rounds(
                targets, count=args.rounds, seconds=args.seconds, connections=args.connections, meters=meters
            )
            print(
                f"pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, {args.connections} connections,"
                " median; ratios to the same side's by id"
            )
            print(f"  {'':32} {'req/s':>8} {'ratio':>6} {'p99 ms':>8} {'CPU µs':>8} {'ratio':>6}")
            for name, s in summary.items():
                by_id = summary[name.split(":")[0] + ": by id"]
                print(
                    f"  {name:32} {s['rps']:8,.0f} {s['rps'] / by_id['rps']:6.3f} {s['p99_ms']:8.2f}"
                    f" {s['cpu_us']:8.0f} {by_id['cpu_us'] / s['cpu_us']:6.3f}"
                )
        if args.live:
            lines = (harness.ROOT / "bench" / "data" / "sudoku-exchange-se-sample.txt").read_text().split("\n")
            live_figures(
                servers["this"].base, [line.split()[0] for line in lines if line.strip()][: args.live], "SE-rated grids"
            )
    if args.live_pool:
        live_pool_figures(records, args.live_pool, directory.name)
    return 0


def live_pool_figures(records: list[dict[str, Any]], count: int, name: str) -> None:
    """Live grades of ``count`` of the pool's puzzles (spread over its records, so over its levels) through a service
    of a small pool that does not hold them, against ``grade()``."""
    with tempfile.TemporaryDirectory() as scratch:
        others = Path(scratch) / "others"
        argv = [sys.executable, "-m", "sudokupool", "build", "--count", "10", "--seed", "47", "--out", f"{others}/"]
        subprocess.run(argv, check=True, capture_output=True)
        step = max(1, len(records) // count)
        grids = [record["puzzle"] for record in records[::step][:count]]
        log = harness.OUT / "engine-live-pool.log"
        with harness.service(others, log, env={"SUDOKUPOOL_ENGINE_CACHE_BYTES": "0"}) as server:
            live_figures(server.base, grids, f"puzzles of the {name} pool")
