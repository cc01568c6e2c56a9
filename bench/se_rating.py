"""``python -m bench se-like``: the Sudoku-Explainer-like rating (bench/se_like.py) against the SE ratings of
rated sets, and the stars a pool's levels would give."""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import json
import math
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.grading import Banding, best_bands, cuts_text, pct, read, shares, spearman
from bench.harness import options
from sudokupool.sudoku.grader import grade

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


def se_like_main() -> None:
    """The experiment of issue 36: a Sudoku-Explainer-like rating by a second solve (``bench/se_like.py``)
    against the SE ratings of rated sets: per set, Spearman of it and of the grader's score against SE, the best
    5 bands of it (cut points chosen on the set itself, as ``scale-figures`` does for the score), and the CPU
    time per puzzle of the grader and of the second solve.

    Run:
        python -m bench se-like --set sample=bench/data/sudoku-exchange-se-sample.txt \
            --set holdout=bench/data/sudoku-exchange-se-holdout.txt [--table NAME=VALUE ...] [--out F.ndjson]

    ``--table`` sets a field of ``se_like.Table`` (base ratings, how lengths are counted, which searches run).
    ``--out`` writes one JSON line per puzzle: set, SE rating, score, SE-like rating, its steps' ratings and
    techniques, and both CPU times.
    """
    from bench.se_like import Table, se_like

    parser = options(se_like_main.__doc__)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=RATED", help="a rated set")
    parser.add_argument("--table", action="append", default=[], metavar="NAME=VALUE", help="a field of Table")
    parser.add_argument("--limit", type=int, default=0, help="at most this many puzzles a set")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--pool", type=Path, help="a pool export: the best stars from levels and the SE-like rating")
    parser.add_argument("--held-out", action="append", default=[], metavar="NAME", help="a set the star search ignores")
    args = parser.parse_args()
    fields = {f.name: f.type for f in dataclasses.fields(Table)}
    overrides: dict[str, Any] = {}
    for item in args.table:
        name, value = item.split("=", 1)
        kind = fields[name]
        overrides[name] = (
            value in ("1", "true", "yes") if kind == "bool" else int(value) if kind == "int" else float(value)
        )
    table = Table(**overrides)
    print(f"table: {table}")
    out = args.out.open("w") if args.out else None
    rated: dict[str, tuple[list[int], list[float], list[float]]] = {}
    for item in args.set:
        name, path = item.split("=", 1)
        rows = [(p, r) for p, r in read(Path(path)) if r is not None]
        rows = rows[: args.limit] if args.limit else rows
        se, scores, likes, grade_ms, like_ms, levels = [], [], [], [], [], []
        for puzzle, rating in rows:
            start = time.process_time()
            g = grade(puzzle)
            middle = time.process_time()
            like, steps = se_like(puzzle, table)
            end = time.process_time()
            se.append(float(rating or 0))
            scores.append(float(g.score or 0))
            likes.append(like)
            levels.append(g.difficulty_level or 0)
            grade_ms.append(1000 * (middle - start))
            like_ms.append(1000 * (end - middle))
            if out:
                line = {"set": name, "puzzle": puzzle, "se": rating, "score": g.score, "like": like, "steps": steps}
                out.write(json.dumps({**line, "grade_ms": grade_ms[-1], "like_ms": like_ms[-1]}) + "\n")
        five, cuts = best_bands([Banding.of(likes, se)], 5)
        # The grader's score orders the puzzles that share an SE-like rating (it stays under 0.1 of rating).
        tied = [like + score / 1e6 for like, score in zip(likes, scores, strict=True)]
        five_tied, cuts_tied = best_bands([Banding.of(tied, se)], 5)
        print(
            f"{name}: {len(se)} rated; Spearman ~ SE: SE-like {spearman(likes, se):.3f}, score "
            f"{spearman(scores, se):.3f}; 5 bands of SE-like {five:.3f} (cuts {cuts_text(cuts)}); SE-like with "
            f"ties ordered by score {spearman(tied, se):.3f}, its 5 bands {five_tied:.3f} (cuts {cuts_text(cuts_tied)})"
        )
        both = [g + s for g, s in zip(grade_ms, like_ms, strict=True)]
        print(
            f"  CPU ms per puzzle, median / p95: grader {statistics.median(grade_ms):.1f} / {pct(grade_ms, 0.95):.0f}, "
            f"second solve {statistics.median(like_ms):.1f} / {pct(like_ms, 0.95):.0f}, both "
            f"{statistics.median(both):.1f} / {pct(both, 0.95):.0f}",
            flush=True,
        )
        rated[name] = (levels, likes, se)
    if out:
        out.close()
    if args.pool:
        stars_from_levels(args.pool, table, rated, set(args.held_out))


