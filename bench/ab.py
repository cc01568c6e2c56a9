"""The side-by-side runner's targets: this checkout against a git revision (or source tree) in one run, rounds
interleaved so drift on a shared machine hits both alike (``python -m bench ab TARGET BASELINE ...``)."""

from __future__ import annotations

import argparse
import asyncio
import functools
import gzip
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.grading import pct, read
from bench.harness import (
    KEY,
    OUT,
    Run,
    Target,
    baseline_tree,
    latest_export,
    pool_dir,
    sample_ids,
    service,
    summarize,
    wrk,
)
from bench.servers import Server, cpu_seconds, free_port, serve_argv

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


# --- ab ------------------------------------------------------------------------------------------------------------

AB_DOC = """\
Two versions of the service side by side: this checkout against an earlier commit, same pool, one run.

    python -m bench ab service BASELINE [--pool 1m-lean] [--rounds 5] [--seconds 5]

BASELINE is any git revision. It is checked out into a temporary worktree and served from there
(``PYTHONPATH`` at its ``src/``) next to this checkout's service, both as the harness starts them. wrk
then alternates between the two on v2 by id (random ids from the pool), v2 random (both with a key
whose limit never trips) and v2 random without a key (anonymous, at a limit that never trips), in the
harness's rotated rounds (a warm-up first), and prints the median req/s of each and the ratio
this/baseline, and the median server CPU time per answer (utime + stime of the service's process over
each wrk run, from /proc) and its ratio: on a machine shared with other work req/s swings with the
neighbours, CPU per answer far less. Both services share the machine, so drift hits both alike; only a
ratio from one run means anything.
"""


def rounds(
    targets: list[Target], pids: dict[str, int], *, count: int, seconds: float, connections: int
) -> tuple[dict[str, list[Run]], dict[str, list[float]]]:
    """``harness.rounds`` that also reads the CPU µs per answer of each target's server (``pids`` by name)."""
    runs: dict[str, list[Run]] = {t.name: [] for t in targets}
    cpu: dict[str, list[float]] = {t.name: [] for t in targets}
    for target in targets:
        wrk(target, seconds=1, connections=connections)
    for n in range(count):
        for target in targets[n % len(targets) :] + targets[: n % len(targets)]:
            before = cpu_seconds(pids[target.name])
            run = wrk(target, seconds=seconds, connections=connections)
            used = (cpu_seconds(pids[target.name]) - before) * 1e6 / max(run.requests, 1)
            runs[target.name].append(run)
            cpu[target.name].append(used)
            print(f"  round {n + 1} {target.name:32} {run.rps:9.0f} req/s  {used:6.1f} CPU µs/answer")
    return runs, cpu


def ab_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=AB_DOC.split("\n\n")[0])
    parser.add_argument("baseline", help="git revision to compare against")
    parser.add_argument("--pool", default="1m-lean")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    # Anonymous requests are counted as usual, with a limit that never trips (as in cpu_per_request.py).
    os.environ["SUDOKUPOOL_LIMIT_ANONYMOUS"] = "1000000000"
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    with baseline_tree(args.baseline) as tree:
        this = service(directory, OUT / "ab-this.log")
        base = service(directory, OUT / "ab-baseline.log")
        base.env["PYTHONPATH"] = str(tree / "src")
        this.start()
        base.start()
        try:
            key = {"X-API-Key": KEY}
            targets = [
                Target("this: v2 by id", this.base, "/api/v2/puzzles/{id}", key, ids),
                Target("baseline: v2 by id", base.base, "/api/v2/puzzles/{id}", key, ids),
                Target("this: v2 random", this.base, "/api/v2/puzzles/random", key),
                Target("baseline: v2 random", base.base, "/api/v2/puzzles/random", key),
                Target("this: v2 random, anonymous", this.base, "/api/v2/puzzles/random"),
                Target("baseline: v2 random, anonymous", base.base, "/api/v2/puzzles/random"),
            ]
            pids = {t.name: (this if t.name.startswith("this") else base).pid for t in targets}
            runs, cpu = rounds(targets, pids, count=args.rounds, seconds=args.seconds, connections=32)
        finally:
            this.stop()
            base.stop()
    summary = {name: summarize(found) for name, found in runs.items()}
    for name, found in summary.items():
        if found["errors"] or found["status_errors"]:
            raise RuntimeError(f"{name}: {found['status_errors']} non-2xx, {found['errors']} errors")
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, medians")
    for path in ("v2 by id", "v2 random", "v2 random, anonymous"):
        this_rps, base_rps = summary[f"this: {path}"]["rps"], summary[f"baseline: {path}"]["rps"]
        this_cpu, base_cpu = (statistics.median(cpu[f"{side}: {path}"]) for side in ("this", "baseline"))
        print(
            f"  {path:20s} req/s this {this_rps:8,.0f}  baseline {base_rps:8,.0f}  ratio {this_rps / base_rps:.3f}"
            f"   CPU µs/answer this {this_cpu:6.1f}  baseline {base_cpu:6.1f}  ratio {this_cpu / base_cpu:.3f}"
        )
    return 0


