"""The harness: pools, the service started as the Procfile does, wrk load in rotated rounds, and the throughput,
startup, memory and swap run (``python -m bench harness``)."""

from __future__ import annotations

import argparse
import contextlib
import gzip
import inspect
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
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

from bench import peers
from bench.child import KEY
from bench.servers import Server, cpu_seconds, get, proc_status, process_tree, redis_outages, serve_argv
from bench.stores import ValkeyServer
from sudokupool.ratelimit.keys import digest

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"
POOLS = BENCH / "pools"
LUA = BENCH / "random_ids.lua"
HEADERS_ONLY = "v2 random, limit headers only (nothing counted)"
REDIS_RANDOM = "v2 random (Redis limiter)"
T = TypeVar("T")
#: A counter read before and after each wrk run (CPU µs of a server, a store's calls): its growth per answer is kept.
Meter = Callable[[], float]


def options(
    doc: str | None, *, pool: str | None = None, rounds: int | None = None, seconds: float | None = None,
    connections: bool = False,
) -> argparse.ArgumentParser:  # fmt: skip
    """A command's parser, its docstring the description, with the load options it takes (and bench/out/ made)."""
    parser = argparse.ArgumentParser(
        description=inspect.cleandoc(doc or ""), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    if pool is not None:
        parser.add_argument("--pool", default=pool, help="demo, a name under bench/pools (made if missing) or a dir")
    if rounds is not None:
        parser.add_argument("--rounds", type=int, default=rounds)
    if seconds is not None:
        parser.add_argument("--seconds", type=float, default=seconds, help="of each run")
    if connections:
        parser.add_argument("--connections", type=int, default=32, help="wrk's connections")
    OUT.mkdir(exist_ok=True)
    return parser


def pool_dir(name: str) -> Path:
    """A pool directory: a path, ``demo`` (snapshots/), or a name under bench/pools/ (made when missing)."""
    path = ROOT / "snapshots" if name == "demo" else Path(name)
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


def pool_ids(directory: Path) -> Path:
    """The file of ids sampled from ``directory``'s latest export (bench/out/ids-NAME.txt)."""
    return sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")


def memory(directory: Path) -> dict[str, Any]:
    """A fresh process's load of ``directory`` and its memory (``python -m bench.child memory``)."""
    with Children({"this": (ROOT / "src", {})}, "memory", str(directory)) as child:
        found: dict[str, Any] = child.ready["this"]
        return found


def service(
    directory: Path, log: Path, *, app: str = "", redis_url: str = "", env: dict[str, str] | None = None
) -> Server:
    """The service on ``directory``'s exports as the Procfile starts it (or ``app``, a variant of bench/peers.py,
    started the same way), with a key and limits that never trip; with ``redis_url``, its limiter in that Redis.
    ``env`` adds settings (another server, the access log)."""
    settings = {
        "SUDOKUPOOL_EXPORTS": str(directory),
        "SUDOKUPOOL_API_KEYS": digest(KEY),
        "SUDOKUPOOL_LIMIT_KEYED": "1000000000",
        "SUDOKUPOOL_LIMIT_ANONYMOUS": "1000000000",
        "SUDOKUPOOL_SYNC_INTERVAL": "0",
        "SUDOKUPOOL_LOG_LEVEL": "info",
        **(env or {}),
    }
    if redis_url:
        # A timeout long enough that a valkey starved of CPU never sends a batch to the per-process fallback.
        settings |= {"SUDOKUPOOL_REDIS_URL": redis_url, "SUDOKUPOOL_REDIS_TIMEOUT": "5"}
    argv = serve_argv("{port}", *(("--app", app) if app else ()))
    return Server(app.partition(":")[2] or "service", argv, env=settings, probe="/api/v1/health", log=log)


def bare(name: str, log: Path, body_size: int, headers: str = "") -> Server:
    """The bare ASGI app (bench/peers.py) on the service's uvicorn settings, with a body of ``body_size``."""
    argv = [sys.executable, "-m", "uvicorn", "bench.peers:bare_app", "--app-dir", str(ROOT), "--host", "127.0.0.1",
            "--port", "{port}", "--loop", "uvloop", "--http", "httptools", "--no-access-log", "--workers", "1",
            "--no-proxy-headers", "--no-server-header"]  # fmt: skip
    env = {"BENCH_BODY_SIZE": str(body_size), "BENCH_HEADERS": headers or "[]"}
    return Server(name, argv, env=env, probe="/", log=log)


@contextlib.contextmanager
def valkey() -> Iterator[ValkeyServer]:
    """A valkey-server (bench/stores.py) for this run, stopped afterwards."""
    with tempfile.TemporaryDirectory(prefix="bench-valkey-") as workdir:
        server = ValkeyServer(Path(workdir))
        server.start()
        try:
            yield server
        finally:
            server.stop()


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


def body_size(server: Server, headers: dict[str, str] | None = None) -> int:
    """The median size of the service's random answers (as sent: with ``Accept-Encoding: gzip``, compressed)."""
    return int(statistics.median(len(get(server.base + "/api/v1/puzzles/random", headers)[2]) for _ in range(41)))


def targets(svc: Server, baselines: dict[str, Server], ids: Path, images: Path, redis: Server | None) -> list[Target]:
    key = {"X-API-Key": KEY}
    gzip_key = {**key, "Accept-Encoding": "gzip"}
    # Clients that take gzip (browsers, requests, httpx, curl --compressed) get the member as held.
    found = [
        Target("bare ASGI app", baselines["bare"].base, "/"),
        Target("bare ASGI app, service's headers", baselines["bare+headers"].base, "/"),
        Target("v2 random", svc.base, "/api/v2/puzzles/random", key),
        Target("v2 random?difficulty=hard", svc.base, "/api/v2/puzzles/random?difficulty=hard", key),
        Target("v2 by id", svc.base, "/api/v2/puzzles/{id}", key, ids),
        Target("v2 random (gzip client)", svc.base, "/api/v2/puzzles/random", gzip_key),
        Target("v2 by id (gzip client)", svc.base, "/api/v2/puzzles/{id}", gzip_key, ids),
        Target("v2 solution", svc.base, "/api/v2/puzzles/{id}/solution", key, ids),
        Target("v2 404", svc.base, "/api/v2/puzzles/0000000000000", key),
        Target("v1 random", svc.base, "/api/v1/puzzles/random"),
        Target("v1 by id", svc.base, "/api/v1/puzzles/{id}", ids=ids),
        # The spec's limit headers on v2 with nothing counted: between v1 and v2.
        Target(HEADERS_ONLY, baselines["fixed headers"].base, "/api/v2/puzzles/random", key),
    ]
    if redis is not None:
        found.append(Target(REDIS_RANDOM, redis.base, "/api/v2/puzzles/random", key))
        found.append(Target("v2 by id (Redis limiter)", redis.base, "/api/v2/puzzles/{id}", key, ids))
    found.append(Target("v2 image (cached)", svc.base, "/api/v2/puzzles/{id}/image", key, images))
    if "datasette" in baselines:
        found.append(Target("datasette random", baselines["datasette"].base, peers.RANDOM))
        found.append(Target("datasette by id", baselines["datasette"].base, peers.BY_ID, ids=ids))
    return found


def rotated(items: Sequence[T], n: int) -> list[T]:
    return [*items[n % len(items) :], *items[: n % len(items)]]


def interleave(
    items: Sequence[T], rounds: int, measure: Callable[[T, int], Any], warm_up: bool = False
) -> dict[T, list[Any]]:
    """Each item measured once a round, the order rotated each round; a warm-up round (n = -1) is not counted."""
    found: dict[T, list[Any]] = {item: [] for item in items}
    for n in range(-1 if warm_up else 0, rounds):
        for item in rotated(items, n):
            value = measure(item, n)
            if n >= 0:
                found[item].append(value)
    return found


class Children:
    """One process per side running ``python -m bench.child KIND ARGS`` on that side's source tree (and
    environment), answering a JSON line for each line it is sent."""

    def __init__(self, sides: dict[str, tuple[Path, dict[str, str]]], kind: str, *args: str) -> None:
        self.procs: dict[str, subprocess.Popen[str]] = {}
        for name, (src, env) in sides.items():
            # An empty value unsets a variable (metrics off is SUDOKUPOOL_METRICS_PORT unset).
            full = {k: v for k, v in {**os.environ, **env, "PYTHONPATH": str(src)}.items() if v}
            argv = [sys.executable, "-m", "bench.child", kind, *args]
            self.procs[name] = subprocess.Popen(argv, env=full, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                text=True, cwd=ROOT)  # fmt: skip
        self.ready = {name: self._read(name)["ready"] for name in self.procs}

    def _read(self, name: str) -> Any:
        out = self.procs[name].stdout
        assert out is not None
        if not (line := out.readline()):
            raise RuntimeError(f"{name}'s process exited with {self.procs[name].wait()}")
        return json.loads(line)

    def ask(self, name: str, line: str) -> Any:
        stdin = self.procs[name].stdin
        assert stdin is not None
        stdin.write(line + "\n")
        stdin.flush()
        return self._read(name)

    def __enter__(self) -> Children:
        return self

    def __exit__(self, *_: object) -> None:
        for proc in self.procs.values():
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(60)


def cpu_meter(server: Server) -> Meter:
    """CPU µs of ``server``'s processes so far (utime + stime of its process tree, from /proc)."""
    return lambda: 1e6 * sum(cpu_seconds(pid) for pid in process_tree(server.pid))


def rounds(
    found: list[Target], *, count: int, seconds: float, connections: int,
    meters: dict[str, dict[str, Meter]] | None = None, strict: bool = True,
) -> dict[str, dict[str, float]]:  # fmt: skip
    """wrk on each target in rounds, the order rotated each round so that drift on a shared machine hits all alike,
    after a warm-up round of 1 s each (connections, caches, SQLite's first pages). By target name: :func:`summarize`
    of its runs and the median growth per answer of each of its ``meters`` over a run; ``strict``: raise on any
    non-2xx answer or socket error."""
    meters = meters or {}
    targets = {t.name: t for t in found}

    def measure(name: str, n: int) -> tuple[Run, dict[str, float]]:
        before = {m: meter() for m, meter in meters.get(name, {}).items()}
        run = wrk(targets[name], seconds=seconds if n >= 0 else 1, connections=connections)
        per = {m: (meter() - before[m]) / max(run.requests, 1) for m, meter in meters.get(name, {}).items()}
        shown = "".join(f"  {m} {v:.2f}/answer" for m, v in per.items())
        print(f"  round {n + 1 if n >= 0 else 'warm-up'} {name:32} {run.rps:9.0f} req/s  p50 {run.p50_ms:6.2f}  "
              f"p99 {run.p99_ms:6.2f}{shown}", flush=True)  # fmt: skip
        return run, per

    summary = {}
    for name, runs in interleave(list(targets), count, measure, warm_up=True).items():
        summary[name] = summarize([run for run, _ in runs]) | {
            m: statistics.median(per[m] for _, per in runs) for m in meters.get(name, {})
        }
        if strict and (summary[name]["errors"] or summary[name]["status_errors"]):
            raise RuntimeError(f"{name}: {summary[name]['status_errors']} non-2xx, {summary[name]['errors']} errors")
    return summary


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
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [re.sub(r" \(.*?/(site-packages|src)/", " (", f) for f in stack.split(";")]
        own[frames[-1]] += int(count)
        for frame in set(frames):
            total[frame] += int(count)
    samples = own.total()
    return {
        "target": target.name,
        "samples": samples,
        "own": [(f, round(100 * n / samples, 1)) for f, n in own.most_common(15)],
        "total": [(f, round(100 * n / samples, 1)) for f, n in total.most_common(25)],
        "raw": str(raw),
    }


def machine() -> dict[str, Any]:
    def installed(module: str) -> str:
        with contextlib.suppress(PackageNotFoundError):  # the bench extra's peers are optional (--no-datasette)
            return version(module)
        return "not installed"

    cpuinfo = Path("/proc/cpuinfo").read_text()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "memory_gib": round(int(Path("/proc/meminfo").read_text().split()[1]) / 2**20, 1),
        "cpu": m[1] if (m := re.search(r"^model name\s*: (.*)$", cpuinfo, re.MULTILINE)) else "?",
        "kernel": platform.release(),
        "python": platform.python_version(),
        "versions": {m: installed(m) for m in ("uvicorn", "starlette", "uvloop", "httptools", "orjson", "datasette")},
        "wrk": subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.split("\n")[0].strip(),
    }


