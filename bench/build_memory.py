"""Peak RSS of ``sudokupool build`` at two sizes, for this checkout and, side by side, a baseline checkout.

Run:
    python bench/build_memory.py --small 25 --large 250 [--baseline /work/main/src] [--jobs 2]
    python bench/build_memory.py --replay 800,20000

The second form measures the build's own process at sizes too costly to generate here: the workers are
replaced by a replay of 40 graded puzzles (``REPLAY``), so it costs the writing only.

Each build runs as ``/usr/bin/time -v python -m sudokupool build --per-difficulty N --seed S --out DIR/``
(``--jobs`` worker processes). It prints the peak of the whole command (what ``time -v`` reports: the largest
of its processes), of the build's own process (where records are kept or written) and of its largest worker
(read from /proc while it runs), and for each the slope between the two sizes in KB per kept puzzle, with
the difference it makes between 200 and 5,000 per level (800 and 20,000 puzzles).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
# The build's own process at many records without the CPU of making them: workers replaced by a stream of
# 40 real graded puzzles, each a fresh copy (unpickled, as from a worker) under a made-up canonical form.
REPLAY = """
import dataclasses, itertools, pickle, random, resource, sys, tempfile
from sudokupool.cli import main
from sudokupool.commands import build, orders
made = [m for m in orders.make_chunk((1, 0, 40, orders.Order("rotational-180"))) if m.grade is not None]
rng = random.Random(1)
def replay(build_seed, order, jobs):
    for i in itertools.count():
        form = "".join(rng.choice("123456789.") for _ in range(81))
        yield pickle.loads(pickle.dumps(dataclasses.replace(made[i % len(made)], form=form)))
build.ordered_results = replay
with tempfile.TemporaryDirectory() as out:
    main(["build", "--count", sys.argv[1], "--out", out + "/", "--jobs", "1"])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _high_water_kb(pid: int) -> int:
    """VmHWM of process ``pid`` (its peak RSS so far), 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(match.group(1)) if match else 0


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def peak_kb(src: Path, per_difficulty: int, seed: int, jobs: int) -> tuple[int, int, int, float]:
    """Peak RSS in KB of one build run from the source tree ``src``: of the whole command (``time -v``: the
    largest of the build's process and its workers), of the build's own process, of its largest worker;
    and its wall seconds."""
    with tempfile.TemporaryDirectory() as out:
        command = ["/usr/bin/time", "-v", sys.executable, "-m", "sudokupool", "build"]
        command += ["--per-difficulty", str(per_difficulty), "--seed", str(seed), "--jobs", str(jobs)]
        command += ["--out", f"{out}/"]
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            env={**os.environ, "PYTHONPATH": str(src)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        parent = worker = 0
        while process.poll() is None:
            for build in _children(process.pid):
                parent = max(parent, _high_water_kb(build))
                worker = max([worker, *map(_high_water_kb, _children(build))])
            time.sleep(0.1)
        err = process.stderr.read() if process.stderr else ""
        seconds = time.monotonic() - started
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    assert match and process.returncode == 0, err
    return int(match.group(1)), parent, worker, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=25, help="puzzles per level of the small build")
    parser.add_argument("--large", type=int, default=250, help="puzzles per level of the large build")
    parser.add_argument("--baseline", type=Path, help="the src/ directory of a checkout to compare with")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--replay",
        metavar="N,M",
        help="instead: the build process alone keeping N and M records replayed from 40 graded puzzles",
    )
    args = parser.parse_args()
    if args.replay:
        sizes = [int(n) for n in args.replay.split(",")]
        peaks = []
        for n in sizes:
            done = subprocess.run(
                [sys.executable, "-c", REPLAY, str(n)],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYTHONPATH": str(args.baseline or SRC)},
            )
            peaks.append(int(done.stdout.split()[-1]))
            print(f"{n:>8} records: build process peak RSS {peaks[-1] / 1024:.1f} MB")
        slope = (peaks[-1] - peaks[0]) / (sizes[-1] - sizes[0])
        print(
            f"{slope:.2f} KB per record; 800 -> 20,000 records (200 -> 5,000 per level): +{slope * 19200 / 1024:.1f} MB"
        )
        return
    trees = [("this", SRC)] + ([("baseline", args.baseline)] if args.baseline else [])
    for name, src in trees:
        runs = [peak_kb(src, n, args.seed, args.jobs) for n in (args.small, args.large)]
        for label, column in (("command", 0), ("build process", 1), ("largest worker", 2)):
            small, large = runs[0][column], runs[1][column]
            slope = (large - small) / (4 * (args.large - args.small))
            print(
                f"{name:<8} {label:<14} peak RSS {args.small}/level {small / 1024:6.1f} MB, "
                f"{args.large}/level {large / 1024:6.1f} MB: {slope:6.2f} KB per kept puzzle, "
                f"so 200 -> 5,000 per level adds {slope * 4 * 4800 / 1024:7.1f} MB"
            )
        print(f"{name:<8} wall {runs[0][3]:.0f} s and {runs[1][3]:.0f} s")


if __name__ == "__main__":
    main()
