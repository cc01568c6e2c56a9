"""Peak RSS of ``sudokupool build`` at two sizes, for this checkout and, side by side, a baseline checkout.

Run:
    python bench/build_memory.py --small 25 --large 250 [--baseline /work/main/src] [--jobs 2]

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
    args = parser.parse_args()
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
