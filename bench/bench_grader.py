"""The grader against rated public puzzle sets and generated puzzles: solved share, time per puzzle,
Spearman of score against the Sudoku Explainer (SE) rating, and level agreement with HoDoKu.

Run:
    python bench/bench_grader.py --file bench/data/sudoku-exchange-all-levels.txt [--replay]
    python bench/bench_grader.py --file bench/data/sudoku-exchange-se-sample.txt [--replay]
    python bench/bench_grader.py --seeds 300 --first-seed 1
    python bench/bench_grader.py --file F --hodoku VENV_DIR [--hodoku-limit N]

Input lines: the first 81-character field is the puzzle ('.' or '0' for empty), a field that reads as
a number (e.g. ``7.2``) is its SE rating; other fields are ignored, so the Sudoku Exchange bank's
``hash puzzle rating`` lines work as they are. ``--hodoku DIR`` creates a virtual environment in DIR
(once), installs ``hodoku-py`` (HoDoKu's solver, GPL) into it and rates the puzzles there in a
separate process; nothing of it is imported here.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import time
import venv
from collections import Counter
from pathlib import Path

from sudokupool.sudoku.generator import generate
from sudokupool.sudoku.grader import grade
from sudokupool.sudoku.replay import replay
from sudokupool.sudoku.solver import solve

HODOKU_LEVELS = {"EASY": "Easy", "MEDIUM": "Medium", "HARD": "Hard", "UNFAIR": "Expert", "EXTREME": "Expert"}
HODOKU_SCRIPT = """
import json, sys, time
from hodoku import Solver
solver = Solver()
for line in sys.stdin:
    puzzle = line.strip()
    start = time.process_time()
    result = solver.solve(puzzle)
    print(json.dumps({"level": result.level.name, "score": result.score,
                      "seconds": time.process_time() - start}), flush=True)
"""


def read(path: Path) -> list[tuple[str, float | None]]:
    rows = []
    for line in path.read_text().splitlines():
        puzzle, rating = None, None
        for field in line.split():
            if len(field) == 81 and puzzle is None:
                puzzle = field.replace("0", ".")
            else:
                with contextlib.suppress(ValueError):
                    rating = float(field)
        if puzzle:
            rows.append((puzzle, rating))
    return rows


def ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: list[float], ys: list[float]) -> float:
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    return cov / (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5


def hodoku_rate(puzzles: list[str], env_dir: Path) -> list[dict[str, object]]:
    python = env_dir / "bin" / "python"
    if not python.exists():
        venv.create(env_dir, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "hodoku-py"], check=True)
    done = subprocess.run(
        [str(python), "-c", HODOKU_SCRIPT], input="\n".join(puzzles) + "\n", capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, action="append", default=[])
    parser.add_argument("--seeds", type=int, default=0, help="also grade this many generated puzzles")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="grade at most this many puzzles per file")
    parser.add_argument("--replay", action="store_true", help="replay every path (sound and justified)")
    parser.add_argument("--hodoku", type=Path, metavar="VENV_DIR", help="rate the puzzles with hodoku-py too")
    parser.add_argument("--hodoku-limit", type=int, default=0, help="rate only the first N puzzles with HoDoKu")
    args = parser.parse_args()

    rows: list[tuple[str, float | None]] = []
    for path in args.file:
        got = read(path)
        rows += got[: args.limit] if args.limit else got
    rows += [(generate(seed).puzzle, None) for seed in range(args.first_seed, args.first_seed + args.seeds)]

    times: list[float] = []
    statuses: Counter[str] = Counter()
    levels: Counter[str] = Counter()
    hardest: Counter[str] = Counter()
    graded = []
    bad = 0
    for puzzle, rating in rows:
        # CPU time of this process: on a shared machine wall time mostly measures the neighbours.
        start = time.process_time()
        g = grade(puzzle)
        times.append(time.process_time() - start)
        statuses[g.status] += 1
        if not g.solved:
            continue
        levels[str(g.difficulty)] += 1
        hardest[str(g.hardest_technique)] += 1
        graded.append((puzzle, rating, g))
        if args.replay:
            solution = solve(puzzle)
            assert solution is not None
            if replay(puzzle, solution, g.solve_path):
                bad += 1
    unique = len(rows) - statuses["multiple-solutions"] - statuses["no-solution"] - statuses["invalid"]
    print(f"puzzles: {len(rows)}, unique: {unique}, solved: {statuses['solved']} ({statuses['solved'] / unique:.1%})")
    print(f"statuses: {dict(statuses)}")
    ms = [1000 * t for t in times]
    print(
        f"CPU time per puzzle: median {statistics.median(ms):.1f} ms, p95 {pct(ms, 0.95):.0f} ms, max {max(ms):.0f} ms"
    )
    print(f"levels: {dict(sorted(levels.items()))}")
    print(f"hardest technique: {dict(hardest.most_common())}")
    if args.replay:
        print(f"paths that fail replay: {bad}")
    rated = [(float(r), float(g.score or 0)) for _, r, g in graded if r is not None]
    if len(rated) > 2:
        rho = spearman([s for _, s in rated], [r for r, _ in rated])
        print(f"Spearman(score, SE rating) over {len(rated)}: {rho:.3f}")
    if args.hodoku:
        sample = graded[: args.hodoku_limit] if args.hodoku_limit else graded
        theirs = hodoku_rate([p for p, _, _ in sample], args.hodoku)
        agree: Counter[bool] = Counter()
        confusion: Counter[tuple[str, str]] = Counter()
        for (_, _, g), h in zip(sample, theirs, strict=True):
            level = HODOKU_LEVELS.get(str(h["level"]), str(h["level"]))
            confusion[(str(g.difficulty), level)] += 1
            agree[g.difficulty == level] += 1
        print(f"level agreement with HoDoKu over {len(sample)}: {agree[True] / len(sample):.1%}")
        print(f"(ours, HoDoKu's): {dict(sorted(confusion.items()))}")
        hs = [1000 * float(str(h["seconds"])) for h in theirs]
        print(
            f"HoDoKu CPU time per puzzle: median {statistics.median(hs):.1f} ms, p95 {pct(hs, 0.95):.0f} ms, "
            f"max {max(hs):.0f} ms"
        )
        scored = [(float(str(h["score"])), r) for (_, r, _), h in zip(sample, theirs, strict=True) if r is not None]
        if len(scored) > 2:
            print(f"HoDoKu Spearman(score, SE rating): {spearman([s for s, _ in scored], [r for _, r in scored]):.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