def table(results: dict[str, Any]) -> str:
    found = results["throughput"]
    bare_rps = found.get("bare ASGI app", {}).get("rps")
    lines = ["| target | req/s (median) | min-max | p50 ms | p99 ms | × bare ASGI |", "|---|---:|---:|---:|---:|---:|"]
    for name, s in found.items():
        note = f" ({s['status_errors']} non-2xx)" if s["status_errors"] and "404" not in name else ""
        ratio = f"{s['rps'] / bare_rps:.2f}" if bare_rps else "-"
        lines.append(f"| {name}{note} | {s['rps']:,} | {s['rps_min']:,}-{s['rps_max']:,} | {s['p50_ms']} "
                     f"| {s['p99_ms']} | {ratio} |")  # fmt: skip
    if "v1 random" in found and HEADERS_ONLY in found:
        v1 = found["v1 random"]["rps"]
        lines.append(f"\nAgainst v1 random (no limiter): v2 random {found['v2 random']['rps'] / v1:.2f}x, "
                     f"the limit headers alone {found[HEADERS_ONLY]['rps'] / v1:.2f}x.")  # fmt: skip
    if REDIS_RANDOM in found and "v2 random" in found:
        ratio = found[REDIS_RANDOM]["rps"] / found["v2 random"]["rps"]
        lines.append(f"\nv2 random with the Redis limiter: {ratio:.2f}x the in-process limiter "
                     f"({results.get('redis_outages', 0)} Redis outages).")  # fmt: skip
    return "\n".join(lines)


