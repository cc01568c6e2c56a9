"""The running service under load: boot, connections, CPU per request, server choice, Redis capacity, pack
swaps and images."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any, Final

import httpx
import redis

from bench.harness import (
    KEY,
    OUT,
    Run,
    Target,
    baseline_src,
    body_size,
    digest,
    latest_export,
    machine,
    pool_dir,
    rounds,
    sample_ids,
    service,
    summarize,
    valkey,
    wrk,
)
from bench.servers import (
    Server,
    cpu_seconds,
    free_port,
    get,
    non_reading_clients,
    process_tree,
    read_until_closed,
    redis_outages,
    serve_argv,
    tree_rss,
    uvicorn,
)
from bench.stores import ValkeyCluster, ValkeyServer
from sudokupool.ratelimit.redis import RedisStore

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


# --- boot ----------------------------------------------------------------------------------------------------------

BOOT_DOC = """\
Boot time and private memory of the service on a pool with its pack, from a local directory or from S3.

    python -m bench boot [--pool 1m] [--workers 2] [--rounds 3] [--source local|local-cached|s3|both]

Each round starts the service as the Procfile does (``sudokupool serve``, ``WEB_CONCURRENCY=N``, the
server ``SUDOKUPOOL_SERVER`` names) and times it from process start until every worker has logged its
load and ``/api/v1/health`` answers 200 (the first worker to answer would flatter a multi-worker boot).
Then it sends a few seconds of v2 random and by-id requests (wrk) so every worker touches its pool, and
reads each child process's ``/proc/PID/smaps_rollup``: USS (the ``Private_*`` lines: what stopping that
worker alone would give back), PSS and RSS.

``local`` sets no cache directory: the service maps a copy of the pack it makes once per machine and source
under ``<temp>/sudokupool-<uid>/`` and keeps between boots (so only a first boot ever copies); ``local-cached``
gives every round one ``SUDOKUPOOL_CACHE_DIR`` of this run, so the first round's first worker copies the pack
there and every later load maps that copy. ``both`` is ``local`` and ``s3``.

