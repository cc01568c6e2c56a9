"""The running service under load: boot, connections, CPU per request, server choice, Redis capacity, pack
swaps, images and filters."""

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
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any, Final

import httpx
import redis

from bench.child import KEY
from bench.harness import (
    KEYED,
    OUT,
    ROOT,
    Children,
    Meter,
    Run,
    Target,
    bare,
    baseline_src,
    body_size,
    cpu_meter,
    interleave,
    latest_export,
    machine,
    options,
    pool_dir,
    pool_ids,
    rounds,
    service,
    valkey,
    wrk,
)
from sudokupool.ratelimit.keys import digest
from sudokupool.ratelimit.redis import RedisStore
from support.servers import (
    Server,
    cpu_seconds,
    free_port,
    get,
    non_reading_clients,
    read_until_closed,
    redis_outages,
    serve_argv,
    tree_rss,
)
from support.stores import SeaweedS3, ValkeyCluster, ValkeyServer

# --- boot ----------------------------------------------------------------------------------------------------------

#: Paths only this checkout has, loaded after the others in a side-by-side boot (``python -m bench ab boot``): its
#: private memory is then read with the filters' plans, the technique catalogue, a set of 50 and a clue filter made.
CHOOSING: Final = (
    "/api/v2/techniques",
    "/api/v2/puzzles/random?stars=3",
    "/api/v2/puzzles/random?technique=X-Wing&min_score=1000&max_score=1500",
    "/api/v2/puzzles/daily",
    "/api/v2/puzzles?count=50&seed=1",
    "/api/v2/puzzles/random?min_clues=24&max_clues=28&symmetry=rotational-180",
)
#: The loader's summary line in the service's log, with its seconds.
LOADED = re.compile(r"loaded [\d,]+ puzzles.* in ([0-9.]+) s")
#: The settings of a booted service: a key whose limit never trips, no live sync.
BOOTED = {"SUDOKUPOOL_API_KEYS": digest(KEY), "SUDOKUPOOL_LIMIT_KEYED": "1000000000", "SUDOKUPOOL_SYNC_INTERVAL": "0"}


def smaps(pid: int) -> dict[str, float]:
    """USS (the ``Private_*`` lines: what stopping ``pid`` alone gives back), PSS and RSS of ``pid`` in MB, to
    0.1 MB (a 10 % target on ~25 MB needs more than whole MB)."""
    values = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        values[name] = int(rest.split()[0])
    uss = sum(v for k, v in values.items() if k.startswith("Private_"))
    return {
        "uss_mb": round(uss / 1024, 1),
        "pss_mb": round(values["Pss"] / 1024, 1),
        "rss_mb": round(values["Rss"] / 1024, 1),
    }