def harness_main(argv: list[str] | None = None) -> int:
    """Throughput, startup, memory and swap of the service, against the stack's limit and a real peer.

    One run on loopback, every figure a ratio to a baseline of the same run. It makes the pools if missing, then:
    1. memory: each pool loaded in a fresh process: load time, RSS steady and peak, bytes served;
    2. starts the service as the Procfile does, its limiter counting every request but never tripping; the bare ASGI
       app (bench/peers.py) with the service's median body, and again with the service's headers; the service with
       the limit headers and no counting; Datasette over the pool; ``--redis``: the service with its limiter in a
       local valkey-server too;
    3. wrk on each target (``--targets``: those named) in rotated rounds: median req/s, p50/p99, the ratio to the
       bare app; ``--profile``: py-spy on v2 by id and random;
    4. server CPU per request on the demo pool (python -m bench cpu-per-request), unless ``--no-cpu``;
    5. python -m bench swap-pack's swap test, one round of ``--swap-seconds`` windows, unless ``--no-swap``;
    6. writes bench/out/<timestamp>.json and prints the markdown tables of docs/benchmarks.md.
    """
    parser = options(harness_main.__doc__, pool="100k", rounds=5, seconds=5.0, connections=True)
    parser.add_argument("--memory-pools", default="", help="comma-separated extra pools to measure memory of")
    parser.add_argument("--swap-seconds", type=float, default=30.0)
    parser.add_argument("--no-datasette", action="store_true")
    parser.add_argument("--no-swap", action="store_true")
    parser.add_argument("--no-cpu", action="store_true", help="skip server CPU per request")
    parser.add_argument("--profile", action="store_true", help="py-spy the service under v2 by id and random")
    parser.add_argument("--redis", action="store_true", help="also the service with its limiter in a local valkey")
    parser.add_argument("--targets", default="", help="comma-separated target names to load (default: all)")
    args = parser.parse_args(argv)
    from bench import service as measures  # its commands import this module

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    directory = pool_dir(args.pool)
    results: dict[str, Any] = {"machine": machine(), "pool": str(latest_export(directory)), "memory": {}}
    for name in [args.pool, *filter(None, args.memory_pools.split(","))]:
        results["memory"][name] = memory(pool_dir(name))
        print(f"memory of {name}, loaded in a fresh process: {results['memory'][name]}")
    ids = pool_ids(directory)
    with contextlib.ExitStack() as stack:
        redis = None
        if args.redis:
            url = stack.enter_context(valkey()).url
            redis = stack.enter_context(service(directory, OUT / "service-redis.log", redis_url=url))
        svc = stack.enter_context(service(directory, OUT / "service.log"))
        loaded = measures.LOADED.findall((OUT / "service.log").read_text(errors="replace"))
        results["startup"] = {"ready_seconds": round(svc.ready_seconds, 2), "load_seconds": float(loaded[-1])}
        results["body_size"] = size = body_size(svc)
        print(f"service ready in {svc.ready_seconds:.1f} s; body {size} bytes")
        cid = ids.read_text().split()[0]
        # The headers of a v2 by-id answer but those the server adds itself or the bare app computes.
        own = {"content-length", "date", "server", "connection"}
        answer = get(svc.base + f"/api/v2/puzzles/{cid}", {"X-API-Key": KEY})[1]
        results["service_headers"] = [[k.lower(), v] for k, v in answer.items() if k.lower() not in own]
        baselines = {
            "bare": bare("bare", OUT / "bare.log", size),
            "bare+headers": bare(
                "bare+headers", OUT / "bare-headers.log", size, json.dumps(results["service_headers"])
            ),
            "fixed headers": service(directory, OUT / "fixed-headers.log", app="bench.peers:fixed_headers_app"),
        }
        if not args.no_datasette:
            baselines["datasette"] = peers.datasette_server(latest_export(directory), OUT / "datasette.log")
        for server in baselines.values():
            stack.enter_context(server)
        # A small set, each fetched once, so the load hits the render cache (the "cached" image).
        images = OUT / "image-ids.txt"
        images.write_text("\n".join(ids.read_text().split()[:50]) + "\n")
        for cid in images.read_text().split():
            get(svc.base + f"/api/v2/puzzles/{cid}/image", {"X-API-Key": KEY})
        found = targets(svc, baselines, ids, images, redis)
        if args.targets:
            found = [t for t in found if t.name in args.targets.split(",")]
        results["throughput"] = rounds(found, count=args.rounds, seconds=args.seconds, connections=args.connections,
                                       strict=False)  # fmt: skip
        results["service_rss"] = proc_status(svc.pid)
        if redis is not None:
            results["redis_outages"] = redis_outages(redis)  # requests answered without Redis: there should be none
        for target in (t for t in found if args.profile and t.name in ("v2 by id", "v2 random")):
            out = OUT / ("profile-" + re.sub(r"\W+", "-", target.name))
            found_profile = profile(svc, target, seconds=10, connections=args.connections, out=out)
            results.setdefault("profile", []).append(found_profile)
    if not args.no_cpu:
        print("server CPU per request (demo pool)")
        results["cpu_per_request"] = measures.cpu_per_request(str(ROOT / "snapshots"), count=3, seconds=5)
    if not args.no_swap:
        print(f"swap: reloading {directory.name} under load")
        results["swap"] = measures.swap_pack(directory, ids, rounds=1, seconds=args.swap_seconds)
    path = OUT / f"{stamp}.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"\n{table(results)}\n\nresults: {path}")
    return 0


