"""The grader's evaluation: levels and scores on puzzle files, dumps and their diffs, and the scale's figures
(``grader``, ``grade-dump``, ``scale-figures``). What a build yields and costs is bench/build.py's."""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import gzip
import itertools
import json
import math
import statistics
import subprocess
import sys
import time
import venv
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.harness import options
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.generator import generate
from sudokupool.sudoku.grader import STARS, grade, score_of, stars_of, tier_of
from sudokupool.sudoku.replay import replay
from sudokupool.sudoku.solver import solve
from sudokupool.sudoku.techniques.step import difficulty

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


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


def bench_grader_main() -> None:
    """The grader against rated public puzzle sets and generated puzzles: solved share, time per puzzle,
    Spearman of score against the Sudoku Explainer (SE) rating, and level agreement with HoDoKu.

    Run:
        python -m bench grader --file bench/data/sudoku-exchange-all-levels.txt [--replay]
        python -m bench grader --file bench/data/sudoku-exchange-se-sample.txt [--replay]
        python -m bench grader --seeds 300 --first-seed 1
        python -m bench grader --file F --hodoku VENV_DIR [--hodoku-limit N]

    Input lines: the first 81-character field is the puzzle ('.' or '0' for empty), a field that reads as
    a number (e.g. ``7.2``) is its SE rating; other fields are ignored, so the Sudoku Exchange bank's
    ``hash puzzle rating`` lines work as they are. ``--hodoku DIR`` creates a virtual environment in DIR
    (once), installs ``hodoku-py`` (HoDoKu's solver, GPL) into it and rates the puzzles there in a
    separate process; nothing of it is imported here.
    """
    parser = options(bench_grader_main.__doc__)
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


def grade_dump_main() -> None:
    """Grade every puzzle of a file and write one JSON line per puzzle: the puzzle and its grade.

    Run:
        python -m bench grade-dump --file bench/data/sudoku-exchange-se-fresh.txt --out OUT.ndjson
        python -m bench grade-dump --pool snapshots/pool-....ndjson.gz --out OUT.ndjson

    Run it once per source tree (``PYTHONPATH``) to compare two graders puzzle by puzzle.
    """
    parser = options(grade_dump_main.__doc__)
    parser.add_argument("--file", type=Path)
    parser.add_argument("--pool", type=Path, help="a pool export (.ndjson.gz) whose lines carry `puzzle`")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.pool:
        with gzip.open(args.pool, "rt") as f:
            puzzles = [json.loads(line)["puzzle"] for line in f if line.strip()]
    else:
        puzzles = [puzzle for puzzle, _ in read(args.file)]
    with args.out.open("w") as out:
        for puzzle in puzzles:
            out.write(json.dumps({"puzzle": puzzle, **dataclasses.asdict(grade(puzzle))}) + "\n")


#: Cut points tried at once by the band search; with more distinct values it starts from this many spread
#: over them and moves each cut in turn while that helps.
BAND_CANDIDATES = 48


@dataclasses.dataclass
class Banding:
    """A set ordered by a key (the SE rating, the score), for the Spearman of bands of that key against its
    ratings: ``count[i]`` items have a key below ``values[i]`` (``count[-1]`` is every item) and ``excess[i]``
    is their sum of (rating's rank - mean rank); ``spread`` is the ratings' root sum of squares of that."""

    values: list[float]
    count: list[int]
    excess: list[float]
    spread: float

    @classmethod
    def of(cls, keys: list[float], ratings: list[float]) -> Banding:
        rank = ranks(ratings)
        mean = (len(rank) + 1) / 2
        by_key: dict[float, list[float]] = {}
        for key, r in zip(keys, rank, strict=True):
            by_key.setdefault(key, []).append(r - mean)
        values = sorted(by_key)
        count, excess = [0], [0.0]
        for value in values:
            count.append(count[-1] + len(by_key[value]))
            excess.append(excess[-1] + sum(by_key[value]))
        return cls(values, count, excess, sum((r - mean) ** 2 for r in rank) ** 0.5)

    def rho(self, cuts: tuple[float, ...]) -> float:
        """Spearman of the band number (a key at or above ``cuts[i]`` is past band i) against the ratings."""
        edges = [0, *(bisect.bisect_left(self.values, cut) for cut in cuts), len(self.values)]
        mean = (self.count[-1] + 1) / 2
        cov = var = 0.0
        for a, b in itertools.pairwise(edges):
            low, high = self.count[a], self.count[b]
            if high > low:
                mid = (low + high + 1) / 2 - mean  # the band's rank: every item of it ties
                cov += mid * (self.excess[b] - self.excess[a])
                var += (high - low) * mid * mid
        return cov / (var**0.5 * self.spread) if var else 0.0