``s3`` starts a real SeaweedFS (``bench/stores.py``), uploads the export and its pack, and points the
service at it with a fresh ``SUDOKUPOOL_CACHE_DIR`` per round, so every round downloads the pack
(the workers share one download: the first takes the cache's lock, the others map its file). The
pool needs its pack first: ``sudokupool pack bench/pools/<pool>/pool-*.ndjson.gz``.
"""


def smaps(pid: int) -> dict[str, int]:
    """USS, PSS and RSS of ``pid`` in MB, from /proc/PID/smaps_rollup."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        values[name] = int(rest.split()[0])
    uss = sum(v for k, v in values.items() if k.startswith("Private_"))
    return {"uss_mb": uss // 1024, "pss_mb": values["Pss"] // 1024, "rss_mb": values["Rss"] // 1024}


def children(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(p) for p in found]


#: Paths only this checkout has, loaded after the others in a side-by-side boot (``python -m bench ab boot``): its
#: private memory is then read with the filters' plans and the technique catalogue made.
CHOOSING: Final = (
    "/api/v2/techniques",
    "/api/v2/puzzles/random?stars=3",
    "/api/v2/puzzles/random?technique=X-Wing&min_score=1000&max_score=1500",
    "/api/v2/puzzles/daily",
)


def boot(
    env: dict[str, str], workers: int, log: Path, ids: Path, seconds: float, extra: tuple[str, ...] = ()
) -> dict[str, Any]:
    port = free_port()
    # The Procfile's line, on a loopback port: the configured server (SUDOKUPOOL_SERVER) and its settings.
    argv = serve_argv(port)
    started = time.perf_counter()
    with log.open("wb") as out:
        env = {**os.environ, **env, "WEB_CONCURRENCY": str(workers)}
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        ready = None
        while time.perf_counter() - started < 600:
            if process.poll() is not None:
                raise RuntimeError(f"the service exited with {process.returncode}; see {log}")
            loads = len(re.findall(r"loaded \d+ puzzles", log.read_text(errors="replace")))
            if loads >= workers:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=2) as response:
                        if response.status == 200:
                            ready = time.perf_counter() - started
                            break
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass
            time.sleep(0.02)
        if ready is None:
            raise RuntimeError(f"not ready in 600 s; see {log}")
        text = log.read_text(errors="replace")
        load_seconds = [float(s) for s in re.findall(r"loaded \d+ puzzles.* in ([0-9.]+) s", text)]
        base = f"http://127.0.0.1:{port}"
        for path in ("/api/v2/puzzles/random", "/api/v2/puzzles/{id}", *extra):
            script = BENCH / "random_ids.lua"
            length = seconds if path in ("/api/v2/puzzles/random", "/api/v2/puzzles/{id}") else 1
            wrk = ["wrk", "-t1", "-c16", f"-d{length:g}s", "-H", f"X-API-Key: {KEY}"]
            wrk += ["-s", str(script), base, "--", str(ids) if "{id}" in path else "-", path]
            subprocess.run(wrk, check=True, capture_output=True)
        memory = [smaps(pid) for pid in children(process.pid)]
        return {
            "ready_s": round(ready, 2),
            "load_s": load_seconds,
            "workers": memory,
            "packed": "from its pack" in text,
        }
    finally:
        process.terminate()
        process.wait(30)


def pack_of(export: Path) -> Path:
    """The pack beside ``export``; exit with the command that makes it when there is none."""
    pack = export.with_name(export.name.removesuffix(".gz").removesuffix(".ndjson") + ".pack")
    if not pack.exists():
        raise SystemExit(f"no pack beside {export}: run sudokupool pack {export}")
    return pack


def seaweed(export: Path, pack: Path, workdir: Path) -> tuple[Any, str]:
    from bench.stores import SeaweedS3

    server = SeaweedS3(workdir)
    server.start()
    try:
        bucket = server.new_bucket()
        client = server.client()
        for path in (pack, export):  # the pack first, as publish uploads them
            with path.open("rb") as body:
                client.put_object(Bucket=bucket, Key=f"exports/{path.name}", Body=body)
    except BaseException:
        server.stop()
        raise
    return server, f"s3://{bucket}/exports/"


def load_options(
    doc: str,
    *,
    pool: str,
    rounds: int,
    seconds: float,
    pool_help: str | None = None,
    seconds_help: str | None = None,
    connections: bool = False,
) -> argparse.ArgumentParser:
    """The options of a command here that loads a pool and measures it in rounds of some seconds each (the
    first paragraph of ``doc`` is its description), with wrk's ``--connections`` where it sends the load."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--pool", default=pool, help=pool_help)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--seconds", type=float, default=seconds, help=seconds_help)
    if connections:
        parser.add_argument("--connections", type=int, default=32, help="wrk's connections")
    return parser


def boot_main(argv: list[str] | None = None) -> int:
    parser = load_options(BOOT_DOC, pool="1m", rounds=3, seconds=3.0, seconds_help="of requests before memory is read")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--source", choices=("local", "local-cached", "s3", "both"), default="both")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    export = latest_export(directory)
    pack = pack_of(export)
    ids = sample_ids(export, OUT / f"ids-{directory.name}.txt")
    base_env = {"SUDOKUPOOL_API_KEYS": digest(KEY), "SUDOKUPOOL_LIMIT_KEYED": "1000000000",
                "SUDOKUPOOL_SYNC_INTERVAL": "0"}  # fmt: skip
    sources = ["local", "s3"] if args.source == "both" else [args.source]
    results: dict[str, list[dict[str, Any]]] = {source: [] for source in sources}
    with tempfile.TemporaryDirectory(prefix="sudokupool-boot-") as tmp:
        server = None
        try:
            url = ""
            if "s3" in sources:
                server, url = seaweed(export, pack, Path(tmp) / "seaweed")
            for n in range(args.rounds):
                for source in sources:  # interleaved, so drift on the shared machine hits both
                    env = dict(base_env)
                    if source == "local":
                        env["SUDOKUPOOL_EXPORTS"] = str(directory)
                    elif source == "local-cached":  # one cache directory for every round: the first copies
                        env |= {"SUDOKUPOOL_EXPORTS": str(directory), "SUDOKUPOOL_CACHE_DIR": f"{tmp}/local-cache"}
                    else:
                        assert server is not None
                        cache = Path(tmp) / f"cache-{n}"
                        env |= server.environ() | {"SUDOKUPOOL_EXPORTS": url, "SUDOKUPOOL_CACHE_DIR": str(cache),
                                                   "SUDOKUPOOL_S3_ENDPOINT_URL": server.endpoint_url}  # fmt: skip
                    found = boot(env, args.workers, OUT / f"boot-{source}.log", ids, args.seconds)
                    results[source].append(found)
                    print(source, n + 1, json.dumps(found), flush=True)
        finally:
            if server is not None:
                server.stop()
    print(f"pool {directory.name}, {args.workers} workers, {args.rounds} rounds (medians)")
    for source, runs in results.items():
        ready = statistics.median(r["ready_s"] for r in runs)
        packed = all(r["packed"] for r in runs)
        if not all(r["workers"] for r in runs):  # one worker: uvicorn serves in its own process, no child to read
            print(f"  {source:12s} ready {ready:6.2f} s  (no worker processes to read memory from)  packed {packed}")
            continue
        uss = statistics.median(max(w["uss_mb"] for w in r["workers"]) for r in runs)
        pss = statistics.median(max(w["pss_mb"] for w in r["workers"]) for r in runs)
        print(f"  {source:12s} ready {ready:6.2f} s  worst worker USS {uss} MB  PSS {pss} MB  packed {packed}")
    return 0


# --- connections ---------------------------------------------------------------------------------------------------

CONNECTIONS_DOC = """\
How each server `sudokupool serve` can start holds against abusive connections, measured side by side.

    python -m bench connections --pool snapshots     # docs/benchmarks.md, "Connections"

Both servers are started as the Procfile starts them (``sudokupool serve``, ``SUDOKUPOOL_SERVER`` set per
column) with the default settings. Per server: how long connections that send nothing, one byte, or a
partial head stay open (and what they are answered); how long a kept-alive connection stays open after
an answer, idle or with one byte sent half a second later; the resident memory that clients add which
pipeline 256 KB of requests each and never read (all the server's processes, from /proc); and the
bounds of a request head as the server applies them (largest head, most header lines, longest
request-target accepted, found by bisection; what a larger one gets), and whether bare-LF line endings
are taken. Times are seconds, rounded to 0.1 s; a connection still open at the cap shows as ``> cap``.
"""

REQUEST = b"GET /api/v1/puzzles/random HTTP/1.1\r\nHost: t\r\n\r\n"
HEAD_START = b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\n"


def connect(server: Server, timeout: float) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=timeout)


def until_closed(sock: socket.socket, since: float) -> tuple[float | None, bytes]:
    """Seconds from ``since`` until the server closed ``sock`` (None: still open at its timeout), and what it
    sent meanwhile."""
    received, closed = read_until_closed(sock)
    return (time.monotonic() - since if closed else None), received


def shown(seconds: float | None, cap: float) -> str:
    return f"> {cap:g}" if seconds is None else f"{seconds:.1f}"


def answered(received: bytes) -> str:
    return received.split(b"\r\n", 1)[0].decode(errors="replace") if received else "nothing"


def slow_connections(server: Server, cap: float) -> dict[str, str]:
    found: dict[str, str] = {}
    with connect(server, cap) as sock:
        seconds, got = until_closed(sock, time.monotonic())
        found["a connection that sends nothing: closed after (s)"] = f"{shown(seconds, cap)}, {answered(got)}"
    socks = [connect(server, cap) for _ in range(30)]
    started = time.monotonic()
    for sock in socks:
        sock.sendall(b"G")
    results = [until_closed(sock, started) for sock in socks]
    for sock in socks:
        sock.close()
    worst = None if any(s is None for s, _ in results) else max(s for s, _ in results if s is not None)
    answers = sorted({answered(got) for _, got in results})
    found["30 connections that send one byte: last closed after (s)"] = f"{shown(worst, cap)}, {', '.join(answers)}"
    with connect(server, cap) as sock:
        started = time.monotonic()
        sock.sendall(HEAD_START)
        seconds, got = until_closed(sock, started)
        found["a partial head: closed after (s)"] = f"{shown(seconds, cap)}, {answered(got)}"
    for name, byte in (("idle", b""), ("one byte sent at 0.5 s", b"G")):
        with connect(server, cap) as sock:
            sock.sendall(HEAD_START + b"\r\n")
            first = sock.recv(65536)
            started = time.monotonic()
            if byte:
                time.sleep(0.5)
                sock.sendall(byte)
            seconds, _ = until_closed(sock, started)
            found[f"after an answer, {name}: closed after (s)"] = f"{shown(seconds, cap)} ({answered(first)})"
    return found


def non_readers(server: Server, clients: int, size: int = 256_000) -> str:
    """RSS the server's processes gain from ``clients`` that each pipeline ``size`` bytes of requests
    and never read."""
    before = tree_rss(server.pid)
    with non_reading_clients(("127.0.0.1", server.port), REQUEST, clients, size, seconds=8) as sent:
        after = tree_rss(server.pid)
    return f"+{(after - before) / 2**20:.0f} MB ({clients} clients, {sent / 1e6:.1f} MB sent)"


def status(server: Server, raw: bytes) -> tuple[str, int]:
    """The status line of the server's answer to ``raw`` and the length of its body."""
    with connect(server, 10) as sock:
        with contextlib.suppress(OSError):  # a server may refuse a large head before it is all sent
            sock.sendall(raw)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
                head, sep, body = received.partition(b"\r\n\r\n")
                if sep:
                    lines = head.lower().split(b"\r\n")
                    length = [int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length:")]
                    if not length or len(body) >= length[0]:
                        return answered(received), len(body)
        except (ConnectionResetError, TimeoutError):
            pass
        return answered(received), 0


def head_of(size: int) -> bytes:
    """A request head of exactly ``size`` bytes, in headers of at most 4,000 bytes."""
    lines, left = [], size - len(HEAD_START) - 2
    while left > 0:
        part = min(left, 4000) if left - 4000 >= 16 or left <= 4000 else left - 16
        lines.append(b"X-%04d: " % len(lines) + b"a" * (part - 10) + b"\r\n")
        left -= part
    return HEAD_START + b"".join(lines) + b"\r\n"


def lines_of(count: int) -> bytes:
    return HEAD_START + b"".join(b"X-%d: a\r\n" % n for n in range(count - 1)) + b"\r\n"


def target_of(length: int) -> bytes:
    path = b"/api/v1/health?x="
    return b"GET " + path + b"a" * (length - len(path)) + b" HTTP/1.1\r\nHost: t\r\n\r\n"


def largest(server: Server, make: Callable[[int], bytes], low: int, high: int) -> tuple[int, str, int]:
    """The largest n in [low, high) whose ``make(n)`` is answered 200, and what n + 1 gets."""
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if status(server, make(middle))[0].startswith("HTTP/1.1 200") else (low, middle)
    refused, body = status(server, make(low + 1))
    return low, refused, body


def bounds(server: Server) -> dict[str, str]:
    found = {}
    for name, make, low, high in (
        ("largest head accepted (bytes)", head_of, 1000, 300_000),
        ("most header lines accepted", lines_of, 2, 20_000),
        ("longest request-target accepted (bytes)", target_of, 100, 300_000),
    ):
        size, refused, body = largest(server, make, low, high)
        found[name] = f"{size:,}; one more: {refused}, {body} bytes of body"
    line, _ = status(server, HEAD_START.replace(b"\r\n", b"\n") + b"\n")
    found["bare-LF line endings"] = line
    return found


def connections_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=CONNECTIONS_DOC.split("\n\n")[0])
    parser.add_argument("--pool", default="snapshots", help="pool name under bench/pools or a directory")
    parser.add_argument("--clients", type=int, default=40, help="clients that pipeline and never read")
    parser.add_argument("--cap", type=float, default=40.0, help="seconds a connection is watched before '> cap'")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    columns: dict[str, dict[str, str]] = {}
    for name in ("uvicorn", "granian"):
        server = service(directory, OUT / f"connections-{name}.log", env={"SUDOKUPOOL_SERVER": name})
        server.start()
        try:
            found = slow_connections(server, args.cap)
            found["clients pipelining 256 KB, never reading: RSS"] = non_readers(server, args.clients)
            found.update(bounds(server))
        finally:
            server.stop()
        columns[name] = found
        print(name, found, file=sys.stderr)
    versions = ", ".join(f"{name} {version(name)}" for name in ("uvicorn", "granian", "httptools", "uvloop"))
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, {versions}")
    print("| | uvicorn | granian |\n|---|---|---|")
    for row in columns["uvicorn"]:
        print(f"| {row} | {columns['uvicorn'][row]} | {columns['granian'][row]} |")
    return 0


# --- cpu_per_request -----------------------------------------------------------------------------------------------

CPU_PER_REQUEST_DOC = """\
Server CPU time per request, by path: where the service's microseconds go beside the bare app's.

    python -m bench cpu-per-request [--pool snapshots] [--rounds 3] [--seconds 5] [--connections 32]
        [--redis [--only-random]]

(python -m bench harness runs it too, unless ``--no-cpu``.)

req/s says how fast; this says how much CPU the server process spent for each answer (utime + stime
from /proc over a wrk run, divided by the requests), which is what separates the work of a path from
the wakeups and syscalls every answer pays. Every target runs in every round, order rotated; medians.

With ``--redis`` a second service counts its limits in a local valkey-server; its rows add the CPU the
valkey process spent per request (``redis_cpu_us``), which shares the machine's cores with the service.
``--only-random`` keeps v2 random alone (in process, and with ``--redis`` in Redis).
"""

REDIS_RANDOM = "v2 random, key, Redis limiter"


def cpu_per_request_measure(
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
    fixed = service(pool_dir(pool), OUT / "cpu-fixed.log", app="bench.peers:fixed_headers_app").start()
    bare = uvicorn("bare", "bench.peers:bare_app", "--app-dir", str(ROOT), env={"BENCH_BODY_SIZE": "700"}, probe="/",
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


def cpu_per_request_main(argv: list[str] | None = None) -> int:
    parser = load_options(
        CPU_PER_REQUEST_DOC, pool=str(BENCH.parent / "snapshots"), rounds=3, seconds=5.0, connections=True
    )
    parser.add_argument("--redis", action="store_true", help="also v2 random with the limiter in a local valkey")
    parser.add_argument("--only-random", action="store_true", help="v2 random only")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    results = cpu_per_request_measure(args.pool, rounds=args.rounds, seconds=args.seconds, redis=args.redis,
                      only_random=args.only_random, connections=args.connections)  # fmt: skip
    print(table(results))
    if REDIS_RANDOM in results:
        local, shared = results["v2 random, key"], results[REDIS_RANDOM]
        print(f"\nRedis limiter / in-process: req/s {shared['rps'] / local['rps']:.2f}x, "
              f"server CPU per request {shared['cpu_us'] / local['cpu_us']:.2f}x")  # fmt: skip
    return 0


# --- server_choice -------------------------------------------------------------------------------------------------

SERVER_CHOICE_DOC = """\
The server the Procfile ships, side by side: uvicorn and granian, the access log off and on.

    python -m bench server-choice --pool snapshots --rounds 5 --seconds 4     # docs/benchmarks.md, "Servers"

Every service target is started as the Procfile starts it (``sudokupool serve``, its flags and logging),
with ``SUDOKUPOOL_SERVER`` and ``SUDOKUPOOL_ACCESS_LOG`` set per target; the baseline (1.0) is the bare
ASGI app (bench/peers.py (bare_app)) on uvicorn with a body of the service's median size, and the bare app on
granian shows that server's own limit. Besides req/s, the servers' CPU time per answer (all their
processes, from /proc, over each wrk run): on a shared machine it moves far less than req/s, and
``× bare (CPU)`` is the throughput ratio one core would give. The limiter is on for ``/api/v2`` and
counts every request (a key with a limit of 10^9, and the anonymous limit raised alike), but never
trips. wrk loads each target in interleaved rounds; medians of req/s, p99 and CPU per answer. Also the
resident memory of one and of two workers.
"""

VARIANTS = {
    "uvicorn": {"SUDOKUPOOL_SERVER": "uvicorn"},
    "uvicorn, access log on": {"SUDOKUPOOL_SERVER": "uvicorn", "SUDOKUPOOL_ACCESS_LOG": "on"},
    "granian": {"SUDOKUPOOL_SERVER": "granian"},
    "granian, access log on": {"SUDOKUPOOL_SERVER": "granian", "SUDOKUPOOL_ACCESS_LOG": "on"},
}


def granian_bare(size: int, log: Path) -> Server:
    argv = ["granian", "--interface", "asgi", "--loop", "uvloop", "--http", "1", "--no-ws", "--host", "127.0.0.1",
            "--port", "{port}", "--working-dir", str(ROOT), "bench.peers:bare_app"]  # fmt: skip
    return Server("bare granian", argv, env={"BENCH_BODY_SIZE": str(size)}, probe="/", log=log)


def former_procfile(directory: Path, log: Path) -> Server:
    """A variant: the Procfile's former line, the uvicorn CLI with uvicorn's own access log (the default)."""
    env = dict(service(directory, log).env)
    argv = [sys.executable, "-m", "uvicorn", "--factory", "sudokupool.app:create_app", "--host", "127.0.0.1",
            "--port", "{port}", "--no-proxy-headers", "--no-server-header"]  # fmt: skip
    return Server("former Procfile", argv, env=env, probe="/api/v1/health", log=log)


def tree_cpu(pid: int) -> float:
    return sum(cpu_seconds(p) for p in process_tree(pid))


def workers_memory(directory: Path) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for name in ("uvicorn", "granian"):
        found[name] = {}
        for workers in (1, 2):
            env = {**VARIANTS[name], "WEB_CONCURRENCY": str(workers)}
            server = service(directory, OUT / f"workers-{name}-{workers}.log", env=env).start()
            try:
                time.sleep(1)
                found[name][str(workers)] = tree_rss(server.pid)
            finally:
                server.stop()
    return found


def server_choice_main(argv: list[str] | None = None) -> int:
    parser = load_options(
        SERVER_CHOICE_DOC,
        pool="snapshots",
        rounds=5,
        seconds=4.0,
        pool_help="pool name under bench/pools or a directory",
        connections=True,
    )
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    servers: list[Server] = []
    key = {"X-API-Key": KEY}
    found: list[tuple[Server, Target]] = []
    try:
        for name, env in VARIANTS.items():
            svc = service(directory, OUT / f"server-{name.replace(' ', '').replace(',', '-')}.log", env=env).start()
            servers.append(svc)
            found.append((svc, Target(f"{name}: v2 random", svc.base, "/api/v2/puzzles/random", key)))
            found.append((svc, Target(f"{name}: v2 by id", svc.base, "/api/v2/puzzles/{id}", key, ids)))
        former = former_procfile(directory, OUT / "server-former-procfile.log").start()
        servers.append(former)
        name = "variant: uvicorn CLI, uvicorn's access log (the former Procfile line)"
        found.append((former, Target(f"{name}: v2 random", former.base, "/api/v2/puzzles/random", key)))
        # Clients that take gzip (browsers, requests, httpx, curl --compressed) get the member as held.
        shipped = servers[0]
        gzip = {**key, "Accept-Encoding": "gzip"}
        found.append((shipped, Target("uvicorn, gzip client: v2 random", shipped.base, "/api/v2/puzzles/random", gzip)))
        found.append(
            (shipped, Target("uvicorn, gzip client: v2 by id", shipped.base, "/api/v2/puzzles/{id}", gzip, ids))
        )
        size = body_size(shipped)
        gzip_size = body_size(shipped, {"Accept-Encoding": "gzip"})
        bare = uvicorn("bare", "bench.peers:bare_app", "--app-dir", str(ROOT), env={"BENCH_BODY_SIZE": str(size)},
                       probe="/", log=OUT / "bare.log").start()  # fmt: skip
        servers.append(bare)
        small = {"BENCH_BODY_SIZE": str(gzip_size)}
        bare_small = uvicorn("bare, small body", "bench.peers:bare_app", "--app-dir", str(ROOT), env=small, probe="/",
                             log=OUT / "bare-small.log").start()  # fmt: skip
        servers.append(bare_small)
        bare_g = granian_bare(size, OUT / "bare-granian.log").start()
        servers.append(bare_g)
        found[:0] = [(bare, Target("bare ASGI app on uvicorn", bare.base, "/")),
                     (bare_small, Target(f"bare ASGI app on uvicorn, {gzip_size} B body", bare_small.base, "/")),
                     (bare_g, Target("bare ASGI app on granian", bare_g.base, "/"))]  # fmt: skip
        runs, cpu = rounds([t for _, t in found], count=args.rounds, seconds=args.seconds,
                           connections=args.connections, servers={t.name: s for s, t in found})  # fmt: skip
    finally:
        for server in servers:
            server.stop()
    results = {name: {**summarize(r), "cpu_us": round(statistics.median(cpu[name]), 1)} for name, r in runs.items()}
    memory = workers_memory(directory)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = OUT / f"{stamp}-servers.json"
    path.write_text(json.dumps({"machine": machine(), "pool": str(directory), "body_size": size,
                                "throughput": results, "memory": memory}, indent=2))  # fmt: skip
    base = results["bare ASGI app on uvicorn"]
    print("| target | req/s (median) | min-max | p99 ms | × bare (req/s) | server CPU µs/answer | × bare (CPU) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, s in results.items():
        errors = f" ({s['errors']} errors, {s['status_errors']} non-2xx)" if s["errors"] or s["status_errors"] else ""
        print(f"| {name}{errors} | {s['rps']:,} | {s['rps_min']:,}-{s['rps_max']:,} | {s['p99_ms']} "
              f"| {s['rps'] / base['rps']:.2f} | {s['cpu_us']} | {base['cpu_us'] / s['cpu_us']:.2f} |")  # fmt: skip
    print("\nresident memory (all processes), bytes:", json.dumps(memory))
    print(f"\nresults: {path}")
    return 0


# --- redis_capacity ------------------------------------------------------------------------------------------------

REDIS_CAPACITY_DOC = """\
What the shared limiter costs Redis: valkey CPU per counted request and per call, and memory per counter.

    python -m bench redis-capacity [--rounds 2000] [--batch 32]

Starts a valkey-server and a three-node Valkey cluster (bench/stores.py) on loopback ports, and counts
batches of ``--batch`` hits of distinct identities (the worst case: every request a different client,
so every hit is its own counter) through :class:`~sudokupool.ratelimit.redis.RedisStore`, as an instance
does when that many requests wait at the same moment. Reports the CPU the valkey processes spent (from
/proc), per hit and per call, and the memory of one counter (``MEMORY USAGE``). The figures feed the
capacity note in docs/operations.md. Not a test: numbers depend on the machine.
"""


async def load(store: RedisStore, *, rounds: int, batch: int) -> tuple[int, float]:
    """Hits counted and the seconds it took: ``rounds`` batches of ``batch`` distinct identities."""
    started = time.perf_counter()
    for n in range(rounds):
        identities = [f"ip:10.{n % 250}.{n // 250 % 250}.{k}" for k in range(batch)]
        await asyncio.gather(*(store.hit(identity, 10**9) for identity in identities))
    return rounds * batch, time.perf_counter() - started


async def redis_capacity_measure(url: str, mode: str, pids: list[int], *, rounds: int, batch: int) -> dict[str, float]:
    store = RedisStore.from_url(url, timeout=2.0, mode=mode)
    try:
        await load(store, rounds=50, batch=batch)  # connect, load the script, warm up
        calls = store.calls
        before = sum(cpu_seconds(pid) for pid in pids)
        hits, seconds = await load(store, rounds=rounds, batch=batch)
        used = sum(cpu_seconds(pid) for pid in pids) - before
        calls = store.calls - calls
    finally:
        await store.aclose()
    return {
        "hits_per_second": round(hits / seconds),
        "valkey_cpu_us_per_hit": round(used / hits * 1e6, 2),
        "valkey_cpu_us_per_call": round(used / calls * 1e6, 1),
        "hits_per_call": round(hits / calls, 1),
    }


def counter_bytes(port: int) -> int:
    with redis.Redis(port=port) as client:
        keys = client.keys("sudokupool:rl:*")[:100]
        return round(sum(int(client.memory_usage(key) or 0) for key in keys) / len(keys))


def redis_capacity_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=REDIS_CAPACITY_DOC.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sudokupool-redis-") as tmp:
        single_dir, cluster_dir = Path(tmp) / "single", Path(tmp) / "cluster"
        single_dir.mkdir()
        cluster_dir.mkdir()
        single = ValkeyServer(single_dir)
        cluster = ValkeyCluster(cluster_dir)
        single.start()
        cluster.start()
        try:
            for _ in range(2):  # interleaved, twice: the machine is shared
                for mode, url, nodes in (("single", single.url, [single]), ("cluster", cluster.url, cluster.nodes)):
                    pids = [node.process.pid for node in nodes if node.process is not None]
                    found = asyncio.run(redis_capacity_measure(url, mode, pids, rounds=args.rounds, batch=args.batch))
                    print(f"{mode:>7}: {found}")
            print(f"one counter: {counter_bytes(single.port)} bytes (MEMORY USAGE)")
        finally:
            single.stop()
            cluster.stop()
    return 0


# --- swap_pack -----------------------------------------------------------------------------------------------------

SWAP_PACK_DOC = """\
p99 while the service swaps packs back to back, against its own steady p99, saturated and paced.

    python -m bench swap-pack [--pool 1m] [--rounds 3] [--seconds 20] [--pause-ms 0] [--source local|s3]

The service (``bench/peers.py (swap_app)``) serves the pool's latest export from its pack. Each round, wrk
measures v2 by id for ``--seconds`` in steady state, then for ``--seconds`` while the service reloads
(maps and checks the pack, swaps it in, drops the old one) again and again, one reload right after
the other, so the whole window is under swaps, not one swap diluted in a window. It first measures the
saturated rate, then runs the same rounds paced at about half of it (each connection pauses after an
answer, ``bench/random_ids.lua``), and prints the median p99 ratio (during / steady) of each, with the
number of swaps per window. The pool needs its pack: ``sudokupool pack bench/pools/<pool>/pool-*.ndjson.gz``.
With ``--source s3`` the export and its pack are served by a real SeaweedFS on the same machine (as
``python -m bench boot`` does) and the service has no cache directory, so every reload downloads the pack
again, as a live sync of a new export does; SeaweedFS's own CPU is then on the same two cores.
"""


def swapping(server: Server, stop: threading.Event, count: list[int], failed: list[str]) -> None:
    """Reload back to back until ``stop`` is set (each waits for the one before to be swapped in)."""
    while not stop.is_set():
        get(server.base + "/__bench/swap")
        while not (status := json.loads(get(server.base + "/__bench/swap-status")[2])).get("done"):
            time.sleep(0.02)
        if "error" in status:
            failed.append(status["error"])
            return
        count[0] += 1


def window(server: Server, target: Target, seconds: float, pause_ms: int, swaps: bool) -> tuple[Run, int]:
    stop, count, failed = threading.Event(), [0], []
    thread = threading.Thread(target=swapping, args=(server, stop, count, failed))
    if swaps:
        thread.start()
    run = wrk(target, seconds=seconds, connections=32, pause_ms=pause_ms)
    stop.set()
    if swaps:
        thread.join()
        if failed:
            raise RuntimeError(f"a reload failed: {failed[0]}")
    if run.errors or run.status_errors:
        raise RuntimeError(f"{run.status_errors} non-2xx, {run.errors} errors")
    return run, count[0]


def swap_pack_main(argv: list[str] | None = None) -> int:
    parser = load_options(SWAP_PACK_DOC, pool="1m", rounds=3, seconds=20.0)
    parser.add_argument("--pause-ms", type=int, default=0, help="the paced runs' pause (0: from the saturated rate)")
    parser.add_argument("--source", choices=("local", "s3"), default="local")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    export = latest_export(directory)
    ids = sample_ids(export, OUT / f"ids-{directory.name}.txt")
    with contextlib.ExitStack() as stack:
        env = {}
        if args.source == "s3":
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sudokupool-swap-")))
            storage, url = seaweed(export, pack_of(export), workdir)
            stack.callback(storage.stop)
            env = storage.environ() | {"SUDOKUPOOL_EXPORTS": url, "SUDOKUPOOL_S3_ENDPOINT_URL": storage.endpoint_url}
        return swap_pack_measure(directory, ids, args, env)


def swap_pack_measure(directory: Path, ids: Path, args: argparse.Namespace, env: dict[str, str]) -> int:
    server = service(directory, OUT / "swap-pack.log", swap=True, env=env)
    server.start()
    try:
        target = Target("v2 by id", server.base, "/api/v2/puzzles/{id}", {"X-API-Key": KEY}, ids)
        saturated = wrk(target, seconds=5, connections=32)  # warm-up, and the saturated rate
        # 32 connections saturating at R req/s spend 32000 / R ms on each request, most of it queued; once
        # paced the queue is gone, so pausing twice that long after each answer gives about half the rate
        # (the printed steady req/s say what it was).
        pause = args.pause_ms or max(1, round(64000 / saturated.rps))
        results: dict[str, list[dict[str, float]]] = {"saturated": [], "paced": []}
        for n in range(args.rounds):
            for mode, pause_ms in (("saturated", 0), ("paced", pause)):
                steady, _ = window(server, target, args.seconds, pause_ms, swaps=False)
                during, swaps = window(server, target, args.seconds, pause_ms, swaps=True)
                found = {
                    "steady_rps": steady.rps,
                    "steady_p99_ms": steady.p99_ms,
                    "during_rps": during.rps,
                    "during_p99_ms": during.p99_ms,
                    "p99_ratio": during.p99_ms / steady.p99_ms,
                    "swaps": swaps,
                }
                results[mode].append(found)
                print(f"round {n + 1} {mode} (pause {pause_ms} ms): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in found.items()), flush=True)  # fmt: skip
    finally:
        server.stop()
    print(f"pool {directory.name} ({args.source}), {args.rounds} rounds x {args.seconds:g} s windows, medians")
    for mode, runs in results.items():
        m = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"  {mode:9s} p99 during swaps {m['during_p99_ms']:.2f} ms / steady {m['steady_p99_ms']:.2f} ms = "
              f"{m['p99_ratio']:.2f}x; {m['steady_rps']:,.0f} / {m['during_rps']:,.0f} req/s; "
              f"{m['swaps']:.0f} swaps a window")  # fmt: skip
    return 0


# --- images --------------------------------------------------------------------------------------------------------

IMAGES_DOC = """\
The image formats side by side: uncached SVG against an uncached PNG render, every cached format against the
baseline's cached PNG, and the render cache's byte budget under a flood of distinct representations.

    python -m bench images [--baseline main] [--pool snapshots] [--rounds 3] [--seconds 3] [--flood-seconds 10]

Three services of the same pool run at once, started as the harness starts them (the Procfile's command,
``/api/v2`` behind the limiter through a key whose limit never trips):

- **this, no cache** (``SUDOKUPOOL_IMAGE_CACHE_BYTES=0``): every answer is a first render. Targets: PNG, SVG
  and WebP of random ids from the whole pool (the same ids for each format).
- **this** (default budget) and **baseline** (BASELINE's src/ from git archive): every answer is a
  cached one. Targets: 300 ids, rendered once before the rounds, as PNG on both and as SVG and WebP (480 px)
  and a 1000 px PNG on this.

wrk alternates between all targets in the harness's rotated rounds; the script prints the median req/s of
each and the two ratios the goals name (SVG/PNG uncached, each cached format/baseline cached PNG). Then the
flood: wrk sends distinct (id, variant, format, size) requests for ``--flood-seconds`` to a fourth service
with a 2 MiB budget while its metrics port is read every 0.1 s, and the script prints the most the cache
ever held against its budget.
"""

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


def images_main(argv: list[str] | None = None) -> int:
    parser = load_options(IMAGES_DOC, pool=str(ROOT / "snapshots"), rounds=3, seconds=3.0)
    parser.add_argument("--baseline", default="main", help="git revision whose cached PNG is the baseline")
    parser.add_argument("--flood-seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    all_ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    hot = all_ids.read_text().split()[:300]
    hot_ids = write_lines(OUT / "images-hot-ids.txt", hot)
    key = {"X-API-Key": KEY}
    image = "/api/v2/puzzles/{id}/image"
    with baseline_src(args.baseline) as src:
        cold = service(directory, OUT / "images-cold.log", env={"SUDOKUPOOL_IMAGE_CACHE_BYTES": "0"})
        this = service(directory, OUT / "images-this.log")
        base = service(directory, OUT / "images-baseline.log")
        base.env["PYTHONPATH"] = str(src)
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
            runs, _ = rounds(targets, count=args.rounds, seconds=args.seconds, connections=32)
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


# --- filters -------------------------------------------------------------------------------------------------------

FILTERS_DOC = """\
Random with filters against plain random, side by side on one service: the cost of choosing.

    python -m bench filters [--pool demo|100k|1m-lean|DIR] [--rounds 5] [--seconds 5]

One service (this checkout, as the harness starts it, from the pool's pack when it has one) takes wrk's
load on v2 random with a key whose limit never trips and ``Accept-Encoding: gzip`` (as browsers and
HTTP libraries send it: the body goes out as the pool holds it): plain, then with each filter the issue
names (``technique``, ``stars``, ``min_score`` with ``max_score``) and all of them with ``difficulty`` at
once, in the harness's rotated rounds (a warm-up first). The filters' values come from the pool itself
(its technique catalogue and a record's stars and score), so every request is answered 200. A filter
also changes which puzzles are served, and harder ones have longer bodies; ``technique, whole pool``
(the technique the most puzzles use) serves the same puzzles as plain random, so it is the cost of
choosing alone. Prints, medians over the rounds, each target's req/s and the server process's CPU time
per request (utime + stime from /proc over each wrk run, as python -m bench cpu-per-request: on a shared
machine req/s follows the other processes' load, CPU per request much less), each with its ratio to
plain random, then the handler's CPU time per call in this process for each query (the parse, the pick
and the body, no HTTP).
"""


def get_json(base: str, path: str) -> dict[str, object]:
    request = urllib.request.Request(base + path, headers={"X-API-Key": KEY})
    with urllib.request.urlopen(request, timeout=10) as answer:
        body: dict[str, object] = json.loads(answer.read())
        return body


def queries(base: str) -> dict[str, str]:
    """Filter queries over the pool's own values: a technique about one puzzle in 20 uses (a list of that
    size, not the whole pool), a record's stars, a score range around a record's score."""
    catalogue = get_json(base, "/api/v2/techniques")["techniques"]
    assert isinstance(catalogue, list)
    total = max(t["puzzles"] for t in catalogue)
    technique = min((t for t in catalogue if t["puzzles"]), key=lambda t: abs(t["puzzles"] - total / 20))["name"]
    broad = max(catalogue, key=lambda t: t["puzzles"])["name"]
    record = get_json(base, f"/api/v2/puzzles/random?technique={urllib.parse.quote(technique)}")
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


def filters_main(argv: list[str] | None = None) -> int:
    parser = load_options(
        FILTERS_DOC,
        pool="demo",
        rounds=5,
        seconds=5.0,
        pool_help="demo (snapshots/), a name under bench/pools, or a dir",
        connections=True,
    )
    # A full pool checks its bodies in the background once served (about 13 s per 100k), at a cost per request.
    parser.add_argument("--settle", type=float, default=0.0, help="seconds to wait once the service answers")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = ROOT / "snapshots" if args.pool == "demo" else pool_dir(args.pool)
    server = service(directory, OUT / "filters.log")
    server.start()
    try:
        time.sleep(args.settle)
        found = queries(server.base)
        key = {"X-API-Key": KEY, "Accept-Encoding": "gzip"}
        targets = [Target("plain", server.base, "/api/v2/puzzles/random", key)]
        targets += [Target(name, server.base, f"/api/v2/puzzles/random?{query}", key) for name, query in found.items()]
        runs, cpu_us = rounds(targets, count=args.rounds, seconds=args.seconds, connections=args.connections,
                              servers={t.name: server for t in targets})  # fmt: skip
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
