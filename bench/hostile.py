"""Hostile exports against ``sudokupool check`` and ``serve`` (``python -m bench hostile-exports``)."""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.servers import free_port, process_tree, serve_argv

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


# --- hostile_exports -----------------------------------------------------------------------------------------------

HOSTILE_EXPORTS_DOC = """\
Hostile exports: time and peak memory of `sudokupool check`, a service startup and a live sync on each.

    python -m bench hostile-exports                       # every bomb, every mode (a few minutes)
    python -m bench hostile-exports --bombs x-lines-256m --modes check startup
    python -m bench hostile-exports --env SUDOKUPOOL_MAX_BAD_LINES=100%   # the memory bounds alone

Makes the bombs of issue 18 in a temporary directory (each a gzip of repeated members, so making a 4 GB
bomb takes seconds), then runs, for each:

- ``check``: ``python -m sudokupool check FILE``;
- ``startup``: the service as the Procfile starts it (``sudokupool serve``) over a directory holding only
  the bomb, until it exits (refused) or starts (served; then it is stopped);
- ``sync``: the service started on the demo export with a 1 s sync interval; the bomb is then dropped in
  as a newer export, until the log says it was refused (or served). The demo pool must still be served.

Peak memory is sampled every 20 ms over the whole process tree (the server and any process it
starts) as the sum of VmRSS; "own peak" is the main process's VmHWM. One JSON object a line per run,
then a table. Each run is stopped after --limit seconds (default 90).
"""

DEMO = next((ROOT / "snapshots").glob("pool-*.ndjson.gz"))
OLD_NAME = "pool-20261101T000000Z.ndjson.gz"
NEW_NAME = "pool-20261201T000000Z.ndjson.gz"
MIB = 1 << 20