def run_ab() -> int:
    """``python -m bench ab``."""
    return ab_main()


# --- encoding_ab ---------------------------------------------------------------------------------------------------

ENCODING_AB_DOC = """\
Compressed records side by side: this checkout's gzip and identity clients against a baseline commit.

    python -m bench ab encoding BASELINE [--pool 100k] [--rounds 5] [--seconds 5]

BASELINE is a git revision (the commit before records were held compressed). It is checked out into a
temporary worktree and served next to this checkout, both as the harness starts them (one uvicorn
worker each, on the same pool). wrk loads v2 by id (random ids from the pool) and v2 random three ways:
this checkout with ``Accept-Encoding: gzip`` (wrk reads the bytes as sent, it does not inflate), this
checkout without the header (each body inflated per request), and the baseline with the same header (it
answers identity). Targets rotate through rounds (a warm-up first). For each it prints the median req/s,
p99, and the server's CPU per request (utime + stime of its process over the run, divided by the
requests: less sensitive than req/s to a busy machine), then the ratios gzip/baseline and
identity/gzip, and the median body size of each encoding.
"""

GZIP = {"Accept-Encoding": "gzip"}


def body_sizes(server: Server, ids: Path, headers: dict[str, str], count: int = 51) -> tuple[int, int]:
    """Median bytes on the wire and median identity bytes of ``count`` by-id records."""
    wire, identity = [], []
    for cid in ids.read_text().split()[:count]:
        request = urllib.request.Request(f"{server.base}/api/v2/puzzles/{cid}", headers={"X-API-Key": KEY, **headers})
        with urllib.request.urlopen(request) as response:
            raw = response.read()
            coded = response.headers.get("Content-Encoding") == "gzip"
        wire.append(len(raw))
        identity.append(len(gzip.decompress(raw)) if coded else len(raw))
    return int(statistics.median(wire)), int(statistics.median(identity))


