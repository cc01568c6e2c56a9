"""Two versions of the loader side by side under load: p99 while a reload runs, this checkout against
an earlier commit, one run.

    python bench/swap_ab.py BASELINE [--pool 1m-lean] [--rounds 2] [--seconds 25] [--niceness 10]

BASELINE is any git revision, checked out into a temporary worktree and served from there next to this
checkout's service (both as ``bench/swap_app.py``, as the harness's swap test does). Each round, for
one service and then the other (the order alternates), wrk measures v2 by id for ``--seconds`` in steady
state, then again while that service reloads its 1M export at a live sync's priority (``--niceness``)
and swaps it in. Only the measured service is loaded or reloading; the other is idle. It prints, for
each, the median over rounds of p99 during the reload against steady p99, and the reload's time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, baseline_tree, latest_export, pool_dir, service  # noqa: E402
from load import Target, sample_ids, wrk  # noqa: E402
from servers import Server, get  # noqa: E402


def reload_under_load(server: Server, target: Target, *, seconds: float, niceness: int) -> dict[str, float]:
    """Steady p99, then p99 while ``server`` reloads its export, and how long the reload took."""
    steady = wrk(target, seconds=seconds, connections=32)
    timer = threading.Timer(1.0, lambda: get(server.base + f"/__bench/swap?niceness={niceness}"))
    timer.start()
    during = wrk(target, seconds=seconds, connections=32)
    timer.join()
    status = json.loads(get(server.base + "/__bench/swap-status")[2])
    while not status.get("done"):
        time.sleep(1)
        status = json.loads(get(server.base + "/__bench/swap-status")[2])
    for run in (steady, during):
        if run.errors or run.status_errors:
            raise RuntimeError(f"{target.name}: {run.status_errors} non-2xx, {run.errors} errors")
    return {
        "steady_p99_ms": steady.p99_ms,
        "during_p99_ms": during.p99_ms,
        "p99_ratio": during.p99_ms / steady.p99_ms,
        "during_rps": during.rps,
        "reload_seconds": float(status["seconds"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", help="git revision to compare against")
    parser.add_argument("--pool", default="1m-lean")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=25.0)
    parser.add_argument("--niceness", type=int, default=10)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    results: dict[str, list[dict[str, float]]] = {"this": [], "baseline": []}
    with baseline_tree(args.baseline) as tree:
        servers = {
            "this": service(directory, OUT / "swap-ab-this.log", swap=True),
            "baseline": service(directory, OUT / "swap-ab-baseline.log", swap=True),
        }
        # The baseline's service (bench/swap_app.py, the trigger, is this checkout's, as in ab.py).
        servers["baseline"].env["PYTHONPATH"] = os.pathsep.join([str(BENCH), str(tree / "src")])
        try:
            for server in servers.values():
                server.start()
            key = {"X-API-Key": KEY}
            targets = {name: Target(name, s.base, "/api/v2/puzzles/{id}", key, ids) for name, s in servers.items()}
            for target in targets.values():
                wrk(target, seconds=2, connections=32)  # warm-up
            for n in range(args.rounds):
                for name in ("this", "baseline") if n % 2 == 0 else ("baseline", "this"):
                    found = reload_under_load(servers[name], targets[name], seconds=args.seconds,
                                              niceness=args.niceness)  # fmt: skip
                    results[name].append(found)
                    shown = ", ".join(f"{k} {v:.2f}" for k, v in found.items())
                    print(f"round {n + 1} {name}: {shown}", flush=True)
        finally:
            for server in servers.values():
                server.stop()
    print(f"baseline {args.baseline}, pool {directory.name}, nice +{args.niceness}, {args.rounds} rounds x "
          f"{args.seconds:g} s windows, medians")  # fmt: skip
    medians = {name: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for name, runs in results.items()}
    for name, m in medians.items():
        print(
            f"  {name:8s} p99 during reload {m['during_p99_ms']:.2f} ms / steady {m['steady_p99_ms']:.2f} ms = "
            f"{m['p99_ratio']:.2f}x; {m['during_rps']:,.0f} req/s during; reload {m['reload_seconds']:.1f} s"
        )
    print(f"  p99 ratio this/baseline: {medians['this']['p99_ratio'] / medians['baseline']['p99_ratio']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
