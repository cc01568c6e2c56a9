"""What loading a pool's pack costs, this checkout against an earlier commit, side by side.

    python bench/pack_load.py BASELINE [--pool 100k] [--rounds 5]

One process per version (the baseline from a temporary worktree of ``BASELINE``) loads the pool's latest
export from its directory as startup does (``load_export``, no cache directory), round after round and
in turn, and times it: for this checkout that is a private copy of the pack (``loading.cache.copy``), the
header, the checksum and the structure (``loading.validate``); for a baseline before them, the map, the
header and the checksum. Each also times the checks alone on a pack already copied ("map and check"):
``Pool.from_pack`` on a fresh mapping. The page cache is warm after the first round, as on a machine
that has the pack in memory. Prints medians and the ratio this/baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

STEPS = ("load", "map and check")


def child(directory: Path) -> None:
    import asyncio

    from sudokupool.loading.loader import load_export
    from sudokupool.loading.pack import map_file
    from sudokupool.loading.pool import Pool, PoolInfo
    from sudokupool.storage.local import LocalStore

    store = LocalStore(directory)
    export = asyncio.run(store.list_exports(1)).latest
    assert export is not None and export.pack is not None
    print(json.dumps({"ready": export.key}), flush=True)
    for _ in sys.stdin:
        found: dict[str, float] = {}
        started = time.perf_counter()
        pool, report = asyncio.run(load_export(store, export))
        found["load"] = time.perf_counter() - started
        assert report.packed, report.summary()
        del pool
        info = PoolInfo("", export.key, export.size, 0)
        started = time.perf_counter()
        Pool.from_pack(map_file(directory / export.pack.key), info)
        found["map and check"] = time.perf_counter() - started
        print(json.dumps(found), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", nargs="?")
    parser.add_argument("--pool", default="100k")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    from harness import baseline_tree, pool_dir

    directory = pool_dir(args.pool)
    results: dict[str, list[dict[str, float]]] = {"this": [], "baseline": []}
    with baseline_tree(args.baseline) as tree:
        procs: dict[str, subprocess.Popen[str]] = {}
        for name, src in (("this", BENCH.parent / "src"), ("baseline", tree / "src")):
            env = {**os.environ, "PYTHONPATH": str(src)}
            argv_child = [sys.executable, __file__, "--child", str(directory)]
            procs[name] = subprocess.Popen(
                argv_child, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
        try:
            for proc in procs.values():
                assert proc.stdout is not None
                json.loads(proc.stdout.readline())
            for n in range(args.rounds):
                for name in list(procs) if n % 2 == 0 else list(reversed(procs)):
                    proc = procs[name]
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write("go\n")
                    proc.stdin.flush()
                    found = json.loads(proc.stdout.readline())
                    results[name].append(found)
                    print(
                        f"round {n + 1} {name:8s} " + "  ".join(f"{k} {v:.3f} s" for k, v in found.items()), flush=True
                    )
        finally:
            for proc in procs.values():
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(60)
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds, median seconds")
    for step in STEPS:
        this = statistics.median(r[step] for r in results["this"])
        base = statistics.median(r[step] for r in results["baseline"])
        print(f"  {step:14s} this {this:.3f}  baseline {base:.3f}  ratio {this / base:.2f}  diff {this - base:+.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
