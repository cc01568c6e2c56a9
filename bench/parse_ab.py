"""The load of an export without a pack, this tree against a git revision, side by side in one run.

    python bench/parse_ab.py BASELINE [--pools bench/pools] [--lean 100000] [--full 10000] [--rounds 3]

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

from __future__ import annotations

import argparse
import functools
import gzip
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


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
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(src), "SUDOKUPOOL_EXPORTS": str(ROOT / "snapshots")}
    argv = [sys.executable, "-m", "sudokupool", "serve", "--host", "127.0.0.1", "--port", str(port)]
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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


if __name__ == "__main__":
    sys.exit(main())