def boot(
    env: dict[str, str], workers: int, log: Path, ids: Path, seconds: float, extra: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The service started as the Procfile does with ``WEB_CONCURRENCY=workers``, timed from process start until
    every worker has logged its load and ``/api/v1/health`` answers 200; then v2 random and by id for ``seconds``
    (``extra`` paths 1 s each) so every worker touches its pool, and each worker process's memory."""
    server = Server("boot", serve_argv(), env={**env, "WEB_CONCURRENCY": str(workers)}, probe="/api/v1/health", log=log)
    with server:
        began = time.perf_counter() - server.ready_seconds
        while len(LOADED.findall(log.read_text(errors="replace"))) < workers:
            if server.process is None or server.process.poll() is not None:
                raise RuntimeError(f"the service exited; see {log}")
            time.sleep(0.02)
        ready = time.perf_counter() - began
        for path in ("/api/v2/puzzles/random", "/api/v2/puzzles/{id}", *extra):
            length = seconds if path in ("/api/v2/puzzles/random", "/api/v2/puzzles/{id}") else 1
            wrk(Target(path, server.base, path, KEYED, ids), seconds=length, connections=16)
        workers_ = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
        text = log.read_text(errors="replace")
        return {"ready_s": round(ready, 2), "load_s": [float(s) for s in LOADED.findall(text)],
                "workers": [smaps(int(pid)) for pid in workers_], "packed": "from its pack" in text}  # fmt: skip


def boot_rounds(
    args: argparse.Namespace, ids: Path, sides: list[str], settings: Callable[[str, int], dict[str, str]],
    *, warm_up: bool = False, extra: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, tuple[float, float, float]]:  # fmt: skip
    """:func:`boot` of each side (its settings for round n; ``extra``: its extra paths) once a round, rounds rotated,
    each printed; then each side's medians, printed and returned: ready seconds, the worst worker's USS and PSS."""

    def measure(side: str, n: int) -> dict[str, Any]:
        more = (extra or {}).get(side, ()) if n >= 0 else ()
        found = boot(BOOTED | settings(side, n), args.workers, OUT / f"boot-{side}.log", ids,
                     args.seconds if n >= 0 else 1, more)  # fmt: skip
        print(side, n + 1 if n >= 0 else "warm-up", json.dumps(found), flush=True)
        return found

    print(f"{args.workers} workers, {args.rounds} rounds, medians:")
    medians = {}
    for side, runs in interleave(sides, args.rounds, measure, warm_up).items():
        ready = statistics.median(r["ready_s"] for r in runs)
        packed = all(r["packed"] for r in runs)
        if not all(r["workers"] for r in runs):  # one worker: uvicorn serves in its own process, no child to read
            print(f"  {side:12s} ready {ready:6.2f} s  (no worker processes to read memory from)  packed {packed}")
            continue
        uss, pss = (statistics.median(max(w[k] for w in r["workers"]) for r in runs) for k in ("uss_mb", "pss_mb"))
        print(f"  {side:12s} ready {ready:6.2f} s  worst worker USS {uss} MB  PSS {pss} MB  packed {packed}")
        medians[side] = (ready, uss, pss)
    return medians


def pack_of(export: Path) -> Path:
    """The pack beside ``export``; exit with the command that makes it when there is none."""
    pack = export.with_name(export.name.removesuffix(".gz").removesuffix(".ndjson") + ".pack")
    if not pack.exists():
        raise SystemExit(f"no pack beside {export}: run sudokupool pack {export}")
    return pack


@contextlib.contextmanager
def seaweed(export: Path) -> Iterator[dict[str, str]]:
    """A real SeaweedFS (support/stores.py) holding ``export`` and its pack: the settings that serve them from it."""
    with tempfile.TemporaryDirectory(prefix="bench-seaweed-") as workdir:
        server = SeaweedS3(Path(workdir))
        server.start()
        try:
            bucket = server.new_bucket()
            for path in (pack_of(export), export):  # the pack first, as publish uploads them
                with path.open("rb") as body:
                    server.client().put_object(Bucket=bucket, Key=f"exports/{path.name}", Body=body)
            yield server.environ() | {"SUDOKUPOOL_EXPORTS": f"s3://{bucket}/exports/",
                                      "SUDOKUPOOL_S3_ENDPOINT_URL": server.endpoint_url}  # fmt: skip
        finally:
            server.stop()


def boot_main(argv: list[str] | None = None) -> int:
    """Boot time and private memory of the service on a pool with its pack, from a local directory or from S3.

    Each round starts the service as the Procfile does (``WEB_CONCURRENCY=--workers``) and times it from process
    start until every worker has logged its load and ``/api/v1/health`` answers 200; then a few seconds of v2 random
    and by id (wrk) so every worker touches its pool, and each worker's ``/proc/PID/smaps_rollup`` (USS, PSS, RSS).
    ``local``: no cache directory (the service maps the copy of the pack it keeps per machine and source);
    ``local-cached``: one ``SUDOKUPOOL_CACHE_DIR`` for the run (the first round copies the pack there); ``s3``: a
    real SeaweedFS and an empty cache directory each round (every round downloads the pack); ``both``: local and s3.
    """
    parser = options(boot_main.__doc__, pool="1m", rounds=3, seconds=3.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--source", choices=("local", "local-cached", "s3", "both"), default="both")
    args = parser.parse_args(argv)
    directory = pool_dir(args.pool)
    export = latest_export(directory)
    pack_of(export)
    ids = pool_ids(directory)
    sources = ["local", "s3"] if args.source == "both" else [args.source]
    with tempfile.TemporaryDirectory(prefix="sudokupool-boot-") as tmp, contextlib.ExitStack() as stack:
        s3 = stack.enter_context(seaweed(export)) if "s3" in sources else {}
        local = {"SUDOKUPOOL_EXPORTS": str(directory)}
        settings = {"local": local, "local-cached": local | {"SUDOKUPOOL_CACHE_DIR": f"{tmp}/local-cache"}}
        # s3: an empty cache directory each round, so every round downloads the pack.
        boot_rounds(
            args, ids, sources, lambda source, n: settings.get(source, s3 | {"SUDOKUPOOL_CACHE_DIR": f"{tmp}/{n}"})
        )
    return 0


# --- connections ---------------------------------------------------------------------------------------------------

REQUEST = b"GET /api/v1/puzzles/random HTTP/1.1\r\nHost: t\r\n\r\n"
HEAD_START = b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\n"


def connect(server: Server, timeout: float) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=timeout)


def answered(received: bytes) -> str:
    return received.split(b"\r\n", 1)[0].decode(errors="replace") if received else "nothing"


def closed_after(socks: list[socket.socket], since: float, cap: float) -> tuple[str, list[bytes]]:
    """Seconds from ``since`` until the server closed the last of ``socks`` (``> cap``: one still open at its
    timeout), and what it sent on each."""
    results = [read_until_closed(sock) for sock in socks]
    seconds = time.monotonic() - since
    return (f"{seconds:.1f}" if all(closed for _, closed in results) else f"> {cap:g}"), [got for got, _ in results]


def slow_connections(server: Server, cap: float) -> dict[str, str]:
    found: dict[str, str] = {}
    cases = {"a connection that sends nothing": (1, b""), "30 connections that send one byte": (30, b"G"),
             "a partial head": (1, HEAD_START)}  # fmt: skip
    for name, (count, sent) in cases.items():
        socks = [connect(server, cap) for _ in range(count)]
        started = time.monotonic()
        for sock in socks:
            sock.sendall(sent)
        seconds, got = closed_after(socks, started, cap)
        found[f"{name}: closed after (s)"] = f"{seconds}, {', '.join(sorted({answered(g) for g in got}))}"
        for sock in socks:
            sock.close()
    for name, byte in (("idle", b""), ("one byte sent at 0.5 s", b"G")):
        with connect(server, cap) as sock:
            sock.sendall(HEAD_START + b"\r\n")
            first = sock.recv(65536)
            started = time.monotonic()
            if byte:
                time.sleep(0.5)
                sock.sendall(byte)
            seconds, _ = closed_after([sock], started, cap)
            found[f"after an answer, {name}: closed after (s)"] = f"{seconds} ({answered(first)})"
    return found


def status(server: Server, raw: bytes) -> tuple[str, int]:
    """The status line of the server's answer to ``raw`` and the length of its body."""
    with connect(server, 10) as sock:
        with contextlib.suppress(OSError):  # a server may refuse a large head before it is all sent
            sock.sendall(raw)
        received = b""
        with contextlib.suppress(ConnectionResetError, TimeoutError):
            while chunk := sock.recv(65536):
                received += chunk
                head, sep, body = received.partition(b"\r\n\r\n")
                length = [int(line.split(b":")[1]) for line in head.lower().split(b"\r\n")
                          if line.startswith(b"content-length:")]  # fmt: skip
                if sep and (not length or len(body) >= length[0]):
                    return answered(received), len(body)
        return answered(received), 0


def head_of(size: int) -> bytes:
    """A request head of exactly ``size`` bytes, in headers of at most 4,000 bytes."""
    lines, left = [], size - len(HEAD_START) - 2
    while left > 0:
        part = min(left, 4000) if left - 4000 >= 16 or left <= 4000 else left - 16
        lines.append(b"X-%04d: " % len(lines) + b"a" * (part - 10) + b"\r\n")
        left -= part
    return HEAD_START + b"".join(lines) + b"\r\n"


BOUNDS: dict[str, tuple[Callable[[int], bytes], int, int]] = {
    "largest head accepted (bytes)": (head_of, 1000, 300_000),
    "most header lines accepted": (lambda n: HEAD_START + b"".join(b"X-%d: a\r\n" % i for i in range(n - 1)) + b"\r\n",
                                   2, 20_000),
    "longest request-target accepted (bytes)": (
        lambda n: b"GET /api/v1/health?x=" + b"a" * (n - 17) + b" HTTP/1.1\r\nHost: t\r\n\r\n", 100, 300_000),
}  # fmt: skip


def bounds(server: Server) -> dict[str, str]:
    """Per bound, the largest n whose request is answered 200 (by bisection) and what n + 1 gets."""
    found = {}
    for name, (make, low, high) in BOUNDS.items():
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if status(server, make(middle))[0].startswith("HTTP/1.1 200") else (low, middle)
        refused, body = status(server, make(low + 1))
        found[name] = f"{low:,}; one more: {refused}, {body} bytes of body"
    found["bare-LF line endings"] = status(server, HEAD_START.replace(b"\r\n", b"\n") + b"\n")[0]
    return found


def connections_main(argv: list[str] | None = None) -> int:
    """How each server ``sudokupool serve`` can start holds against abusive connections, side by side.

    Per server (started as the Procfile does, default settings): how long connections that send nothing, one byte or
    a partial head stay open, and what they are answered; how long a kept-alive connection stays open after an
    answer, idle or with one byte sent at 0.5 s; the resident memory that clients pipelining 256 KB each and never
    reading add; the bounds of a request head (by bisection; what one more gets); bare-LF line endings.
    """
    parser = options(connections_main.__doc__, pool="snapshots")
    parser.add_argument("--clients", type=int, default=40, help="clients that pipeline and never read")
    parser.add_argument("--cap", type=float, default=40.0, help="seconds a connection is watched before '> cap'")
    args = parser.parse_args(argv)
    columns: dict[str, dict[str, str]] = {}
    for name in ("uvicorn", "granian"):
        with service(pool_dir(args.pool), OUT / f"connections-{name}.log", env={"SUDOKUPOOL_SERVER": name}) as server:
            found = slow_connections(server, args.cap)
            before = tree_rss(server.pid)
            with non_reading_clients(("127.0.0.1", server.port), REQUEST, args.clients, 256_000, seconds=8) as sent:
                added = (tree_rss(server.pid) - before) / 2**20
            found["clients pipelining 256 KB, never reading: RSS"] = f"+{added:.0f} MB ({sent / 1e6:.1f} MB sent)"
            columns[name] = found | bounds(server)
        print(name, columns[name], file=sys.stderr)
    versions = ", ".join(f"{name} {version(name)}" for name in ("uvicorn", "granian", "httptools", "uvloop"))
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, {versions}")
    print("| | uvicorn | granian |\n|---|---|---|")
    for row in columns["uvicorn"]:
        print(f"| {row} | {columns['uvicorn'][row]} | {columns['granian'][row]} |")
    return 0


# --- cpu_per_request -----------------------------------------------------------------------------------------------

REDIS_RANDOM = "v2 random, key, Redis limiter"


def script_calls(url: str) -> int:
    """The limiter's script calls Valkey has run so far."""
    with redis.Redis.from_url(url) as client:
        return int(client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))