def _members(block: bytes, total: int) -> Callable[[Path], None]:
    """A writer of ``total`` inflated bytes as gzip members of ``block`` (compressed once)."""

    def write(path: Path) -> None:
        member = gzip.compress(block, compresslevel=9)
        with path.open("wb") as out:
            for _ in range(total // len(block)):
                out.write(member)

    return write


def _repeated_record() -> bytes:
    with gzip.open(DEMO, "rb") as stream:
        line = stream.readline()
    return line * (64 * MIB // len(line))


BOMBS: dict[str, Callable[[], Callable[[Path], None]]] = {
    # 4 GiB without a newline (4.2 MB of gzip).
    "no-newline-4g": lambda: _members(b"x" * 64 * MIB, 4096 * MIB),
    # "x\n" to 256 MiB: 128M bad lines (263 KB of gzip).
    "x-lines-256m": lambda: _members(b"x\n" * 4 * MIB, 256 * MIB),
    # One valid record repeated to 4 GiB: a pool of one puzzle.
    "repeated-record-4g": lambda: _members(_repeated_record(), 4096 * MIB),
    # 34 MB of short lines in one 34 KB gzip member.
    "short-lines-34k": lambda: _members(b"{}\n" * (34_000_000 // 3), 34_000_000 // 3 * 3),
}


def _status(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


class Sampler:
    """Peak of the summed RSS of a process tree, sampled; and the root's own VmHWM."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self.own = 0

    def sample(self) -> None:
        self.peak = max(self.peak, sum(_status(p, "VmRSS") for p in process_tree(self.pid)))
        self.own = max(self.own, _status(self.pid, "VmHWM"))


def _environ(extra: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **extra}
    return env


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, as a platform stops a dyno, then SIGKILL after 30 s (nothing if it has exited)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _serve(port: int) -> list[str]:
    # The Procfile's command line, on a loopback port.
    return serve_argv(port)


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def run_check(bomb: Path, env: dict[str, str], limit: float) -> dict[str, Any]:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "sudokupool", "check", str(bomb)],
        env=_environ(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    sampler = Sampler(process.pid)
    while process.poll() is None and time.perf_counter() - started < limit:
        sampler.sample()
        time.sleep(0.02)
    timed_out = process.poll() is None
    if timed_out:
        process.kill()
    _, err = process.communicate()
    return {
        "seconds": time.perf_counter() - started,
        "exit": "timeout" if timed_out else process.returncode,
        "peak_mb": sampler.peak / 1e6,
        "own_peak_mb": sampler.own / 1e6,
        "line": _last_line(err),
        "traceback": "Traceback" in err,
    }


def run_startup(bomb: Path, env: dict[str, str], limit: float, scratch: Path) -> dict[str, Any]:
    directory = scratch / "startup"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    os.link(bomb, directory / OLD_NAME)
    log = scratch / "startup.log"
    started = time.perf_counter()
    with log.open("w") as out:
        process = subprocess.Popen(
            _serve(free_port()), env=_environ({**env, "SUDOKUPOOL_EXPORTS": str(directory)}),
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    sampler = Sampler(process.pid)
    served = False
    while process.poll() is None and time.perf_counter() - started < limit:
        sampler.sample()
        if "Application startup complete" in log.read_text():
            served = True
            break
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    timed_out = process.poll() is None and not served
    _stop(process)
    text = log.read_text()
    failure = [line for line in text.splitlines() if line.startswith("ERROR") and "startup failed. Exiting" not in line]
    return {
        "seconds": seconds,
        "exit": "timeout" if timed_out else ("served" if served else process.returncode),
        "peak_mb": sampler.peak / 1e6,
        "own_peak_mb": sampler.own / 1e6,
        "line": failure[0] if failure else _last_line(text),
        "error_lines": len(failure),
        "traceback": "Traceback" in text,
        "leaked": "leaked" in text,
    }


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def run_sync(bomb: Path, env: dict[str, str], limit: float, scratch: Path) -> dict[str, Any]:
    directory = scratch / "sync"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    shutil.copy(DEMO, directory / OLD_NAME)
    log = scratch / "sync.log"
    port = free_port()
    with log.open("w") as out:
        process = subprocess.Popen(
            _serve(port),
            env=_environ({**env, "SUDOKUPOOL_EXPORTS": str(directory), "SUDOKUPOOL_SYNC_INTERVAL": "1"}),
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        while "Application startup complete" not in log.read_text():
            if process.poll() is not None:
                raise RuntimeError(f"the service did not start: {log.read_text()}")
            time.sleep(0.1)
        sampler = Sampler(process.pid)
        sampler.sample()
        before = sampler.peak
        sampler.peak = 0
        os.link(bomb, directory / NEW_NAME)
        started = time.perf_counter()
        outcome = "timeout"
        statuses: set[int] = set()
        while time.perf_counter() - started < limit:
            sampler.sample()
            text = log.read_text()
            if f"refused cannot load export {directory}/{NEW_NAME}" in text:
                outcome = "refused"
                break
            if f"now serving {NEW_NAME}" in text:
                outcome = "served"
                break
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        status, body = _get(f"http://127.0.0.1:{port}/api/v1/stats")
        statuses.add(status)
        total = json.loads(body).get("total") if status == 200 else None
        for path in ("/api/v1/health", "/api/v1/puzzles/random"):
            statuses.add(_get(f"http://127.0.0.1:{port}{path}")[0])
    finally:
        _stop(process)
    text = log.read_text()
    refusals = [line for line in text.splitlines() if "refused" in line]
    return {
        "seconds": seconds,
        "exit": outcome,
        "peak_mb": sampler.peak / 1e6,
        "rss_before_mb": before / 1e6,
        "own_peak_mb": sampler.own / 1e6,
        "served_after": total,
        "statuses": sorted(statuses),
        "line": refusals[0] if refusals else "",
        "warnings": sum(1 for line in text.splitlines() if line.startswith("WARNING")),
        "traceback": "Traceback" in text,
        "leaked": "leaked" in text,
    }


def hostile_exports_main() -> None:
    parser = argparse.ArgumentParser(
        description=HOSTILE_EXPORTS_DOC, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bombs", nargs="+", choices=sorted(BOMBS), default=list(BOMBS))
    parser.add_argument(
        "--modes", nargs="+", choices=["check", "startup", "sync"], default=["check", "startup", "sync"]
    )
    parser.add_argument("--env", nargs="*", default=[], metavar="NAME=VALUE", help="extra settings for every run")
    parser.add_argument("--limit", type=float, default=90.0, help="seconds before a run is stopped")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    scratch = Path(tempfile.mkdtemp(prefix="sudokupool-bombs-"))
    rows = []
    try:
        for name in args.bombs:
            bomb = scratch / f"{name}.ndjson.gz"
            made = time.perf_counter()
            BOMBS[name]()(bomb)
            print(f"# {name}: {bomb.stat().st_size / 1e6:.2f} MB of gzip, made in {time.perf_counter() - made:.1f} s")
            for mode in args.modes:
                if mode == "check":
                    result = run_check(bomb, env, args.limit)
                elif mode == "startup":
                    result = run_startup(bomb, env, args.limit, scratch)
                else:
                    result = run_sync(bomb, env, args.limit, scratch)
                result = {"bomb": name, "mode": mode, **result}
                print(json.dumps(result), flush=True)
                rows.append(result)
            bomb.unlink()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("\n| bomb | mode | outcome | seconds | peak RSS (tree) | own peak |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['bomb']} | {row['mode']} | {row['exit']} | {row['seconds']:.1f} | "
            f"{row['peak_mb']:.0f} MB | {row['own_peak_mb']:.0f} MB |"
        )


def run_hostile_exports() -> int:
    """``python -m bench hostile-exports``."""
    hostile_exports_main()
    return 0
