"""The hot handlers' CPU per call, this checkout against an earlier commit, side by side.

    python bench/handler_ab.py BASELINE [--pool snapshots] [--rounds 5] [--calls 20000]

Each round runs one process per version (the baseline from a temporary worktree of ``BASELINE``), which
loads the pool's latest export as the service does and times ``--calls`` calls of the v2 handlers, no
HTTP: random, random by difficulty, and by id (gzip clients). Prints the median CPU nanoseconds per call
and the ratio this/baseline. CPU time of the process, so other jobs on the machine count little.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import baseline_tree, pool_dir  # noqa: E402

CHILD = """
import asyncio, json, sys, time
from pathlib import Path
from sudokupool.api.endpoints import Endpoints
from sudokupool.config import Settings
from sudokupool.loading.loader import load_latest
from sudokupool.state import Runtime
from sudokupool.storage.local import LocalStore

pool, _ = asyncio.run(load_latest(LocalStore(Path(sys.argv[1])), loaded_at=0))
handlers = Endpoints(Runtime(Settings(), pool=pool), b"{}")
calls = int(sys.argv[2])
ids = [pool.body(i)[17:30].decode() for i in range(0, len(pool), 7)]
gzip = [(b"accept-encoding", b"gzip")]
found = {}
for name, query in (("random", b""), ("random?difficulty=hard", b"difficulty=hard")):
    scope = {"query_string": query, "headers": gzip}
    started = time.process_time_ns()
    for _ in range(calls):
        handlers.random(scope, None)
    found[name] = (time.process_time_ns() - started) / calls
scope = {"query_string": b"", "headers": gzip}
started = time.process_time_ns()
for i in range(calls):
    handlers.puzzle(scope, ids[i % len(ids)])
found["by id"] = (time.process_time_ns() - started) / calls
print(json.dumps(found))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", help="git revision to compare against")
    parser.add_argument("--pool", default=str(BENCH.parent / "snapshots"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args(argv)
    directory = pool_dir(args.pool)
    runs: dict[str, list[dict[str, float]]] = {"this": [], "baseline": []}
    with baseline_tree(args.baseline) as tree:
        envs = {"this": dict(os.environ), "baseline": {**os.environ, "PYTHONPATH": str(tree / "src")}}
        for n in range(args.rounds):
            for name in ["this", "baseline"] if n % 2 == 0 else ["baseline", "this"]:
                argv_ = [sys.executable, "-c", CHILD, str(directory), str(args.calls)]
                done = subprocess.run(argv_, env=envs[name], capture_output=True, text=True, check=True)
                runs[name].append(json.loads(done.stdout))
                print(name, n + 1, done.stdout.strip(), flush=True)
    print(f"baseline {args.baseline}, pool {directory}, {args.rounds} rounds x {args.calls} calls, median CPU ns")
    for case in runs["this"][0]:
        this = statistics.median(run[case] for run in runs["this"])
        base = statistics.median(run[case] for run in runs["baseline"])
        print(f"  {case:24s} this {this:7,.0f}  baseline {base:7,.0f}  ratio {this / base:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