def cpu_per_request(
    pool: str, *, count: int, seconds: float, with_redis: bool = False, only_random: bool = False, connections: int = 32
) -> dict[str, dict[str, float]]:
    """Median req/s and server CPU µs per request of each target, over ``count`` rotated rounds, as a table."""
    directory = pool_dir(pool)
    with contextlib.ExitStack() as stack:
        svc = stack.enter_context(service(directory, OUT / "cpu-service.log"))
        fixed = stack.enter_context(service(directory, OUT / "cpu-fixed.log", app="bench.peers:fixed_headers_app"))
        bare_app = stack.enter_context(bare("bare", OUT / "cpu-bare.log", 700))
        found = [
            (bare_app, Target("bare ASGI app", bare_app.base, "/")),
            (svc, Target("v1 stats", svc.base, "/api/v1/stats")),
            (svc, Target("v2 stats, anonymous", svc.base, "/api/v2/stats")),
            (svc, Target("v2 stats, key", svc.base, "/api/v2/stats", KEYED)),
            (svc, Target("v1 random", svc.base, "/api/v1/puzzles/random")),
            (svc, Target("v1 random, key header sent", svc.base, "/api/v1/puzzles/random", KEYED)),
            (fixed, Target("v2 random, fixed limit headers, no counting", fixed.base, "/api/v2/puzzles/random", KEYED)),
            (svc, Target("v2 random, anonymous", svc.base, "/api/v2/puzzles/random")),
            (svc, Target("v2 random, key", svc.base, "/api/v2/puzzles/random", KEYED)),
        ]
        found = found[-1:] if only_random else found
        meters: dict[str, dict[str, Meter]] = {t.name: {"cpu_us": cpu_meter(s)} for s, t in found}
        if with_redis:
            store = stack.enter_context(valkey())
            shared = stack.enter_context(service(directory, OUT / "cpu-service-redis.log", redis_url=store.url))
            found.append((shared, Target(REDIS_RANDOM, shared.base, "/api/v2/puzzles/random", KEYED)))
            assert store.process is not None
            valkey_pid = store.process.pid
            meters[REDIS_RANDOM] = {"cpu_us": cpu_meter(shared), "redis_cpu_us": lambda: 1e6 * cpu_seconds(valkey_pid),
                                    "calls": lambda: script_calls(store.url)}  # fmt: skip
        results = rounds([t for _, t in found], count=count, seconds=seconds, connections=connections, meters=meters)
        if with_redis and redis_outages(shared):
            print(f"warning: Redis outages during the run (requests answered without Redis); see {shared.log}")
    print("| target | req/s (median) | server CPU µs per request (median) |\n|---|---:|---:|")
    for name, r in results.items():
        also = f" (+ {r['redis_cpu_us']:.1f} in valkey; {1 / r['calls']:.1f} requests a call)" if "calls" in r else ""
        print(f"| {name} | {r['rps']:,} | {r['cpu_us']:.1f}{also} |")
    return results


