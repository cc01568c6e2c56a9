"""What the pool itself costs a request, this checkout against an earlier commit, side by side.

    python bench/pool_ops.py BASELINE [--pool 100k] [--rounds 7] [--ops 200000]

Starts one process per version (the baseline from a temporary worktree of ``BASELINE``), each loading
the pool's latest export as the service does (this checkout maps its pack when there is one), then
asks them in turn, round after round, to time ``--ops`` calls of what the v2 handlers call: by id
(``find`` of a random id, then ``etag`` and ``gzip_body``), by id for an identity client (``body``,
inflated), and random (``pick`` then ``gzip_body``). Prints the median nanoseconds per call of each and
the ratio this/baseline. Times are CPU time of the process (the machine is shared: wall time would count
other processes' turns). A request costs the server ~150-400 us in all, so these say how much of a
request's difference the pool can account for.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

OPS = ("by id, gzip", "by id, identity", "random, gzip")


def serve_rounds(directory: Path, ids_file: Path, ops: int) -> None:
    """The child: load, say ready, then time one round per line read from stdin."""
    try:
        from sudokupool.loading.loader import load_latest
    except ImportError:  # a baseline from before the loading/ package
        from sudokupool.loader import load_latest  # type: ignore[no-redef]
    from sudokupool.storage.local import LocalStore

    pool, report = asyncio.run(load_latest(LocalStore(directory)))
    ids = ids_file.read_text().split()
    rng = random.Random(1)
    picks = [rng.choice(ids) for _ in range(ops)]
    print(json.dumps({"ready": report.summary()}), flush=True)
    gzip_body = getattr(pool, "gzip_body", pool.body)
    for _ in sys.stdin:
        found: dict[str, float] = {}
        started = time.process_time_ns()
        for cid in picks:
            index = pool.find(cid)
            assert index is not None
            pool.etag(index)
            gzip_body(index)
        found["by id, gzip"] = (time.process_time_ns() - started) / ops
        started = time.process_time_ns()
        for cid in picks[: ops // 10]:
            index = pool.find(cid)
            assert index is not None
            pool.etag(index)
            pool.body(index)
        found["by id, identity"] = (time.process_time_ns() - started) / (ops // 10)
        started = time.process_time_ns()
        for _ in range(ops):
            index = pool.pick()
            assert index is not None
            gzip_body(index)
        found["random, gzip"] = (time.process_time_ns() - started) / ops
        print(json.dumps(found), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", nargs="?")
    parser.add_argument("--pool", default="100k")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", type=int, default=200_000)
    parser.add_argument("--child", nargs=2, metavar=("DIR", "IDS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        serve_rounds(Path(args.child[0]), Path(args.child[1]), args.ops)
        return 0
    from harness import OUT, baseline_tree, latest_export, pool_dir
    from load import sample_ids

    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    argv_child = [sys.executable, __file__, "--ops", str(args.ops), "--child", str(directory), str(ids)]
    with baseline_tree(args.baseline) as tree:
        procs: dict[str, subprocess.Popen[str]] = {}
        for name, src in (("this", BENCH.parent / "src"), ("baseline", tree / "src")):
            env = {**os.environ, "PYTHONPATH": str(src)}
            procs[name] = subprocess.Popen(
                argv_child, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
        try:
            for name, proc in procs.items():
                assert proc.stdout is not None
                print(name, json.loads(proc.stdout.readline())["ready"], flush=True)
            results: dict[str, list[dict[str, float]]] = {name: [] for name in procs}
            for n in range(args.rounds):
                order = list(procs) if n % 2 == 0 else list(reversed(procs))
                for name in order:
                    proc = procs[name]
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write("go\n")
                    proc.stdin.flush()
                    found: dict[str, Any] = json.loads(proc.stdout.readline())
                    results[name].append(found)
                    print(
                        f"round {n + 1} {name:8s} " + "  ".join(f"{op} {found[op]:7.0f} ns" for op in OPS), flush=True
                    )
        finally:
            for proc in procs.values():
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(60)
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.ops} calls, median ns/call")
    for op in OPS:
        this = statistics.median(r[op] for r in results["this"])
        base = statistics.median(r[op] for r in results["baseline"])
        print(f"  {op:18s} this {this:8.0f}  baseline {base:8.0f}  ratio {this / base:.3f}  diff {this - base:+.0f} ns")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
