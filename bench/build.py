"""The build's benchmarks: ``python -m bench build-yield`` (kept puzzles per CPU-second, this checkout against a
baseline) and ``build-memory`` (peak RSS of ``sudokupool build``)."""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import options
from sudokupool.exporting.orders import Order, is_minimal, make_chunk
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.generator import DEFAULT_SYMMETRY
from support.servers import proc_status, process_tree

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


# One build in the process of one side's code: its CPU seconds, then its exit status. The commands' modules (which
# ``main`` imports, 0.8 s) and what a first puzzle imports are imported before the clock starts.
BUILD_CPU = """
import sys, tempfile, time
from sudokupool.cli import build_parser, main
try:
    from sudokupool.exporting import orders
except ImportError:  # a baseline whose orders are still among the commands
    from sudokupool.commands import orders
build_parser()
orders.make_chunk((0, 0, 1, orders.Order("none")))
with tempfile.TemporaryDirectory() as out:
    started = time.process_time()
    code = main(["build", "--out", out + "/", "--jobs", "1", *sys.argv[1:]])
    print(time.process_time() - started)
raise SystemExit(code)
"""


def build_cpu(src: Path, args: list[str]) -> float:
    """CPU seconds of one ``sudokupool build ARGS --jobs 1`` on the code in ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, "-c", BUILD_CPU, *args], env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"build {args} on {src} exited {done.returncode}: {done.stderr[-2000:]}")
    return float(done.stdout.split()[-1])


def minimal_share(count: int, seed: int, symmetry: str, level: int | None) -> None:
    """How many of the puzzles kept from ``count`` raw ones are minimal (steered toward ``level``, if given)."""
    order = Order(symmetry) if level is None else Order(symmetry, frozenset({level}), steer=level)
    puzzles = [m.puzzle for m in make_chunk((seed, 0, count, order)) if m.grade is not None]
    minimal = sum(map(is_minimal, puzzles))
    print(f"{count} raw puzzles, symmetry {symmetry}, steered toward {level}: minimal {minimal}/{len(puzzles)}")


def build_yield_main() -> None:
    """Kept puzzles per CPU-second of ``sudokupool build --difficulty LEVEL`` for each level, of a build of
    every level (no ``--difficulty``) and of a balanced one (``--per-difficulty KEPT/4 --difficulty
    easy,medium,hard,expert``; neither is steered), for this checkout and BASELINE side by side; or the share of
    minimal puzzles a build keeps.

    Run:
        python -m bench build-yield [--baseline main] [--kept 30] [--rounds 5] [--seed 20261126]
        python -m bench build-yield --minimal-share [--count 300] [--symmetry none] [--level 1-4]

    Each build is ``main(["build", "--count", KEPT, "--difficulty", LEVEL, "--seed", SEED + ROUND, "--jobs", "1",
    ...])`` in a fresh process of that side's code, timed by ``time.process_time`` around it (Python's start not
    counted, nor the imports of the commands and of a first puzzle; one process does all the work with ``--jobs 1``).
    Every round builds each level on both sides with the same seed, the sides' order turned round by round;
    medians over the rounds, and their ratio this/baseline.
    A build with ``--jobs N`` on N free cores keeps about N times as many a wall-clock second.
    """
    from bench.harness import baseline_src, interleave

    parser = options(build_yield_main.__doc__)
    parser.add_argument("--baseline", default="main", help="a git revision, or a directory holding sudokupool")
    parser.add_argument("--kept", type=int, default=30, help="puzzles each build keeps (--count)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261126, help="round r builds with seed SEED + r")
    parser.add_argument("--symmetry", default=DEFAULT_SYMMETRY)
    parser.add_argument("--minimal-share", action="store_true", help="only the share of minimal puzzles")
    parser.add_argument("--count", type=int, default=300, help="raw puzzles for --minimal-share")
    parser.add_argument("--level", type=int, choices=range(1, 5), help="--minimal-share of a build steered to it")
    args = parser.parse_args()
    if args.minimal_share:
        minimal_share(args.count, args.seed, args.symmetry, args.level)
        return
    count = ["--count", str(args.kept)]
    quarter = args.kept // 4
    # case -> (its arguments, the puzzles it keeps)
    cases = {name: ([*count, "--difficulty", name.lower()], args.kept) for name in DIFFICULTIES}
    cases["every level"] = (count, args.kept)  # no --difficulty: not steered
    cases["balanced"] = (["--per-difficulty", str(quarter), "--difficulty", "easy,medium,hard,expert"], 4 * quarter)
    with baseline_src(args.baseline) as src:
        trees = {"this": ROOT / "src", "baseline": src}
        for case, (extra, kept) in cases.items():

            def one(side: str, n: int, extra: list[str] = extra) -> float:
                return build_cpu(trees[side], [*extra, "--seed", str(args.seed + n), "--symmetry", args.symmetry])

            runs = interleave(list(trees), args.rounds, one)
            this, base = (kept / statistics.median(runs[side]) for side in trees)
            print(f"{case:12s} this {this:6.2f}  baseline {base:6.2f} kept/CPU s  ratio {this / base:.2f}", flush=True)
    print(f"baseline {args.baseline}, {args.kept} kept a build, {args.rounds} rounds, symmetry {args.symmetry}")


def _high_water_kb(pid: int) -> int:
    """VmHWM of process ``pid`` (its peak RSS so far) in KB, 0 once it is gone."""
    with contextlib.suppress(OSError):
        return proc_status(pid).get("VmHWM", 0) // 1024
    return 0


def peak_kb(src: Path, per_difficulty: int, seed: int, jobs: int) -> tuple[int, int, int, float]:
    """Peak RSS in KB of one build run from the source tree ``src``: of the whole command (``time -v``: the
    largest of the build's process and its workers), of the build's own process, of its largest worker;
    and its wall seconds."""
    with tempfile.TemporaryDirectory() as out:
        command = ["/usr/bin/time", "-v", sys.executable, "-m", "sudokupool", "build", "--per-difficulty"]
        command += [str(per_difficulty), "--seed", str(seed), "--jobs", str(jobs), "--out", f"{out}/"]
        started = time.monotonic()
        env = {**os.environ, "PYTHONPATH": str(src)}
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        parent = worker = 0
        while process.poll() is None:
            # time's child is the build; the build's children are its workers.
            for build in process_tree(process.pid)[1:2]:
                parent = max(parent, _high_water_kb(build))
                worker = max([worker, *map(_high_water_kb, process_tree(build)[1:])])
            time.sleep(0.1)
        err = process.stderr.read() if process.stderr else ""
        seconds = time.monotonic() - started
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    assert match and process.returncode == 0, err
    return int(match.group(1)), parent, worker, seconds


def build_memory_main() -> None:
    """Peak RSS of ``sudokupool build`` at two sizes, for this checkout and, side by side, a baseline checkout.

    Run:
        python -m bench build-memory --small 200 --large 5000 [--baseline ../other/src] [--jobs 2]

    Each build runs as ``/usr/bin/time -v python -m sudokupool build --per-difficulty N --seed S --out DIR/``
    (``--jobs`` worker processes). It prints the peak of the whole command (what ``time -v`` reports: the largest
    of its processes), of the build's own process (where records are kept or written) and of its largest worker
    (read from /proc while it runs), and for each the slope between the two sizes in KB per kept puzzle, with
    the difference it makes between 200 and 5,000 per level (800 and 20,000 puzzles).
    """
    parser = options(build_memory_main.__doc__)
    parser.add_argument("--small", type=int, default=25, help="puzzles per level of the small build")
    parser.add_argument("--large", type=int, default=250, help="puzzles per level of the large build")
    parser.add_argument("--baseline", type=Path, help="the src/ directory of a checkout to compare with")
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    trees = [("this", ROOT / "src")] + ([("baseline", args.baseline)] if args.baseline else [])
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