def cpu_per_request_main(argv: list[str] | None = None) -> int:
    """Server CPU time per request, by path: where the service's microseconds go beside the bare app's.

    The server processes' CPU per answer (utime + stime from /proc over each wrk run) separates the work of a path
    from the wakeups and syscalls every answer pays; rotated rounds, medians (python -m bench harness runs it too).
    ``--redis``: also a service counting its limits in a local valkey-server, with valkey's CPU per request and the
    requests per limiter call. ``--only-random``: v2 random alone.
    """
    parser = options(cpu_per_request_main.__doc__, pool="snapshots", rounds=3, seconds=5.0, connections=True)
    parser.add_argument("--redis", action="store_true", help="also v2 random with the limiter in a local valkey")
    parser.add_argument("--only-random", action="store_true", help="v2 random only")
    args = parser.parse_args(argv)
    results = cpu_per_request(args.pool, count=args.rounds, seconds=args.seconds, with_redis=args.redis,
                              only_random=args.only_random, connections=args.connections)  # fmt: skip
    if REDIS_RANDOM in results:
        local, shared = results["v2 random, key"], results[REDIS_RANDOM]
        print(f"\nRedis limiter / in-process: req/s {shared['rps'] / local['rps']:.2f}x, "
              f"server CPU per request {shared['cpu_us'] / local['cpu_us']:.2f}x")  # fmt: skip
    return 0


# --- server_choice -------------------------------------------------------------------------------------------------

VARIANTS = {
    "uvicorn": {"SUDOKUPOOL_SERVER": "uvicorn"},
    "uvicorn, access log on": {"SUDOKUPOOL_SERVER": "uvicorn", "SUDOKUPOOL_ACCESS_LOG": "on"},
    "granian": {"SUDOKUPOOL_SERVER": "granian"},
    "granian, access log on": {"SUDOKUPOOL_SERVER": "granian", "SUDOKUPOOL_ACCESS_LOG": "on"},
}