def best_bands(sets: list[Banding], bands: int) -> tuple[float, tuple[float, ...]]:
    """The cut points into ``bands`` bands with the best lowest Spearman over ``sets``, and that figure:
    every cut among the keys tried when there are at most ``BAND_CANDIDATES``, otherwise the best among that
    many spread over the keys, then each cut moved in turn over every key while the figure grows."""
    keys = sorted({value for s in sets for value in s.values})[1:]  # a cut at the lowest key changes nothing

    def worst(cuts: tuple[float, ...]) -> float:
        return min(s.rho(cuts) for s in sets)

    step = max(1, -(-len(keys) // BAND_CANDIDATES))
    best = max(itertools.combinations(keys[::step], bands - 1), key=worst)
    figure, moved = worst(best), True
    while moved and step > 1:
        moved = False
        for i in range(bands - 1):
            low, high = (best[i - 1] if i else -math.inf), (best[i + 1] if i < bands - 2 else math.inf)
            for key in keys:
                cuts = (*best[:i], key, *best[i + 1 :])
                if low < key < high and (got := worst(cuts)) > figure:
                    best, figure, moved = cuts, got, True
    return figure, best


def cuts_text(cuts: tuple[float, ...]) -> str:
    return " ".join(f"{c:g}" for c in cuts)


def window(scores: list[int], candidates: list[int], most: float = 0.8) -> list[int]:
    """The candidate cuts that leave at most ``most`` of ``scores`` on either side."""
    ordered = sorted(scores)
    return [
        c
        for c in candidates
        if max(bisect.bisect_left(ordered, c), len(ordered) - bisect.bisect_left(ordered, c)) <= most * len(ordered)
    ]


def stars_within(
    levels: dict[str, list[int]], rated: dict[str, tuple[list[int], list[float]]], held_out: set[str]
) -> tuple[float, tuple[int, ...]] | None:
    """Print the best stars with one cut in each level's window (see :func:`scale_figures_main`) and return their
    figure and cuts; None when the windows overlap or no scale keeps the 60 % rule."""
    candidates = sorted({s for scores in levels.values() for s in scores} | {s for sc, _ in rated.values() for s in sc})
    windows = [window(scores, candidates) for scores in levels.values()]
    for name, w in zip(levels, windows, strict=True):
        print(f"  {name}: one cut splits it within 80 % from {w[0]} to {w[-1]}" if w else f"  {name}: no cut does")
    if not all(windows) or any(a[-1] >= b[0] for a, b in itertools.pairwise(windows)):
        print("  the windows overlap or one is empty: no search")
        return None
    bands = {name: Banding.of([float(s) for s in sc], se) for name, (sc, se) in rated.items()}
    # The held-out sets take no part in the choice, the 60 % rule included; their shares are shown after.
    high = {
        name: sorted(s for s, r in zip(sc, se, strict=True) if r >= 6)
        for name, (sc, se) in rated.items()
        if name not in held_out
    }

    def shares_within(cuts: tuple[int, ...], most: float = 0.6) -> bool:
        for scores in high.values():
            edges = [0, *(bisect.bisect_left(scores, c) for c in cuts), len(scores)]
            if any(b - a > most * len(scores) for a, b in itertools.pairwise(edges)):
                return False
        return True

    def top_share_within(cut: int, most: float = 0.6) -> bool:  # the top star's share needs only the last cut
        return all(len(s) - bisect.bisect_left(s, cut) <= most * len(s) for s in high.values())

    best: tuple[float, tuple[int, ...]] | None = None
    tried = 0
    for last in (c for c in windows[-1] if top_share_within(c)):
        for cuts in itertools.product(*windows[:-1]):
            tried += 1
            if shares_within((*cuts, last)):
                figure = min(b.rho((*cuts, last)) for name, b in bands.items() if name not in held_out)
                if best is None or figure > best[0]:
                    best = (figure, (*cuts, last))
    if best is None:
        print(f"  no scale of {tried} tried keeps every set's SE 6+ puzzles within 60 % a star value")
        return None
    cuts = best[1]
    each = ", ".join(f"{n} {b.rho(cuts):.3f}{' (held out)' if n in held_out else ''}" for n, b in bands.items())
    now = ", ".join(f"{n} {b.rho(tuple(low for low, _ in STARS[1:])):.3f}" for n, b in bands.items())
    print(f"  best of {tried} scales: stars from {cuts_text(cuts)}: {each}; the stars now: {now}")
    for name in sorted(held_out & set(rated)):
        sc, se = rated[name]
        top = [1 + sum(s >= c for c in cuts) for s, r in zip(sc, se, strict=True) if r >= 6]
        print(f"  {name} (held out), SE >= 6 ({len(top)}): stars {shares(top)}")
    return best


def rescore(row: dict[str, Any]) -> int:
    steps = [SimpleNamespace(difficulty=difficulty(s["technique"], len(s["cells"]))) for s in row["solve_path"]]
    return score_of(steps)  # type: ignore[arg-type]  # only .difficulty is read


def shares(values: list[int]) -> str:
    counts = Counter(values)
    return ", ".join(f"{k}: {v} ({v / len(values):.0%})" for k, v in sorted(counts.items()))


def scale_figures_main() -> None:
    """How the score and the stars spread and rank: Spearman against Sudoku Explainer (SE) ratings per set, star
    shares among the puzzles rated SE 6 or more, and per level of a pool, the distinct scores and the stars.

    Run (the dumps from ``python -m bench grade-dump``, whose solve paths this rescoring reads), from the
    repository root:
        for s in se-sample se-holdout se-fresh all-levels; do python -m bench grade-dump \
            --file bench/data/sudoku-exchange-$s.txt --out bench/out/dump-$s.ndjson; done
        python -m bench grade-dump --pool snapshots/pool-*.ndjson.gz --out bench/out/dump-pool.ndjson
        python -m bench scale-figures \
            --set sample=bench/out/dump-se-sample.ndjson:bench/data/sudoku-exchange-se-sample.txt \
            --set holdout=bench/out/dump-se-holdout.ndjson:bench/data/sudoku-exchange-se-holdout.txt \
            --set all-levels=bench/out/dump-all-levels.ndjson:bench/data/sudoku-exchange-all-levels.txt \
            --set fresh=bench/out/dump-se-fresh.ndjson:bench/data/sudoku-exchange-se-fresh.txt \
            --pool bench/out/dump-pool.ndjson --held-out fresh

    Scores, tiers and stars are worked out again from each dumped solve path with this tree's grader
    (``score_of``, ``stars_of``); the score and stars a dump carries (the grader that made it) are shown beside
    them as "dumped", so a dump made before a change to the scale compares the two.

    The ceiling of any star scale (the oracle): per set, the best Spearman that cutting the SE rating itself into
    5 bands reaches (cut points chosen for that set, and for 3 bands), and that cutting the score into 5 bands
    reaches (cut points chosen for that set, no constraint on levels); then one set of 5 SE bands for all the
    sets, chosen for the best lowest per-set figure. Stars that give the puzzles of one SE rating one value rank a
    set no better than its best SE bands; stars cut from the score rank it no better than the score's best bands.

    With ``--pool`` and rated sets, the best stars under the scale's two rules: no star value holds more than 80 %
    of a level of the pool, nor more than 60 % of a set's puzzles rated SE 6 or more. Four cuts make five stars,
    and a level split by one cut needs it inside the level's window (the cuts that leave at most 80 % of it on
    either side); when the four windows do not overlap, the search tries every scale with one cut in each
    window, every score in them (a level could also be split by two cuts outside its window, which it does not
    try). The figure kept is the lowest per-set Spearman of the stars over the sets not named by ``--held-out``,
    which take no part in the choice (the 60 % rule included); their figures are shown beside it.
    """
    parser = options(scale_figures_main.__doc__)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=DUMP:RATED", help="a rated set")
    parser.add_argument("--pool", type=Path, help="a dump of a pool's puzzles (levels, no ratings)")
    parser.add_argument("--held-out", action="append", default=[], metavar="NAME", help="a set the search ignores")
    args = parser.parse_args()
    high: list[tuple[int, int]] = []
    by_rating: dict[str, Banding] = {}
    scored: dict[str, tuple[list[int], list[float]]] = {}
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
        by_rating[name] = Banding.of(se, se)
        scored[name] = (scores, se)
        se5, se5_cuts = best_bands([by_rating[name]], 5)
        se3, se3_cuts = best_bands([by_rating[name]], 3)
        score5, score5_cuts = best_bands([Banding.of([float(s) for s in scores], se)], 5)
        print(
            f"  oracle: 5 bands of SE {se5:.3f} (cuts {cuts_text(se5_cuts)}), 3 bands of SE {se3:.3f} "
            f"({cuts_text(se3_cuts)}); 5 bands of the score {score5:.3f} ({cuts_text(score5_cuts)})"
        )
        hi = [(new, old) for new, old, s in zip(stars, old_stars, se, strict=True) if s >= 6]
        if hi:
            print(f"  SE >= 6 ({len(hi)}): stars {shares([n for n, _ in hi])}; dumped {shares([o for _, o in hi])}")
        high += hi
    if len(scored) > 1:
        for label, names in (
            ("all sets", list(scored)),
            ("not held out", [n for n in scored if n not in args.held_out]),
        ):
            if args.held_out or label == "all sets":
                scores = [float(s) for n in names for s in scored[n][0]]
                se = [r for n in names for r in scored[n][1]]
                stars = [float(stars_of(int(s))) for s in scores]
                print(
                    f"{label} together ({len(se)} rated): Spearman ~ SE: score {spearman(scores, se):.3f}, "
                    f"stars {spearman(stars, se):.3f}"
                )
        _, cuts = best_bands(list(by_rating.values()), 5)
        each = ", ".join(f"{name} {b.rho(cuts):.3f}" for name, b in by_rating.items())
        print(f"oracle, one set of 5 SE bands for every set: cuts {cuts_text(cuts)}; {each}")
    if high:
        print(f"all sets, SE >= 6 ({len(high)}): stars {shares([n for n, _ in high])}")
    if args.pool:
        rows = [json.loads(line) for line in args.pool.read_text().splitlines()]
        levels: dict[str, list[int]] = {}
        for level in DIFFICULTIES:
            these = [row for row in rows if row["difficulty"] == level]
            scores = levels[level] = [rescore(row) for row in these]
            print(
                f"{level}: {len(set(scores))} distinct scores (dumped {len({r['score'] for r in these})}), "
                f"{min(scores)}-{max(scores)}; stars {shares([stars_of(s) for s in scores])}; "
                f"dumped {shares([r['stars'] for r in these])}; tiers {Counter(tier_of(s) for s in scores)}"
            )
        if scored:
            print("stars under the rules (at most 80 % of a level, 60 % of a set's SE 6+ at one value):")
            stars_within(levels, scored, set(args.held_out))