def encoding_ab_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=ENCODING_AB_DOC.split("\n\n")[0])
    parser.add_argument("baseline", help="git revision to compare against")
    parser.add_argument("--pool", default="100k")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    key = {"X-API-Key": KEY}
    runs: dict[str, list[tuple[float, float, float]]] = {}
    with baseline_tree(args.baseline) as tree:
        this = service(directory, OUT / "encoding-this.log")
        base = service(directory, OUT / "encoding-baseline.log")
        base.env["PYTHONPATH"] = str(tree / "src")
        this.start()
        base.start()
        try:
            targets: list[tuple[Server, Target]] = []
            for path, name in [("/api/v2/puzzles/{id}", "v2 by id"), ("/api/v2/puzzles/random", "v2 random")]:
                targets += [
                    (this, Target(f"this gzip: {name}", this.base, path, key | GZIP, ids)),
                    (this, Target(f"this identity: {name}", this.base, path, key, ids)),
                    (base, Target(f"baseline: {name}", base.base, path, key | GZIP, ids)),
                ]
            for _, target in targets:
                wrk(target, seconds=1, connections=32)
                runs[target.name] = []
            for n in range(args.rounds):
                for server, target in targets[n % len(targets) :] + targets[: n % len(targets)]:
                    before = cpu_seconds(server.pid)
                    run = wrk(target, seconds=args.seconds, connections=32)
                    used = cpu_seconds(server.pid) - before
                    if run.status_errors or run.errors:
                        raise RuntimeError(f"{target.name}: {run.status_errors} non-2xx, {run.errors} errors")
                    runs[target.name].append((run.rps, run.p99_ms, used / run.requests * 1e6))
                    print(f"  round {n + 1} {target.name:24} {run.rps:8.0f} req/s  p99 {run.p99_ms:6.2f} ms")
            sizes = {"gzip": body_sizes(this, ids, GZIP), "identity": body_sizes(this, ids, {})}
        finally:
            this.stop()
            base.stop()
    med = {name: [statistics.median(r[i] for r in found) for i in range(3)] for name, found in runs.items()}
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, medians")
    print("| path | client | req/s | p99 ms | server CPU µs/request |")
    print("|---|---|---:|---:|---:|")
    for name, (rps, p99, cpu) in med.items():
        who, _, path = name.partition(": ")
        print(f"| {path} | {who} | {rps:,.0f} | {p99:.2f} | {cpu:.1f} |")
    for path in ("v2 by id", "v2 random"):
        gz, plain, base_ = med[f"this gzip: {path}"], med[f"this identity: {path}"], med[f"baseline: {path}"]
        print(
            f"{path}: gzip/baseline req/s {gz[0] / base_[0]:.3f}, CPU {gz[2] / base_[2]:.3f}; "
            f"identity/gzip req/s {plain[0] / gz[0]:.3f}, CPU {plain[2] / gz[2]:.3f}"
        )
    (wire, identity), _ = sizes["gzip"], sizes["identity"]
    print(f"by-id body, median: {wire:,} B gzip, {identity:,} B identity ({wire / identity:.3f}x)")
    return 0


def run_encoding_ab() -> int:
    """``python -m bench encoding-ab``."""
    return encoding_ab_main()


# --- parse_ab ------------------------------------------------------------------------------------------------------

PARSE_AB_DOC = """\
The load of an export without a pack, this tree against a git revision, side by side in one run.

    python -m bench ab parse BASELINE [--pools bench/pools] [--lean 100000] [--full 10000] [--rounds 3]

Two figures, each measured in interleaved rounds (baseline, this tree, baseline, ...) so that drift on a
shared machine hits both alike; medians and the ratio this tree / baseline:

- **parse rate**: ``sudokupool pack`` (the parse of a load without a pack, which writes the pack) on the
  first ``--lean`` lines of the 1M lean pool and the first ``--full`` lines of the 100k full pool, as
  puzzles per CPU second of the whole command (Python's start included);
- **per line**: CPU microseconds of ``parse_record`` and of ``parse_record`` then ``PoolBuilder.add``, on
  the first 3,000 (lean) and 500 (full) of those lines, in one process (best of 5 passes, median of rounds);
- **demo boot**: ``sudokupool serve`` on the bundled demo pool (it has no pack, so it is parsed), from
  process start until ``/api/v1/health`` answers 200.

The baseline's ``src/`` is taken with ``git archive`` into a temporary directory; nothing is checked out.
"""


def subset(source: Path, lines: int, out: Path) -> Path:
    """The first ``lines`` lines of the export ``source`` as an export of its own under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    target = out / source.name
    with gzip.open(source, "rb") as reader, gzip.open(target, "wb", compresslevel=1) as writer:
        for _, line in zip(range(lines), reader, strict=False):
            writer.write(line)
    return target


def timed_pack(src: Path, *, export: Path) -> float:
    """CPU seconds (user and system) of ``sudokupool pack`` on ``export``: on a shared machine, wall time
    would count other processes' turns."""
    env = {**os.environ, "PYTHONPATH": str(src), "SUDOKUPOOL_MAX_EXPORT_BYTES": str(20 << 30)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "sudokupool", "pack", str(export)], env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