# --- load: wrk (Debian's package) with bench/random_ids.lua, from a separate process ---------------------------------


@dataclass(frozen=True)
class Target:
    """One thing to load: a server's base URL, a path (``{id}`` is replaced by a random id of ``ids``), headers."""

    name: str
    base: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    ids: Path | None = None


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


def wrk(target: Target, *, seconds: float, connections: int, pause_ms: int = 0) -> Run:
    """One wrk run (one thread) against ``target``. ``pause_ms`` above 0 paces the load: each connection waits that
    long after an answer before its next request (wrk's ``delay()``), so the server runs below saturation."""
    exe = shutil.which("wrk")
    if exe is None:
        raise RuntimeError("wrk is not installed: apt-get install -y wrk")
    argv = [exe, "-t1", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "10s", "-s", str(LUA)]
    for name, value in target.headers.items():
        argv += ["-H", f"{name}: {value}"]
    argv += [target.base, "--", str(target.ids) if target.ids else "-", target.path, str(pause_ms)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return Run(
        requests=summary["requests"],
        seconds=summary["duration_us"] / 1e6,
        p50_ms=summary["p50_us"] / 1000,
        p99_ms=summary["p99_us"] / 1000,
        errors=sum(summary[k] for k in ("connect_errors", "read_errors", "write_errors", "timeouts")),
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
            elif (k := rng.randrange(n + 1)) < count:
                chosen[k] = cid
    out.write_text("\n".join(chosen) + "\n")
    return out
