"""Server CPU time per request, by path: where the service's microseconds go beside the bare app's.

    python bench/cpu_per_request.py [--pool snapshots] [--rounds 3] [--seconds 5] [--connections 32]
        [--redis [--only-random]]

(bench/harness.py runs it too, unless ``--no-cpu``.)

req/s says how fast; this says how much CPU the server process spent for each answer (utime + stime
from /proc over a wrk run, divided by the requests), which is what separates the work of a path from
the wakeups and syscalls every answer pays. Every target runs in every round, order rotated; medians.

With ``--redis`` a second service counts its limits in a local valkey-server; its rows add the CPU the
valkey process spent per request (``redis_cpu_us``), which shares the machine's cores with the service.
``--only-random`` keeps v2 random alone (in process, and with ``--redis`` in Redis).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, pool_dir, service, valkey  # noqa: E402
from load import Target, wrk  # noqa: E402
from servers import Server, cpu_seconds, redis_outages, uvicorn  # noqa: E402

REDIS_RANDOM = "v2 random, key, Redis limiter"


def measure(
    pool: str, *, rounds: int, seconds: float, redis: bool = False, only_random: bool = False, connections: int = 32
) -> dict[str, dict[str, float]]:
    """Median req/s and server CPU µs per request of each target, over ``rounds`` rotated rounds."""
    os.environ["SUDOKUPOOL_LIMIT_ANONYMOUS"] = "1000000000"  # anonymous requests are counted, never refused
    with contextlib.ExitStack() as stack:
        redis_pid = 0
        redis_svc = None
        url = ""
        if redis:
            url, redis_pid = stack.enter_context(valkey(OUT / "cpu-valkey.log"))
            redis_svc = service(pool_dir(pool), OUT / "cpu-service-redis.log", redis_url=url).start()
            stack.callback(_check_no_outage, redis_svc)
            stack.callback(redis_svc.stop)
        return _measure(pool, rounds=rounds, seconds=seconds, redis_svc=redis_svc, redis_pid=redis_pid,
                        redis_url=url if redis else "", only_random=only_random, connections=connections)  # fmt: skip


def script_calls(url: str) -> int:
    """The limiter's script calls Valkey has run so far."""
    import redis

    with redis.Redis.from_url(url) as client:
        stats = client.info("commandstats")
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))


def _check_no_outage(server: Server) -> None:
    if redis_outages(server):
        print(f"warning: Redis outages during the run (requests answered without Redis); see {server.log}")


def _measure(
    pool: str,
    *,
    rounds: int,
    seconds: float,
    redis_svc: Server | None,
    redis_pid: int,
    redis_url: str,
    only_random: bool,
    connections: int,
) -> dict[str, dict[str, float]]:
    svc = service(pool_dir(pool), OUT / "cpu-service.log").start()
    fixed = service(pool_dir(pool), OUT / "cpu-fixed.log", app="fixed_headers_app:create_app").start()
    bare = uvicorn("bare", "bare_app:app", "--app-dir", str(BENCH), env={"BENCH_BODY_SIZE": "700"}, probe="/",
                   log=OUT / "cpu-bare.log").start()  # fmt: skip
    key = {"X-API-Key": KEY}
    targets = [
        (bare, Target("bare ASGI app", bare.base, "/")),
        (svc, Target("v1 stats", svc.base, "/api/v1/stats")),
        (svc, Target("v2 stats, anonymous", svc.base, "/api/v2/stats")),
        (svc, Target("v2 stats, key", svc.base, "/api/v2/stats", key)),
        (svc, Target("v1 random", svc.base, "/api/v1/puzzles/random")),
        (svc, Target("v1 random, key header sent", svc.base, "/api/v1/puzzles/random", key)),
        (fixed, Target("v2 random, fixed limit headers, no counting", fixed.base, "/api/v2/puzzles/random", key)),
        (svc, Target("v2 random, anonymous", svc.base, "/api/v2/puzzles/random")),
        (svc, Target("v2 random, key", svc.base, "/api/v2/puzzles/random", key)),
    ]
    if only_random:
        targets = targets[-1:]
    if redis_svc is not None:
        targets.append((redis_svc, Target(REDIS_RANDOM, redis_svc.base, "/api/v2/puzzles/random", key)))
    runs: dict[str, list[tuple[float, float]]] = {t.name: [] for _, t in targets}
    valkey_us: list[float] = []
    per_call: list[float] = []
    try:
        for n in range(rounds):
            for server, target in targets[n % len(targets) :] + targets[: n % len(targets)]:
                before = cpu_seconds(server.pid)
                redis_before = cpu_seconds(redis_pid) if redis_pid else 0.0
                calls_before = script_calls(redis_url) if server is redis_svc else 0
                run = wrk(target, seconds=seconds, connections=connections)
                used = cpu_seconds(server.pid) - before
                if server is redis_svc:
                    valkey_us.append((cpu_seconds(redis_pid) - redis_before) / run.requests * 1e6)
                    per_call.append(run.requests / max(1, script_calls(redis_url) - calls_before))
                if run.status_errors or run.errors:
                    raise RuntimeError(f"{target.name}: {run.status_errors} non-2xx, {run.errors} errors")
                runs[target.name].append((run.rps, used / run.requests * 1e6))
    finally:
        svc.stop()
        fixed.stop()
        bare.stop()
    results = {
        name: {
            "rps": round(statistics.median(r for r, _ in found)),
            "cpu_us": round(statistics.median(u for _, u in found), 1),
        }
        for name, found in runs.items()
    }
    if valkey_us:
        results[REDIS_RANDOM]["redis_cpu_us"] = round(statistics.median(valkey_us), 1)
        results[REDIS_RANDOM]["requests_per_call"] = round(statistics.median(per_call), 1)
    return results


def table(results: dict[str, dict[str, float]]) -> str:
    lines = ["| target | req/s (median) | server CPU µs per request (median) |", "|---|---:|---:|"]
    for name, r in results.items():
        also = (
            f" (+ {r['redis_cpu_us']} in valkey; {r['requests_per_call']} requests a call)"
            if "redis_cpu_us" in r
            else ""
        )
        lines.append(f"| {name} | {r['rps']:,} | {r['cpu_us']}{also} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default=str(BENCH.parent / "snapshots"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--redis", action="store_true", help="also v2 random with the limiter in a local valkey")
    parser.add_argument("--only-random", action="store_true", help="v2 random only")
    parser.add_argument("--connections", type=int, default=32, help="wrk's connections")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    results = measure(args.pool, rounds=args.rounds, seconds=args.seconds, redis=args.redis,
                      only_random=args.only_random, connections=args.connections)  # fmt: skip
    print(table(results))
    if REDIS_RANDOM in results:
        local, shared = results["v2 random, key"], results[REDIS_RANDOM]
        print(f"\nRedis limiter / in-process: req/s {shared['rps'] / local['rps']:.2f}x, "
              f"server CPU per request {shared['cpu_us'] / local['cpu_us']:.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