#: Run in a child process on one tree: CPU microseconds per line of parse_record, and of parse_record then
#: PoolBuilder.add (a whole line of a load without a pack), best of 5 passes over the lines of argv[1].
PER_LINE = """
import sys, time, json
from sudokupool.loading.export import parse_record
from sudokupool.loading.pool import PoolBuilder
lines = open(sys.argv[1], "rb").read().splitlines()
def best(step):
    times = []
    for _ in range(5):
        builder = PoolBuilder(loaded_at=1)
        started = time.process_time()
        for line in lines:
            step(builder, line)
        times.append(time.process_time() - started)
        builder.file.close()
    return min(times) / len(lines) * 1e6
parse = best(lambda builder, line: parse_record(line))
whole = best(lambda builder, line: builder.add(parse_record(line)))
print(json.dumps([parse, whole]))
"""


def per_line(src: Path, lines: Path) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, "-c", PER_LINE, str(lines)], env=env, check=True, capture_output=True)
    return list(json.loads(done.stdout))


def timed_boot(src: Path) -> float:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(src), "SUDOKUPOOL_EXPORTS": str(ROOT / "snapshots")}
    argv = serve_argv(port)
    started = time.perf_counter()
    server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=1) as answer:
                    if answer.status == 200:
                        return time.perf_counter() - started
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError("the server exited") from None
                time.sleep(0.01)
    finally:
        server.terminate()
        server.wait()


def compare(name: str, rounds: int, trees: dict[str, Path], measure: Callable[[Path], float], unit: float) -> None:
    """Print median ``unit / seconds`` (a rate) or seconds (``unit`` 0) per tree, and the ratio."""
    seen: dict[str, list[float]] = {label: [] for label in trees}
    for _ in range(rounds):
        for label, src in trees.items():
            seen[label].append(measure(src))
    medians = {label: statistics.median(times) for label, times in seen.items()}
    cells = []
    for label, median in medians.items():
        spread = ", ".join(f"{t:.2f}" for t in seen[label])
        figure = f"{unit / median:,.0f}/s" if unit else f"{median:.2f} s"
        cells.append(f"{label} {figure} (s: {spread})")
    base, this = medians.values()
    ratio = base / this if unit else this / base
    print(f"{name}: {'; '.join(cells)}; this/baseline {ratio:.2f}{'x rate' if unit else 'x time'}", flush=True)


def parse_ab_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=PARSE_AB_DOC.split("\n\n")[0])
    parser.add_argument("baseline", help="git revision to compare against")
    parser.add_argument("--pools", type=Path, default=BENCH / "pools")
    parser.add_argument("--lean", type=int, default=100_000, help="lines of the 1M lean pool to parse")
    parser.add_argument("--full", type=int, default=10_000, help="lines of the 100k full pool to parse")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="parse-ab-") as scratch:
        work = Path(scratch)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.baseline, "src"], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive.stdout, check=True)
        trees = {f"baseline {args.baseline}": work / "src", "this tree": ROOT / "src"}
        for pool, lines, sample in (("1m-lean", args.lean, 3000), ("100k", args.full, 500)):
            source = sorted((args.pools / pool).glob("pool-*.ndjson.gz"))[-1]
            export = subset(source, lines, work / pool)
            with gzip.open(export) as reader:
                plain = work / f"{pool}.ndjson"
                plain.write_bytes(b"".join(line for _, line in zip(range(sample), reader, strict=False)))
            figures: dict[str, list[list[float]]] = {label: [] for label in trees}
            for _ in range(args.rounds):
                for label, src in trees.items():
                    figures[label].append(per_line(src, plain))
            for label, rounds in figures.items():
                parse, whole = (statistics.median(f[i] for f in rounds) for i in range(2))
                print(
                    f"per line, {sample} lines of {pool}, {label}: parse_record {parse:.1f} us, add too {whole:.1f} us"
                )
            compare(
                f"parse {lines} lines of {pool}",
                args.rounds,
                trees,
                functools.partial(timed_pack, export=export),
                lines,
            )
        compare("demo boot", args.rounds, trees, timed_boot, 0)
    return 0


def run_parse_ab() -> int:
    """``python -m bench parse-ab``."""
    return parse_ab_main()


# --- grader_ab -----------------------------------------------------------------------------------------------------

GRADER_AB_DOC = """\
Two versions of the grader side by side on the same puzzles: CPU time per puzzle of each.

Run:
    python -m bench ab grader --file bench/data/sudoku-exchange-se-fresh.txt OTHER/src src

Each source tree (a directory holding the ``sudokupool`` package, e.g. another checkout's ``src``)
gets one long-lived process; they grade the same chunk of puzzles in turn, the first of the pair
alternating from chunk to chunk, so that the other jobs of a shared machine weigh on both alike.
Prints each one's median, p95 and max per puzzle, and the second's p95 and total over the first's.
"""

