"""Random with filters against plain random, side by side on one service: the cost of choosing.

    python bench/filters.py [--pool demo|100k|1m-lean|DIR] [--rounds 5] [--seconds 5]

One service (this checkout, as the harness starts it, from the pool's pack when it has one) takes wrk's
load on v2 random with a key whose limit never trips and ``Accept-Encoding: gzip`` (as browsers and
HTTP libraries send it: the body goes out as the pool holds it): plain, then with each filter the issue
names (``technique``, ``stars``, ``min_score`` with ``max_score``) and all of them with ``difficulty`` at
once, in the harness's rotated rounds (a warm-up first). The filters' values come from the pool itself
(its technique catalogue and a record's stars and score), so every request is answered 200. A filter
also changes which puzzles are served, and harder ones have longer bodies; ``technique, whole pool``
(the technique the most puzzles use) serves the same puzzles as plain random, so it is the cost of
choosing alone. Prints, medians over the rounds, each target's req/s and the server process's CPU time
per request (utime + stime from /proc over each wrk run, as bench/cpu_per_request.py: on a shared
machine req/s follows the other processes' load, CPU per request much less), each with its ratio to
plain random, then the handler's CPU time per call in this process for each query (the parse, the pick
and the body, no HTTP).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import urllib.parse
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, pool_dir, service  # noqa: E402
from load import Run, Target, summarize, wrk  # noqa: E402
from servers import cpu_seconds  # noqa: E402


def get(base: str, path: str) -> dict[str, object]:
    request = urllib.request.Request(base + path, headers={"X-API-Key": KEY})
    with urllib.request.urlopen(request, timeout=10) as answer:
        body: dict[str, object] = json.loads(answer.read())
        return body


def queries(base: str) -> dict[str, str]:
    """Filter queries over the pool's own values: a technique about one puzzle in 20 uses (a list of that
    size, not the whole pool), a record's stars, a score range around a record's score."""
    catalogue = get(base, "/api/v2/techniques")["techniques"]
    assert isinstance(catalogue, list)
    total = max(t["puzzles"] for t in catalogue)
    technique = min((t for t in catalogue if t["puzzles"]), key=lambda t: abs(t["puzzles"] - total / 20))["name"]
    broad = max(catalogue, key=lambda t: t["puzzles"])["name"]
    record = get(base, f"/api/v2/puzzles/random?technique={urllib.parse.quote(technique)}")
    stars, score, difficulty = record["stars"], record["score"], str(record["difficulty"]).lower()
    assert isinstance(score, int)
    low, high = score - score // 10, score + score // 10
    name = urllib.parse.quote(technique)
    return {
        "technique, whole pool": f"technique={urllib.parse.quote(broad)}",
        "technique": f"technique={name}",
        "stars": f"stars={stars}",
        "score range": f"min_score={low}&max_score={high}",
        "all four": f"difficulty={difficulty}&technique={name}&stars={stars}&min_score={low}&max_score={high}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default="demo", help="demo (snapshots/), a name under bench/pools, or a dir")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = ROOT / "snapshots" if args.pool == "demo" else pool_dir(args.pool)
    server = service(directory, OUT / "filters.log")
    server.start()
    try:
        found = queries(server.base)
        key = {"X-API-Key": KEY, "Accept-Encoding": "gzip"}
        targets = [Target("plain", server.base, "/api/v2/puzzles/random", key)]
        targets += [Target(name, server.base, f"/api/v2/puzzles/random?{query}", key) for name, query in found.items()]
        for target in targets:  # warm-up
            wrk(target, seconds=1, connections=args.connections)
        runs: dict[str, list[Run]] = {t.name: [] for t in targets}
        cpu_us: dict[str, list[float]] = {t.name: [] for t in targets}
        for n in range(args.rounds):
            # Rotated each round, so that no target always follows the same neighbour.
            for target in targets[n % len(targets) :] + targets[: n % len(targets)]:
                before = cpu_seconds(server.pid)
                run = wrk(target, seconds=args.seconds, connections=args.connections)
                runs[target.name].append(run)
                cpu_us[target.name].append((cpu_seconds(server.pid) - before) / run.requests * 1e6)
                print(f"  round {n + 1} {target.name:22} {run.rps:7.0f} req/s  {cpu_us[target.name][-1]:6.1f} us CPU")
    finally:
        server.stop()
    summary = {name: summarize(found_runs) for name, found_runs in runs.items()}
    cpu = {name: statistics.median(found) for name, found in cpu_us.items()}
    for name, result in summary.items():
        if result["errors"] or result["status_errors"]:
            raise RuntimeError(f"{name}: {result['status_errors']} non-2xx, {result['errors']} errors")
    plain, plain_cpu = summary["plain"]["rps"], cpu["plain"]
    handler = handler_cpu(directory, {"plain": "", **found}, rounds=args.rounds)
    print(f"pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, {args.connections} connections, median")
    print("  target                    req/s  ratio   server CPU/request  ratio   handler CPU/call")
    for name, result in summary.items():
        query = "" if name == "plain" else f"  ?{found[name]}"
        print(
            f"  {name:22s} {result['rps']:8,.0f}  {result['rps'] / plain:5.3f}  {cpu[name]:13.1f} us  "
            f"{cpu[name] / plain_cpu:6.3f}  {handler[name]:10,.0f} ns{query}"
        )
    return 0


def handler_cpu(directory: Path, found: dict[str, str], *, rounds: int, calls: int = 20000) -> dict[str, float]:
    """CPU nanoseconds per call of the random handler for each query, in this process, median of rounds."""
    import asyncio
    import time

    from sudokupool.api.endpoints import Endpoints
    from sudokupool.config import Settings
    from sudokupool.loading.loader import load_latest
    from sudokupool.state import Runtime
    from sudokupool.storage.local import LocalStore

    pool, _ = asyncio.run(load_latest(LocalStore(directory), loaded_at=0))
    endpoints = Endpoints(Runtime(Settings(), pool=pool), b"{}")
    times: dict[str, list[float]] = {name: [] for name in found}
    for _ in range(rounds):
        for name, query in found.items():
            scope = {"query_string": query.encode(), "headers": [(b"accept-encoding", b"gzip")]}
            started = time.process_time_ns()
            for _ in range(calls):
                endpoints.random(scope, None)
            times[name].append((time.process_time_ns() - started) / calls)
    return {name: statistics.median(found_times) for name, found_times in times.items()}


if __name__ == "__main__":
    raise SystemExit(main())
