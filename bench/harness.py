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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

from bench.child import KEY
from sudokupool.ratelimit.keys import digest
from support.servers import Server, cpu_seconds, get, process_tree, serve_argv
from support.stores import ValkeyServer

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH / "out"
POOLS = BENCH / "pools"
LUA = BENCH / "random_ids.lua"
#: The headers of a client with the bench's API key (the services the harness starts issue it).
KEYED = {"X-API-Key": KEY}
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
    """A valkey-server (support/stores.py) for this run, stopped afterwards."""
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
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(chosen) + "\n")
    return out