WORKER = """
import json, sys, time
from sudokupool.sudoku.grader import grade
for line in sys.stdin:
    times = []
    for puzzle in json.loads(line):
        start = time.process_time()
        grade(puzzle)
        times.append(time.process_time() - start)
    print(json.dumps(times), flush=True)
"""


def grader_ab_main() -> None:
    parser = argparse.ArgumentParser(description=GRADER_AB_DOC.splitlines()[0])
    parser.add_argument("--file", type=Path, required=True)
    parser.add_argument("--chunk", type=int, default=10, help="puzzles per turn")
    parser.add_argument("src", nargs=2, type=Path, help="two source trees: the first is the baseline")
    args = parser.parse_args()

    puzzles = [puzzle for puzzle, _ in read(args.file)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER],
            env={**os.environ, "PYTHONPATH": str(src.resolve())},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for src in args.src
    ]
    times: list[list[float]] = [[], []]
    for turn, first in enumerate(range(0, len(puzzles), args.chunk)):
        chunk = json.dumps(puzzles[first : first + args.chunk]) + "\n"
        for side in (0, 1) if turn % 2 == 0 else (1, 0):
            worker = workers[side]
            assert worker.stdin is not None and worker.stdout is not None
            worker.stdin.write(chunk)
            worker.stdin.flush()
            times[side] += json.loads(worker.stdout.readline())
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    for src, side in zip(args.src, times, strict=True):
        ms = [1000 * t for t in side]
        print(
            f"{src}: median {statistics.median(ms):.1f} ms, p95 {pct(ms, 0.95):.0f} ms, max {max(ms):.0f} ms, "
            f"total {sum(side):.2f} s"
        )
    base, other = times
    print(f"second / first: p95 {pct(other, 0.95) / pct(base, 0.95):.3f}, total {sum(other) / sum(base):.3f}")


def run_grader_ab() -> int:
    """``python -m bench grader-ab``."""
    grader_ab_main()
    return 0


# --- metrics_inprocess ---------------------------------------------------------------------------------------------

METRICS_INPROCESS_DOC = """\
The request path's own cost with metrics on and off, and at an earlier revision: CPU µs per request.

    python -m bench ab metrics BASELINE --rounds 15 --requests 20000   # docs/operations.md, "Cost"
    python -m bench ab metrics BASELINE --baseline-on ...   # BASELINE with metrics on, against "on"

Three worker processes (this checkout with ``SUDOKUPOOL_METRICS_PORT`` set, the same without it, and
BASELINE from a temporary worktree) each build the app on the demo pool and, on command, send requests
through it in process (no server, no sockets): v2 by id and v2 random with a key whose limit never
trips. Each batch is timed in the process's own CPU time, which other load on a shared machine moves far
less than wall time; batches alternate between the three, order rotated each round. Prints medians and
the differences, which the server's CPU per answer (python -m bench metrics-cost) turns into a share.
"""

PATHS = ("v2 by id", "v2 random")


async def worker(ids: list[str]) -> None:
    from sudokupool.app import create_app
    from sudokupool.config import Settings
    from sudokupool.keys import digest

    settings = Settings.from_environ(
        {**os.environ, "SUDOKUPOOL_API_KEYS": digest(KEY), "SUDOKUPOOL_LIMIT_KEYED": "1000000000",
         "SUDOKUPOOL_SYNC_INTERVAL": "0", "SUDOKUPOOL_LOG_LEVEL": "warning"}
    )  # fmt: skip
    app = create_app(settings)
    await app.startup()

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        pass

    def scope(path: str) -> dict[str, object]:
        return {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
                "headers": [(b"host", b"bench"), (b"x-api-key", KEY.encode())], "client": ("127.0.0.1", 5000),
                "server": ("127.0.0.1", 8000), "scheme": "http", "http_version": "1.1", "root_path": ""}  # fmt: skip

    paths = {"v2 by id": [f"/api/v2/puzzles/{i}" for i in ids], "v2 random": ["/api/v2/puzzles/random"]}
    print("ready", flush=True)
    for line in sys.stdin:
        name, count = line.rsplit(" ", 1)
        chosen = paths[name]
        scopes = [scope(chosen[n % len(chosen)]) for n in range(int(count))]
        start = time.process_time()
        for each in scopes:
            await app.http(each, receive, send)
        used = time.process_time() - start
        print(json.dumps(1e6 * used / len(scopes)), flush=True)
    await app.shutdown()


