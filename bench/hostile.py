"""Hostile exports against ``sudokupool check`` and ``serve`` (``python -m bench hostile-exports``)."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import ROOT, options
from support.servers import free_port, get, proc_status, serve_argv, stop_process, tree_rss

DEMO = next((ROOT / "snapshots").glob("pool-*.ndjson.gz"))
# Both in the past: an export dated ahead of the machine's clock is refused for its name before it is read.
OLD_NAME = "pool-20250101T000000Z.ndjson.gz"
NEW_NAME = "pool-20250102T000000Z.ndjson.gz"
MIB = 1 << 20


def members(block: bytes, total: int) -> Callable[[Path], None]:
    """A writer of ``total`` inflated bytes as gzip members of ``block`` (compressed once)."""

    def write(path: Path) -> None:
        member = gzip.compress(block, compresslevel=9)
        with path.open("wb") as out:
            for _ in range(total // len(block)):
                out.write(member)

    return write


def repeated_record() -> Callable[[Path], None]:
    with gzip.open(DEMO, "rb") as stream:
        line = stream.readline()
    return members(line * (64 * MIB // len(line)), 4096 * MIB)


BOMBS: dict[str, Callable[[], Callable[[Path], None]]] = {
    # 4 GiB without a newline (4.2 MB of gzip).
    "no-newline-4g": lambda: members(b"x" * 64 * MIB, 4096 * MIB),
    # "x\n" to 256 MiB: 128M bad lines (263 KB of gzip).
    "x-lines-256m": lambda: members(b"x\n" * 4 * MIB, 256 * MIB),
    # One valid record repeated to 4 GiB: a pool of one puzzle.
    "repeated-record-4g": repeated_record,
    # 34 MB of short lines in one 34 KB gzip member.
    "short-lines-34k": lambda: members(b"{}\n" * (34_000_000 // 3), 34_000_000 // 3 * 3),
}


class Run:
    """A process (its output in ``log``) whose tree's summed RSS is sampled every 20 ms, and its own VmHWM."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.log, self.peak, self.own = log, 0, 0
        with log.open("w") as out:
            env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
            self.process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def watch(self, limit: float, until: Callable[[str], str | None] = lambda _: None) -> tuple[str | int, float]:
        """Sample until ``until(log text)`` names an outcome, the process exits (its code) or ``limit`` seconds pass
        ("timeout"); the outcome and the seconds it took."""
        started = time.perf_counter()
        while (seconds := time.perf_counter() - started) < limit:
            with contextlib.suppress(OSError, KeyError):  # the process may be gone between two reads
                self.peak = max(self.peak, tree_rss(self.process.pid))
                self.own = max(self.own, proc_status(self.process.pid)["VmHWM"])
            if (outcome := until(self.text())) is not None:
                return outcome, seconds
            if self.process.poll() is not None:
                return self.process.returncode, seconds
            time.sleep(0.02)
        return "timeout", seconds

    def stop(self) -> None:
        stop_process(self.process, signal.SIGTERM, 30)  # as a platform stops a dyno

    def result(self, outcome: str | int, seconds: float, line: str) -> dict[str, Any]:
        text = self.text()
        return {"seconds": seconds, "exit": outcome, "peak_mb": self.peak / 1e6, "own_peak_mb": self.own / 1e6,
                "line": line, "traceback": "Traceback" in text, "leaked": "leaked" in text}  # fmt: skip


def last_line(text: str) -> str:
    return next((line for line in reversed(text.splitlines()) if line.strip()), "")


def fresh(directory: Path) -> Path:
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    return directory


def run_check(bomb: Path, env: dict[str, str], limit: float, scratch: Path) -> dict[str, Any]:
    run = Run([sys.executable, "-m", "sudokupool", "check", str(bomb)], env, scratch / "check.log")
    outcome, seconds = run.watch(limit)
    run.process.kill()
    run.process.wait()
    return run.result(outcome, seconds, last_line(run.text()))


def run_startup(bomb: Path, env: dict[str, str], limit: float, scratch: Path) -> dict[str, Any]:
    directory = fresh(scratch / "startup")
    os.link(bomb, directory / OLD_NAME)
    run = Run(serve_argv(free_port()), {**env, "SUDOKUPOOL_EXPORTS": str(directory)}, scratch / "startup.log")
    outcome, seconds = run.watch(limit, lambda text: "served" if "Application startup complete" in text else None)
    run.stop()
    errors = [line for line in run.text().splitlines() if line.startswith("ERROR") and "startup failed." not in line]
    return run.result(outcome, seconds, errors[0] if errors else last_line(run.text())) | {"error_lines": len(errors)}