def server_choice_main(argv: list[str] | None = None) -> int:
    """The server the Procfile ships, side by side: uvicorn and granian, the access log off and on.

    Each service as the Procfile starts it with ``SUDOKUPOOL_SERVER`` and ``SUDOKUPOOL_ACCESS_LOG`` set, and the
    Procfile's former line (the uvicorn CLI with its own access log), against the bare ASGI app (bench/peers.py)
    with the service's median body on uvicorn (1.0) and on granian (that server's own limit). Besides req/s, the
    servers' CPU per answer, which a shared machine moves far less: ``× bare (CPU)`` is the ratio one core would
    give. The limiter counts every request but never trips. Rotated rounds, medians; then one and two workers' RSS.
    """
    parser = options(server_choice_main.__doc__, pool="snapshots", rounds=5, seconds=4.0, connections=True)
    args = parser.parse_args(argv)
    directory = pool_dir(args.pool)
    ids = pool_ids(directory)
    gzip = {**KEYED, "Accept-Encoding": "gzip"}
    with contextlib.ExitStack() as stack:
        found: list[tuple[Server, Target]] = []
        for name, env in VARIANTS.items():
            log = OUT / ("server-" + re.sub(r"\W+", "-", name) + ".log")
            svc = stack.enter_context(service(directory, log, env=env))
            found.append((svc, Target(f"{name}: v2 random", svc.base, "/api/v2/puzzles/random", KEYED)))
            found.append((svc, Target(f"{name}: v2 by id", svc.base, "/api/v2/puzzles/{id}", KEYED, ids)))
        former = service(directory, OUT / "server-former-procfile.log")
        former.argv = [sys.executable, "-m", "uvicorn", "--factory", "sudokupool.app:create_app", "--host", "127.0.0.1",
                       "--port", "{port}", "--no-proxy-headers", "--no-server-header"]  # fmt: skip
        former = stack.enter_context(former)
        shipped = found[0][0]
        size, gzip_size = body_size(shipped), body_size(shipped, {"Accept-Encoding": "gzip"})
        bare_g = bare("bare granian", OUT / "bare-granian.log", size)
        bare_g.argv = ["granian", "--interface", "asgi", "--loop", "uvloop", "--http", "1", "--no-ws", "--host",
                       "127.0.0.1", "--port", "{port}", "--working-dir", str(ROOT), "bench.peers:bare_app"]  # fmt: skip
        bares = {
            "bare ASGI app on uvicorn": bare("bare", OUT / "bare.log", size),
            f"bare ASGI app on uvicorn, {gzip_size} B body": bare("bare, small", OUT / "bare-small.log", gzip_size),
            "bare ASGI app on granian": bare_g,
        }
        former_line = "variant: uvicorn CLI, uvicorn's access log (the former Procfile line): v2 random"
        found = (
            [(stack.enter_context(s), Target(name, s.base, "/")) for name, s in bares.items()]
            + found
            + [
                (former, Target(former_line, former.base, "/api/v2/puzzles/random", KEYED)),
                (shipped, Target("uvicorn, gzip client: v2 random", shipped.base, "/api/v2/puzzles/random", gzip)),
                (shipped, Target("uvicorn, gzip client: v2 by id", shipped.base, "/api/v2/puzzles/{id}", gzip, ids)),
            ]
        )
        meters = {t.name: {"cpu_us": cpu_meter(s)} for s, t in found}
        results = rounds([t for _, t in found], count=args.rounds, seconds=args.seconds,
                         connections=args.connections, meters=meters, strict=False)  # fmt: skip
    memory: dict[str, dict[str, int]] = {}
    for name in ("uvicorn", "granian"):
        for workers in (1, 2):
            env = {**VARIANTS[name], "WEB_CONCURRENCY": str(workers)}
            with service(directory, OUT / f"workers-{name}-{workers}.log", env=env) as server:
                time.sleep(1)
                memory.setdefault(name, {})[str(workers)] = tree_rss(server.pid)
    path = OUT / f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-servers.json"
    path.write_text(json.dumps({"machine": machine(), "pool": str(directory), "body_size": size,
                                "throughput": results, "memory": memory}, indent=2))  # fmt: skip
    base = results["bare ASGI app on uvicorn"]
    print("| target | req/s (median) | min-max | p99 ms | × bare (req/s) | server CPU µs/answer | × bare (CPU) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, s in results.items():
        errors = f" ({s['errors']} errors, {s['status_errors']} non-2xx)" if s["errors"] or s["status_errors"] else ""
        print(f"| {name}{errors} | {s['rps']:,} | {s['rps_min']:,}-{s['rps_max']:,} | {s['p99_ms']} "
              f"| {s['rps'] / base['rps']:.2f} | {s['cpu_us']:.1f} | {base['cpu_us'] / s['cpu_us']:.2f} |")  # fmt: skip
    print(f"\nresident memory (all processes), bytes: {json.dumps(memory)}\n\nresults: {path}")
    return 0


# --- redis_capacity ------------------------------------------------------------------------------------------------


async def capacity(url: str, mode: str, pids: list[int], *, count: int, batch: int) -> dict[str, float]:
    """Valkey's CPU over ``count`` batches of ``batch`` hits of distinct identities, after 50 batches of warm-up."""
    store = RedisStore.from_url(url, timeout=2.0, mode=mode)

    async def load(batches: int) -> None:
        for n in range(batches):
            identities = [f"ip:10.{n % 250}.{n // 250 % 250}.{k}" for k in range(batch)]
            await asyncio.gather(*(store.hit(identity, 10**9) for identity in identities))

    try:
        await load(50)  # connect, load the script, warm up
        calls, before, started = store.calls, sum(cpu_seconds(p) for p in pids), time.perf_counter()
        await load(count)
        seconds, used, calls = (
            time.perf_counter() - started,
            sum(cpu_seconds(p) for p in pids) - before,
            store.calls - calls,
        )
    finally:
        await store.aclose()
    hits = count * batch
    return {"hits_per_second": round(hits / seconds), "valkey_cpu_us_per_hit": round(used / hits * 1e6, 2),
            "valkey_cpu_us_per_call": round(used / calls * 1e6, 1),
            "hits_per_call": round(hits / calls, 1)}  # fmt: skip


def redis_capacity_main(argv: list[str] | None = None) -> int:
    """What the shared limiter costs Redis: valkey CPU per counted request and per call, and memory per counter.

    A valkey-server and a three-node Valkey cluster count batches of ``--batch`` hits of distinct identities (the
    worst case: every request another client) through the Redis limiter store, twice, interleaved: the valkey
    processes' CPU per hit and per call, and one counter's ``MEMORY USAGE`` (docs/operations.md's capacity note).
    """
    parser = options(redis_capacity_main.__doc__, rounds=2000)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sudokupool-redis-") as tmp:
        single, cluster = ValkeyServer(Path(tmp)), ValkeyCluster(Path(tmp))  # the cluster's nodes in node0/, node1/...
        single.start()
        cluster.start()
        try:
            for _ in range(2):
                for mode, url, nodes in (("single", single.url, [single]), ("cluster", cluster.url, cluster.nodes)):
                    pids = [node.process.pid for node in nodes if node.process is not None]
                    print(f"{mode:>7}: {asyncio.run(capacity(url, mode, pids, count=args.rounds, batch=args.batch))}")
            with redis.Redis(port=single.port) as client:
                keys = client.keys("sudokupool:rl:*")[:100]
                print(f"one counter: {sum(int(client.memory_usage(k) or 0) for k in keys) / len(keys):.0f} bytes")
        finally:
            single.stop()
            cluster.stop()
    return 0


# --- swap_pack -----------------------------------------------------------------------------------------------------


def window(server: Server, target: Target, seconds: float, pause_ms: int, swaps: bool) -> tuple[Run, int]:
    """One wrk run of ``seconds``; with ``swaps``, the service reloads back to back meanwhile (each reload waits
    for the one before to be swapped in). The run and the reloads done."""
    stop, done, failed = threading.Event(), [0], []

    def swapping() -> None:
        while not stop.is_set():
            get(server.base + "/__bench/swap")
            while not (found := json.loads(get(server.base + "/__bench/swap-status")[2])).get("done"):
                time.sleep(0.02)
            if "error" in found:
                failed.append(found["error"])
                return
            done[0] += 1

    thread = threading.Thread(target=swapping)
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
    return run, done[0]


def swap_pack(directory: Path, ids: Path, *, rounds: int, seconds: float, pause_ms: int = 0,
              env: dict[str, str] | None = None) -> dict[str, dict[str, float]]:  # fmt: skip
    """The medians of each mode (saturated, paced), printed."""
    with service(directory, OUT / "swap-pack.log", app="bench.peers:swap_app", env=env) as server:
        target = Target("v2 by id", server.base, "/api/v2/puzzles/{id}", KEYED, ids)
        saturated = wrk(target, seconds=5, connections=32)  # warm-up, and the saturated rate
        # 32 connections saturating at R req/s spend 32000 / R ms on each request, most of it queued; once paced
        # the queue is gone, so pausing twice that long after each answer gives about half the rate.
        pause = pause_ms or max(1, round(64000 / saturated.rps))
        results: dict[str, list[dict[str, float]]] = {"saturated": [], "paced": []}
        for n in range(rounds):
            for mode, wait in (("saturated", 0), ("paced", pause)):
                steady, _ = window(server, target, seconds, wait, swaps=False)
                during, swaps = window(server, target, seconds, wait, swaps=True)
                results[mode].append(found := {
                    "steady_rps": steady.rps, "steady_p99_ms": steady.p99_ms, "during_rps": during.rps,
                    "during_p99_ms": during.p99_ms, "p99_ratio": during.p99_ms / steady.p99_ms, "swaps": swaps,
                })  # fmt: skip
                print(f"round {n + 1} {mode} (pause {wait} ms): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in found.items()), flush=True)  # fmt: skip
    print(f"pool {directory.name}, {rounds} rounds x {seconds:g} s windows, medians")
    found_medians = {
        mode: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for mode, runs in results.items()
    }
    for mode, m in found_medians.items():
        print(f"  {mode:9s} p99 during swaps {m['during_p99_ms']:.2f} ms / steady {m['steady_p99_ms']:.2f} ms = "
              f"{m['p99_ratio']:.2f}x; {m['steady_rps']:,.0f} / {m['during_rps']:,.0f} req/s; "
              f"{m['swaps']:.0f} swaps a window")  # fmt: skip
    return found_medians


def swap_pack_main(argv: list[str] | None = None) -> int:
    """p99 while the service swaps packs back to back, against its own steady p99, saturated and paced.

    The service (bench/peers.py's swap app) serves the pool's latest export from its pack. Each round wrk loads v2
    by id for ``--seconds`` steady, then for ``--seconds`` while the service reloads (maps and checks the pack,
    swaps it in, drops the old one) again and again: saturated, then paced at about half that rate (a pause of
    ``--pause-ms`` after each answer; 0: chosen from the saturated rate). The median p99 ratio (during / steady)
    and swaps per window of each. ``--source s3``: served by a real SeaweedFS with no cache directory, so every
    reload downloads the pack, as a live sync of a new export does.
    """
    parser = options(swap_pack_main.__doc__, pool="1m", rounds=3, seconds=20.0)
    parser.add_argument("--pause-ms", type=int, default=0, help="the paced runs' pause (0: from the saturated rate)")
    parser.add_argument("--source", choices=("local", "s3"), default="local")
    args = parser.parse_args(argv)
    directory = pool_dir(args.pool)
    with contextlib.ExitStack() as stack:
        env = stack.enter_context(seaweed(latest_export(directory))) if args.source == "s3" else {}
        print(f"source {args.source}")
        swap_pack(
            directory, pool_ids(directory), rounds=args.rounds, seconds=args.seconds, pause_ms=args.pause_ms, env=env
        )
    return 0


# --- images --------------------------------------------------------------------------------------------------------

FLOOD_BUDGET = 2 * 1024 * 1024


def flood(directory: Path, ids: list[str], seconds: float) -> tuple[float, int]:
    """(most bytes the render cache held at any reading, readings) under a flood of distinct requests."""
    rng = random.Random(11)
    # 20,000 paths over the pool's ids: nearly every one a representation no other path asks for.
    paths = OUT / "images-flood-ids.txt"
    paths.write_text("".join(f"{rng.choice(ids)}/image?variant={rng.choice(('puzzle', 'solution'))}"
                             f"&format={rng.choice(('png', 'svg', 'webp'))}&size={rng.randint(100, 2000)}\n"
                             for _ in range(20_000)))  # fmt: skip
    port = free_port()
    env = {"SUDOKUPOOL_IMAGE_CACHE_BYTES": str(FLOOD_BUDGET), "SUDOKUPOOL_METRICS_PORT": str(port)}
    readings: list[float] = []
    stop = threading.Event()

    def watch() -> None:
        pattern = re.compile(r"^sudokupool_image_cache_bytes (\S+)$", re.MULTILINE)
        while not stop.is_set():
            if found := pattern.search(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text):
                readings.append(float(found.group(1)))
            time.sleep(0.1)

    with service(directory, OUT / "images-flood.log", env=env) as svc:
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            run = wrk(Target("flood", svc.base, "/api/v2/puzzles/{id}", KEYED, paths), seconds=seconds, connections=16)
        finally:
            stop.set()
            watcher.join()
    print(f"  flood: {run.requests} requests ({run.rps:.0f}/s), {run.status_errors} non-2xx, {run.errors} errors")
    return max(readings, default=0.0), len(readings)


def images_main(argv: list[str] | None = None) -> int:
    """Image formats side by side: uncached SVG against an uncached PNG, every cached format against the
    baseline's cached PNG, and the render cache's byte budget under a flood of distinct representations.

    Three services of the pool: this checkout with no cache (every answer a first render; PNG, SVG and WebP of
    random ids), this checkout and ``--baseline`` (a git revision's src/) with the default cache (300 ids rendered
    once before the rounds). Rotated rounds, median req/s and the ratios the goals name. Then a fourth service with
    a 2 MiB budget takes ``--flood-seconds`` of distinct (id, variant, format, size) requests while its metrics port
    is read every 0.1 s: the most the cache ever held.
    """
    parser = options(images_main.__doc__, pool="snapshots", rounds=3, seconds=3.0)
    parser.add_argument("--baseline", default="main", help="git revision whose cached PNG is the baseline")
    parser.add_argument("--flood-seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    directory = pool_dir(args.pool)
    all_ids = pool_ids(directory)
    hot = OUT / "images-hot-ids.txt"
    hot.write_text("\n".join(all_ids.read_text().split()[:300]) + "\n")
    image = "/api/v2/puzzles/{id}/image"
    with baseline_src(args.baseline) as src, contextlib.ExitStack() as stack:
        cold = stack.enter_context(
            # A work queue deeper than wrk's 32 connections: every uncached request waits for its render, none is a 503.
            service(
                directory,
                OUT / "images-cold.log",
                env={"SUDOKUPOOL_IMAGE_CACHE_BYTES": "0", "SUDOKUPOOL_WORK_QUEUE": "64"},
            )
        )
        this = stack.enter_context(service(directory, OUT / "images-this.log"))
        base = stack.enter_context(service(directory, OUT / "images-baseline.log", env={"PYTHONPATH": str(src)}))
        with httpx.Client(headers=KEYED, timeout=60) as client:  # render each once: the rounds see cached answers
            for server, queries in ((base, ["variant=puzzle"]), (this, ["variant=puzzle", "format=svg", "format=webp",
                                                                          "size=1000"])):  # fmt: skip
                for query in queries:
                    for cid in hot.read_text().split():
                        client.get(f"{server.base}/api/v2/puzzles/{cid}/image?{query}").raise_for_status()
        targets = [
            Target(f"uncached {f}", cold.base, f"{image}?format={f}", KEYED, all_ids) for f in ("png", "svg", "webp")
        ]
        targets.append(Target("baseline: cached png", base.base, image, KEYED, hot))
        cached = {"png": "", "svg": "format=svg", "webp": "format=webp", "png 1000 px": "size=1000"}
        targets += [Target(f"this: cached {name}", this.base, f"{image}?{q}", KEYED, hot) for name, q in cached.items()]
        summary = rounds(targets, count=args.rounds, seconds=args.seconds, connections=32)
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, median req/s")
    for name, found in summary.items():
        print(f"  {name:28s} {found['rps']:9,.0f}  p50 {found['p50_ms']:6.2f} ms")
    rps = {name: found["rps"] for name, found in summary.items()}
    print(f"  SVG / PNG, uncached: {rps['uncached svg'] / rps['uncached png']:.1f}x (goal >= 5)")
    for name in ("this: cached png", "this: cached svg", "this: cached webp", "this: cached png 1000 px"):
        print(f"  {name} / baseline cached png: {rps[name] / rps['baseline: cached png']:.3f} (goal >= 0.90)")
    most, readings = flood(directory, all_ids.read_text().split(), args.flood_seconds)
    print(f"  render cache under the flood: at most {most:,.0f} of {FLOOD_BUDGET:,} bytes over {readings} readings")
    return 0 if most <= FLOOD_BUDGET else 1


# --- filters -------------------------------------------------------------------------------------------------------


def queries(base: str) -> dict[str, str]:
    """Filter queries over the pool's own values: a technique about one puzzle in 20 uses (a list of that
    size, not the whole pool), the technique the most use, a record's stars, a score range around its score."""
    catalogue = json.loads(get(base + "/api/v2/techniques", KEYED)[2])["techniques"]
    total = max(t["puzzles"] for t in catalogue)
    technique = min((t for t in catalogue if t["puzzles"]), key=lambda t: abs(t["puzzles"] - total / 20))["name"]
    broad = urllib.parse.quote(max(catalogue, key=lambda t: t["puzzles"])["name"])
    name = urllib.parse.quote(technique)
    record = json.loads(get(base + f"/api/v2/puzzles/random?technique={name}", KEYED)[2])
    stars, score, difficulty = record["stars"], record["score"], str(record["difficulty"]).lower()
    low, high = score - score // 10, score + score // 10
    clues, symmetry = record["clue_count"], record["symmetry"]
    four = f"difficulty={difficulty}&technique={name}&stars={stars}&min_score={low}&max_score={high}"
    return {
        "technique, whole pool": f"technique={broad}",
        "technique": f"technique={name}",
        "stars": f"stars={stars}",
        "score range": f"min_score={low}&max_score={high}",
        "all four": four,
        "clue range": f"min_clues={clues - 1}&max_clues={clues + 1}",
        "symmetry": f"symmetry={symmetry}",
        "all four, clues, symmetry": f"{four}&min_clues={clues - 2}&max_clues={clues + 2}&symmetry={symmetry}",
    }


def filters_main(argv: list[str] | None = None) -> int:
    """Random with filters against plain random, side by side on one service: the cost of choosing.

    wrk loads v2 random with a key and gzip, plain and with each filter (``technique``, ``stars``, ``min_score``
    with ``max_score``, all of them with ``difficulty``), the values taken from the pool itself so every request is
    answered 200; ``technique, whole pool`` (the one the most puzzles use) serves the same puzzles as plain random:
    the cost of choosing alone. Rotated rounds; medians of req/s and server CPU per request with their ratios to
    plain random, then the handler's CPU per call in a process of its own (no HTTP).
    """
    parser = options(filters_main.__doc__, pool="demo", rounds=5, seconds=5.0, connections=True)
    # A full pool checks its bodies in the background once served (about 13 s per 100k), at a cost per request.
    parser.add_argument("--settle", type=float, default=0.0, help="seconds to wait once the service answers")
    args = parser.parse_args(argv)
    directory = pool_dir(args.pool)
    with service(directory, OUT / "filters.log") as server:
        time.sleep(args.settle)
        found = {"plain": "", **queries(server.base)}
        gzip = {**KEYED, "Accept-Encoding": "gzip"}
        targets = [Target(name, server.base, f"/api/v2/puzzles/random?{query}", gzip) for name, query in found.items()]
        summary = rounds(targets, count=args.rounds, seconds=args.seconds, connections=args.connections,
                         meters={t.name: {"cpu_us": cpu_meter(server)} for t in targets})  # fmt: skip
    cases = json.dumps({name: ["random", query] for name, query in found.items()})
    with Children({"this": (ROOT / "src", {})}, "handlers", str(directory), "20000") as child:
        calls = [child.ask("this", cases) for _ in range(args.rounds)]
    handler = {name: statistics.median(r[name] for r in calls) for name in found}
    plain = summary["plain"]
    print(f"pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, {args.connections} connections, median")
    print("  target                    req/s  ratio   server CPU/request  ratio   handler CPU/call")
    for name, s in summary.items():
        print(f"  {name:22s} {s['rps']:8,.0f}  {s['rps'] / plain['rps']:5.3f}  {s['cpu_us']:13.1f} us  "
              f"{s['cpu_us'] / plain['cpu_us']:6.3f}  {handler[name]:10,.0f} ns  ?{found[name]}")  # fmt: skip
    return 0


# --- sets ----------------------------------------------------------------------------------------------------------


def sets_main(argv: list[str] | None = None) -> int:
    """A set of 10 (and of 50) with a seed against 10 random calls: puzzles per second and server CPU per puzzle.

    Two services of the pool, this checkout and ``--baseline`` (a git revision's src/; it has no sets), side by
    side. wrk loads v2 with a key and gzip: random on each (one puzzle a request), and this checkout's
    ``/api/v2/puzzles?count=N&seed=S`` with a seed drawn per request from a file of seeds, for N = 10 and 50.
    Rotated rounds, medians. Then the set handler's CPU per call in a process of its own (no HTTP): the server
    time of a set.
    """
    parser = options(sets_main.__doc__, pool="snapshots", rounds=5, seconds=4.0, connections=True)
    parser.add_argument("--baseline", default="main", help="git revision whose random is the baseline")
    parser.add_argument("--settle", type=float, default=0.0, help="seconds to wait once the services answer")
    args = parser.parse_args(argv)
    directory = pool_dir(args.pool)
    seeds = OUT / "sets-seeds.txt"
    seeds.write_text("\n".join(str(random.randrange(2**53)) for _ in range(20_000)) + "\n")
    gzip = {**KEYED, "Accept-Encoding": "gzip"}
    with baseline_src(args.baseline) as src, contextlib.ExitStack() as stack:
        this = stack.enter_context(service(directory, OUT / "sets-this.log"))
        base = stack.enter_context(service(directory, OUT / "sets-baseline.log", env={"PYTHONPATH": str(src)}))
        time.sleep(args.settle)
        targets = [
            Target("baseline: random", base.base, "/api/v2/puzzles/random", gzip),
            Target("this: random", this.base, "/api/v2/puzzles/random", gzip),
            Target("this: set of 10", this.base, "/api/v2/puzzles?count=10&seed={id}", gzip, seeds),
            Target("this: set of 50", this.base, "/api/v2/puzzles?count=50&seed={id}", gzip, seeds),
        ]
        meters = {t.name: {"cpu_us": cpu_meter(this if t.base == this.base else base)} for t in targets}
        summary = rounds(targets, count=args.rounds, seconds=args.seconds, connections=args.connections, meters=meters)
    cases = json.dumps({"set of 10": ["set", "count=10&seed=7"], "set of 50": ["set", "count=50&seed=7"],
                        "random": ["random", ""]})  # fmt: skip
    with Children({"this": (ROOT / "src", {})}, "handlers", str(directory), "2000") as child:
        calls = [child.ask("this", cases) for _ in range(args.rounds)]
    handler = {name: statistics.median(r[name] for r in calls) for name in json.loads(cases)}
    per = {"baseline: random": 1, "this: random": 1, "this: set of 10": 10, "this: set of 50": 50}
    plain = summary["baseline: random"]
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, "
          f"{args.connections} connections, median")  # fmt: skip
    print("  target               req/s   puzzles/s  ratio   server CPU/puzzle  ratio")
    for name, found in summary.items():
        puzzles, cpu = found["rps"] * per[name], found["cpu_us"] / per[name]
        print(f"  {name:18s} {found['rps']:8,.0f}  {puzzles:10,.0f}  {puzzles / plain['rps']:5.2f}  "
              f"{cpu:12.1f} us  {cpu / plain['cpu_us']:6.3f}")  # fmt: skip
    for name, ns in handler.items():
        print(f"  handler CPU per call, {name}: {ns / 1000:,.1f} us (goal for a set of 50: < 2,000 us on the 1M pool)")
    return 0