def metrics_inprocess_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=METRICS_INPROCESS_DOC.split("\n\n")[0])
    parser.add_argument("baseline", help="git revision without metrics")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument(
        "--baseline-on", action="store_true", help="BASELINE with metrics on too: what a change to metrics costs"
    )
    args = parser.parse_args(argv)
    from bench.harness import OUT, baseline_tree, latest_export, pool_dir, sample_ids
    from bench.servers import free_port

    directory = pool_dir("snapshots")
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    with baseline_tree(args.baseline) as tree:
        variants = {
            "metrics on": (ROOT / "src", {"SUDOKUPOOL_METRICS_PORT": str(free_port())}),
            "metrics off": (ROOT / "src", {}),
            "baseline": (tree / "src", {"SUDOKUPOOL_METRICS_PORT": str(free_port())} if args.baseline_on else {}),
        }
        procs = {}
        for name, (src, env) in variants.items():
            full = {**os.environ, **env, "PYTHONPATH": str(src), "BENCH_IDS": str(ids),
                    "SUDOKUPOOL_EXPORTS": str(directory)}  # fmt: skip
            if not env:
                full.pop("SUDOKUPOOL_METRICS_PORT", None)
            worker_argv = [sys.executable, "-m", "bench", "ab", "metrics", "--worker"]
            procs[name] = subprocess.Popen(worker_argv, env=full, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           text=True, cwd=ROOT)  # fmt: skip
        try:
            for proc in procs.values():
                assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            found: dict[str, list[float]] = {f"{v}: {p}": [] for v in variants for p in PATHS}
            order = [(v, p) for p in PATHS for v in variants]
            for n in range(args.rounds + 1):  # the first round warms up and is not counted
                for name, path in order[n % len(order) :] + order[: n % len(order)]:
                    proc = procs[name]
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(f"{path} {args.requests}\n")
                    proc.stdin.flush()
                    value = float(proc.stdout.readline())
                    if n:
                        found[f"{name}: {path}"].append(value)
        finally:
            for proc in procs.values():
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(30)
    median = {name: statistics.median(values) for name, values in found.items()}
    versus = "on" if args.baseline_on else "off"
    print(f"baseline {args.baseline} (metrics {versus}), {args.rounds} rounds x {args.requests} requests, "
          "CPU µs per request, medians")  # fmt: skip
    print(f"| path | on | off | baseline | on - off | {versus} - baseline |")
    print("|---|---:|---:|---:|---:|---:|")
    for path in PATHS:
        on, off, base = (median[f"{v}: {path}"] for v in variants)
        compared = on if args.baseline_on else off
        print(f"| {path} | {on:.2f} | {off:.2f} | {base:.2f} | {on - off:+.2f} | {compared - base:+.2f} |")
    return 0


def run_metrics_inprocess() -> int:
    """``python -m bench metrics-inprocess``."""
    if sys.argv[1:] == ["--worker"]:
        asyncio.run(worker([line.split()[0] for line in Path(os.environ["BENCH_IDS"]).read_text().splitlines()]))
    else:
        raise SystemExit(metrics_inprocess_main())
    return 0


# --- pool_ops ------------------------------------------------------------------------------------------------------

POOL_OPS_DOC = """\
What the pool itself costs a request, this checkout against an earlier commit, side by side.

    python -m bench ab pool-ops BASELINE [--pool 100k] [--rounds 7] [--ops 200000]

Starts one process per version (the baseline from a temporary worktree of ``BASELINE``), each loading
the pool's latest export as the service does (this checkout maps its pack when there is one), then
asks them in turn, round after round, to time ``--ops`` calls of what the v2 handlers call: by id
(``find`` of a random id, then ``etag`` and ``gzip_body``), by id for an identity client (``body``,
inflated), and random (``pick`` then ``gzip_body``). Prints the median nanoseconds per call of each and
the ratio this/baseline. Times are CPU time of the process (the machine is shared: wall time would count
other processes' turns). A request costs the server ~150-400 us in all, so these say how much of a
request's difference the pool can account for.
"""

