"""How the score and the stars spread and rank: Spearman against Sudoku Explainer (SE) ratings per set, star
shares among the puzzles rated SE 6 or more, and per level of a pool, the distinct scores and the stars.

Run (the dumps from ``bench/grade_dump.py``, whose solve paths this rescoring reads):
    python bench/scale_figures.py \\
        --set sample=out/dump-se-sample.ndjson:data/sudoku-exchange-se-sample.txt \\
        --set all-levels=out/dump-all-levels.ndjson:data/sudoku-exchange-all-levels.txt \\
        --pool out/dump-pool.ndjson

Scores, tiers and stars are worked out again from each dumped solve path with this tree's grader
(``score_of``, ``stars_of``); the score and stars a dump carries (the grader that made it) are shown beside
them as "dumped", so a dump made before a change to the scale compares the two.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench_grader import read, spearman
from sudokupool.sudoku.grader import score_of, stars_of, tier_of
from sudokupool.sudoku.techniques.step import difficulty


def rescore(row: dict[str, Any]) -> int:
    steps = [SimpleNamespace(difficulty=difficulty(s["technique"], len(s["cells"]))) for s in row["solve_path"]]
    return score_of(steps)  # type: ignore[arg-type]  # only .difficulty is read


def shares(values: list[int]) -> str:
    counts = Counter(values)
    return ", ".join(f"{k}: {v} ({v / len(values):.0%})" for k, v in sorted(counts.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME=DUMP:RATED", help="a rated set")
    parser.add_argument("--pool", type=Path, help="a dump of a pool's puzzles (levels, no ratings)")
    args = parser.parse_args()
    high: list[tuple[int, int]] = []
    for item in args.set:
        name, paths = item.split("=", 1)
        dump, rated = paths.split(":", 1)
        rows = [json.loads(line) for line in Path(dump).read_text().splitlines()]
        ratings = [se for _, se in read(Path(rated))]
        pairs = [(row, se) for row, se in zip(rows, ratings, strict=True) if se is not None]
        se = [float(s) for _, s in pairs]
        scores = [rescore(row) for row, _ in pairs]
        stars = [stars_of(s) for s in scores]
        old_stars = [row["stars"] for row, _ in pairs]
        print(
            f"{name}: {len(pairs)} rated; Spearman ~ SE: score {spearman(scores, se):.3f} "
            f"(dumped {spearman([row['score'] for row, _ in pairs], se):.3f}), stars {spearman(stars, se):.3f} "  # type: ignore[arg-type]
            f"(dumped {spearman(old_stars, se):.3f})"
        )
        hi = [(new, old) for new, old, s in zip(stars, old_stars, se, strict=True) if s >= 6]
        if hi:
            print(f"  SE >= 6 ({len(hi)}): stars {shares([n for n, _ in hi])}; dumped {shares([o for _, o in hi])}")
        high += hi
    if high:
        print(f"all sets, SE >= 6 ({len(high)}): stars {shares([n for n, _ in high])}")
    if args.pool:
        rows = [json.loads(line) for line in args.pool.read_text().splitlines()]
        for level in ("Easy", "Medium", "Hard", "Expert"):
            these = [row for row in rows if row["difficulty"] == level]
            scores = [rescore(row) for row in these]
            print(
                f"{level}: {len(set(scores))} distinct scores (dumped {len({r['score'] for r in these})}), "
                f"{min(scores)}-{max(scores)}; stars {shares([stars_of(s) for s in scores])}; "
                f"dumped {shares([r['stars'] for r in these])}; tiers {Counter(tier_of(s) for s in scores)}"
            )


if __name__ == "__main__":
    main()