def stars_from_levels(
    pool: Path, table: Any, rated: dict[str, tuple[list[int], list[float], list[float]]], held_out: set[str]
) -> None:
    """The best stars that keep HoDoKu's levels and rank within Hard and Expert by the SE-like rating (or, as the
    oracle, by the SE rating itself, which only the rated sets have): Easy 1 and Medium 2 (not searched; the rated
    sets are Hard and Expert), then either Hard 3-4 and Expert 4-5 (one cut each: every level over two values, as
    the rules ask) or Hard 2-3 and Expert 3-5 (two cuts in Expert, which leaves Easy one value). A cut must keep
    each value within 80 % of its level in the pool (``pool`` windows; not for the oracle) and each value within
    60 % of a set's SE 6+ puzzles; the scale kept has the best lowest Spearman of the sets not held out."""
    from bench.se_like import se_like

    with gzip.open(pool, "rt") as f:
        records = [json.loads(line) for line in f if line.strip()]
    by_level: dict[int, list[float]] = {3: [], 4: []}
    for record in records:
        if record["difficulty_level"] in by_level:
            by_level[record["difficulty_level"]].append(se_like(record["puzzle"], table)[0])
    for level, name in ((3, "Hard"), (4, "Expert")):
        counts = Counter(round(x, 1) for x in by_level[level])
        print(f"pool {name} by SE-like rating: {dict(sorted(counts.items()))}")

    def within(values: list[float], cuts: tuple[float, ...], most: float) -> bool:
        edges = [-math.inf, *cuts, math.inf]
        counts = [sum(lo <= v < hi for v in values) for lo, hi in itertools.pairwise(edges)]
        return all(0 < c <= most * len(values) for c in counts)

    for key_name, key in (("SE-like", 1), ("SE itself (oracle, no pool windows)", 2)):
        for shape in ("Hard 3-4, Expert 4-5", "Hard 2-3, Expert 3-5"):
            three = shape.endswith("3-5")
            keys = sorted({round(x, 1) for sets in rated.values() for x in sets[key]})

            def stars(level: int, x: float, cuts: tuple[float, ...], three: bool = three) -> int:
                if level == 3:
                    return 2 + (not three) + (x >= cuts[0])
                if level == 4:
                    return 3 + (not three) + sum(x >= c for c in cuts[1:])
                return level

            best: tuple[float, tuple[float, ...]] | None = None
            upper = [k for k in keys if k >= 5]  # the Expert cuts: the rated sets are SE 5 and up
            for cuts in itertools.product(keys, itertools.combinations(upper, 2 if three else 1)):
                flat = (cuts[0], *cuts[1])  # type: ignore[misc]
                if key == 1 and not (within(by_level[3], flat[:1], 0.8) and within(by_level[4], flat[1:], 0.8)):
                    continue
                ok, figures = True, []
                for name, sets in rated.items():
                    if name in held_out or not ok:
                        continue
                    values = [stars(lv, x, flat) for lv, x in zip(sets[0], sets[key], strict=True)]
                    high = Counter(v for v, r in zip(values, sets[2], strict=True) if r >= 6)
                    ok = max(high.values()) <= 0.6 * sum(high.values())
                    figures.append(spearman([float(v) for v in values], sets[2]))
                if ok and figures and (best is None or min(figures) > best[0]):
                    best = (min(figures), flat)
            if best is None:
                print(f"{key_name}, {shape}: no scale keeps the rules")
                continue
            flat = best[1]
            each = []
            for name, sets in rated.items():
                values = [stars(lv, x, flat) for lv, x in zip(sets[0], sets[key], strict=True)]
                high = [v for v, r in zip(values, sets[2], strict=True) if r >= 6]
                each.append(
                    f"{name}{' (held out)' if name in held_out else ''} "
                    f"{spearman([float(v) for v in values], sets[2]):.3f} (SE 6+: {shares(high)})"
                )
            print(f"{key_name}, {shape}, cuts {cuts_text(flat)}: " + "; ".join(each))