OPS = ("by id, gzip", "by id, identity", "random, gzip")


def serve_rounds(directory: Path, ids_file: Path, ops: int) -> None:
    """The child: load, say ready, then time one round per line read from stdin."""
    try:
        from sudokupool.loading.loader import load_latest
    except ImportError:  # a baseline from before the loading/ package
        from sudokupool.loader import load_latest  # type: ignore[no-redef]
    from sudokupool.storage.local import LocalStore

    pool, report = asyncio.run(load_latest(LocalStore(directory)))
    ids = ids_file.read_text().split()
    rng = random.Random(1)
    picks = [rng.choice(ids) for _ in range(ops)]
    print(json.dumps({"ready": report.summary()}), flush=True)
    gzip_body = getattr(pool, "gzip_body", pool.body)
    for _ in sys.stdin:
        found: dict[str, float] = {}
        started = time.process_time_ns()
        for cid in picks:
            index = pool.find(cid)
            assert index is not None
            pool.etag(index)
            gzip_body(index)
        found["by id, gzip"] = (time.process_time_ns() - started) / ops
        started = time.process_time_ns()
        for cid in picks[: ops // 10]:
            index = pool.find(cid)
            assert index is not None
            pool.etag(index)
            pool.body(index)
        found["by id, identity"] = (time.process_time_ns() - started) / (ops // 10)
        started = time.process_time_ns()
        for _ in range(ops):
            index = pool.pick()
            assert index is not None
            gzip_body(index)
        found["random, gzip"] = (time.process_time_ns() - started) / ops
        print(json.dumps(found), flush=True)


def pool_ops_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=POOL_OPS_DOC.split("\n\n")[0])
    parser.add_argument("baseline", nargs="?")
    parser.add_argument("--pool", default="100k")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", type=int, default=200_000)
    parser.add_argument("--child", nargs=2, metavar=("DIR", "IDS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        serve_rounds(Path(args.child[0]), Path(args.child[1]), args.ops)
        return 0
    from bench.harness import OUT, baseline_tree, latest_export, pool_dir, sample_ids

    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    argv_child = [
        sys.executable,
        "-m",
        "bench",
        "ab",
        "pool-ops",
        "--ops",
        str(args.ops),
        "--child",
        str(directory),
        str(ids),
    ]
    with baseline_tree(args.baseline) as tree:
        procs: dict[str, subprocess.Popen[str]] = {}
        for name, src in (("this", BENCH.parent / "src"), ("baseline", tree / "src")):
            env = {**os.environ, "PYTHONPATH": str(src)}
            procs[name] = subprocess.Popen(
                argv_child, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
        try:
            for name, proc in procs.items():
                assert proc.stdout is not None
                print(name, json.loads(proc.stdout.readline())["ready"], flush=True)
            results: dict[str, list[dict[str, float]]] = {name: [] for name in procs}
            for n in range(args.rounds):
                order = list(procs) if n % 2 == 0 else list(reversed(procs))
                for name in order:
                    proc = procs[name]
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write("go\n")
                    proc.stdin.flush()
                    found: dict[str, Any] = json.loads(proc.stdout.readline())
                    results[name].append(found)
                    print(
                        f"round {n + 1} {name:8s} " + "  ".join(f"{op} {found[op]:7.0f} ns" for op in OPS), flush=True
                    )
        finally:
            for proc in procs.values():
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(60)
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.ops} calls, median ns/call")
    for op in OPS:
        this = statistics.median(r[op] for r in results["this"])
        base = statistics.median(r[op] for r in results["baseline"])
        print(f"  {op:18s} this {this:8.0f}  baseline {base:8.0f}  ratio {this / base:.3f}  diff {this - base:+.0f} ns")
    return 0


def run_pool_ops() -> int:
    """``python -m bench pool-ops``."""
    return pool_ops_main()