def run_sync(bomb: Path, env: dict[str, str], limit: float, scratch: Path) -> dict[str, Any]:
    directory = fresh(scratch / "sync")
    shutil.copy(DEMO, directory / OLD_NAME)
    port = free_port()
    env = {**env, "SUDOKUPOOL_EXPORTS": str(directory), "SUDOKUPOOL_SYNC_INTERVAL": "1"}
    run = Run(serve_argv(port), env, scratch / "sync.log")
    try:
        if run.watch(120, lambda text: "up" if "Application startup complete" in text else None)[0] != "up":
            raise RuntimeError(f"the service did not start: {run.text()}")
        before, run.peak = run.peak, 0
        os.link(bomb, directory / NEW_NAME)

        def landed(text: str) -> str | None:
            if re.search(f"refused.*{directory}/{NEW_NAME}", text):
                return "refused"
            return "served" if f"now serving {NEW_NAME}" in text else None

        outcome, seconds = run.watch(limit, landed)
        answers = {path: get(f"http://127.0.0.1:{port}{path}") for path in
                   ("/api/v1/stats", "/api/v1/health", "/api/v1/puzzles/random")}  # fmt: skip
    finally:
        run.stop()
    status, _, body = answers["/api/v1/stats"]
    refusals = [line for line in run.text().splitlines() if "refused" in line]
    return run.result(outcome, seconds, refusals[0] if refusals else "") | {
        "rss_before_mb": before / 1e6,
        "served_after": json.loads(body).get("total") if status == 200 else None,
        "statuses": sorted({answer[0] for answer in answers.values()}),
        "warnings": sum(1 for line in run.text().splitlines() if line.startswith("WARNING")),
    }


MODES = {"check": run_check, "startup": run_startup, "sync": run_sync}


def hostile_exports_main(argv: list[str] | None = None) -> int:
    """Hostile exports: time and peak memory of `sudokupool check`, a service startup and a live sync on each.

    Makes the bombs of issue 18 in a temporary directory (each a gzip of repeated members, so making a 4 GB bomb
    takes seconds), then runs, for each:

    - ``check``: ``python -m sudokupool check FILE``;
    - ``startup``: the service as the Procfile starts it (``sudokupool serve``) over a directory holding only the
      bomb, until it exits (refused) or starts (served; then it is stopped);
    - ``sync``: the service started on the demo export with a 1 s sync interval; the bomb is then dropped in as a
      newer export, until the log says it was refused (or served). The demo pool must still be served.

    Peak memory is sampled every 20 ms over the whole process tree as the sum of VmRSS; "own peak" is the main
    process's VmHWM. One JSON object a line per run, then a table. ``--env SUDOKUPOOL_MAX_BAD_LINES=100%``: the
    memory bounds alone.
    """
    parser = options(hostile_exports_main.__doc__)
    parser.add_argument("--bombs", nargs="+", choices=sorted(BOMBS), default=list(BOMBS))
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--env", nargs="*", default=[], metavar="NAME=VALUE", help="extra settings for every run")
    parser.add_argument("--limit", type=float, default=90.0, help="seconds before a run is stopped")
    args = parser.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.env)
    rows = []
    with tempfile.TemporaryDirectory(prefix="sudokupool-bombs-") as tmp:
        scratch = Path(tmp)
        for name in args.bombs:
            bomb = scratch / f"{name}.ndjson.gz"
            made = time.perf_counter()
            BOMBS[name]()(bomb)
            print(f"# {name}: {bomb.stat().st_size / 1e6:.2f} MB of gzip, made in {time.perf_counter() - made:.1f} s")
            for mode in args.modes:
                rows.append({"bomb": name, "mode": mode, **MODES[mode](bomb, env, args.limit, scratch)})
                print(json.dumps(rows[-1]), flush=True)
            bomb.unlink()
    print("\n| bomb | mode | outcome | seconds | peak RSS (tree) | own peak |\n|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['bomb']} | {row['mode']} | {row['exit']} | {row['seconds']:.1f} | {row['peak_mb']:.0f} MB "
              f"| {row['own_peak_mb']:.0f} MB |")  # fmt: skip
    return 0
