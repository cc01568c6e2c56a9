"""What a build asks for (an :class:`Order`), and the worker side that makes puzzles to it, in index order.

Puzzle ``i`` of a build is generated from a seed derived from ``(build seed, i)`` alone, and a worker decides
alone whether it can be kept (its level, techniques and minimality), so a seed gives the same puzzles whatever
the number of processes. A worker stops on a puzzle as soon as it cannot be of a wanted level: an Easy one is
recognised by singles alone before it is graded, and grading stops at the first step past the hardest wanted
level; only a puzzle that may be kept travels back with its grade and solve path.

A build steered toward one level (``Order.steer``) digs every puzzle toward it
(:func:`~sudokupool.sudoku.generator.generate`); what puzzle ``i`` is still depends on ``i`` alone.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from multiprocessing.pool import AsyncResult

from sudokupool.exporting.suggest import closest
from sudokupool.exporting.workers import worker_pool
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.generator import generate
from sudokupool.sudoku.grader import MAX_SCORE, Grade, grade_within
from sudokupool.sudoku.grid import EMPTY
from sudokupool.sudoku.solver import count_solutions, solved_by_singles
from sudokupool.sudoku.technique_table import SCORES

CHUNK = 4  # puzzles per task sent to a worker: large enough to amortise IPC, small enough to stay ordered
UNSOLVED = "unsolved"
#: Not graded to the end: sure not to be of a wanted level.
SKIPPED = "skipped"
#: Graded, of a wanted level, but without a wanted technique or not minimal.
UNFIT = "unfit"


@dataclass(frozen=True, slots=True)
class Order:
    """What a build keeps: its clue ``symmetry``, the wanted ``levels`` (1-4), the ``techniques`` every solve
    path must use, and whether puzzles must be ``minimal``."""

    symmetry: str
    levels: frozenset[int] = frozenset({1, 2, 3, 4})
    techniques: tuple[str, ...] = ()
    minimal: bool = False
    #: The level every puzzle's dig is steered toward (None: not steered).
    steer: int | None = None

    def without(self, level: int) -> Order:
        """This order less ``level`` (its quota is full), unless that would leave no level."""
        return replace(self, levels=self.levels - {level}) if self.levels - {level} else self

    def fits(self, g: Grade) -> bool:
        return g.difficulty_level in self.levels and all(t in g.techniques for t in self.techniques)


def is_minimal(puzzle: str) -> bool:
    """True when no single clue of ``puzzle`` (unique) can be removed without losing its uniqueness."""
    return all(
        count_solutions(puzzle[:cell] + EMPTY + puzzle[cell + 1 :], 2) > 1
        for cell in range(81)
        if puzzle[cell] != EMPTY
    )


def puzzle_seed(build_seed: int, index: int) -> int:
    """The seed of puzzle ``index`` of a build: 48 bits, so it survives JSON readers that use doubles."""
    digest = hashlib.sha256(f"sudokupool-build:{build_seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` of ``count`` of a build: its puzzle ``i`` is the build's puzzle ``i * count + index``, so
    the shards of one seed draw on disjoint puzzle indexes, together exactly the puzzles of an unsharded build
    of that seed, and each shard is the same wherever and whenever it runs."""

    index: int = 0
    count: int = 1

    def build_index(self, index: int) -> int:
        return index * self.count + self.index


@dataclass(frozen=True, slots=True)
class Made:
    """One generated puzzle, as a worker returns it: with its grade and canonical form when it may be kept."""

    index: int
    seed: int
    puzzle: str
    solution: str
    #: Its difficulty name, or UNSOLVED, SKIPPED or UNFIT.
    outcome: str
    grade: Grade | None
    form: str
    generate_seconds: float
    grade_seconds: float


def _make(index: int, seed: int, order: Order) -> Made:
    t0 = time.perf_counter()
    made = generate(seed, order.symmetry, order.steer)
    t1 = time.perf_counter()
    puzzle, solution = made.puzzle, made.solution
    # A puzzle singles fill, short enough that no total of single steps passes Easy's maximum, is Easy.
    if 1 not in order.levels and 14 * puzzle.count(EMPTY) <= MAX_SCORE[1] and solved_by_singles(puzzle):
        return Made(index, seed, puzzle, solution, DIFFICULTIES[0], None, "", t1 - t0, time.perf_counter() - t1)
    g = grade_within(puzzle, max(order.levels))
    if g is None:
        outcome, g = SKIPPED, None
    elif not g.solved:
        outcome, g = UNSOLVED, None
    elif not order.fits(g) or (order.minimal and not is_minimal(puzzle)):
        outcome, g = UNFIT if g.difficulty_level in order.levels else str(g.difficulty), None
    else:
        outcome = str(g.difficulty)
    form = canonical_form(puzzle) if g is not None else ""
    return Made(index, seed, puzzle, solution, outcome, g, form, t1 - t0, time.perf_counter() - t1)


def make_chunk(task: tuple[int, int, int, Order], shard: Shard | None = None) -> list[Made]:
    """Worker: generate and grade puzzles ``start .. start + size - 1`` of the build (of its shard)."""
    build_seed, start, size, order = task
    shard = shard or Shard()
    return [
        _make(index, puzzle_seed(build_seed, shard.build_index(index)), order) for index in range(start, start + size)
    ]


def ordered_results(
    build_seed: int, order: Callable[[], Order], jobs: int, shard: Shard | None = None
) -> Iterator[Made]:
    """Every puzzle of the build (of its shard) in index order, computed ahead by ``jobs`` processes, each chunk
    to the ``order()`` of when it is sent (a build narrows its levels as their quotas fill)."""
    if jobs <= 1:
        start = 0
        while True:
            yield from make_chunk((build_seed, start, CHUNK, order()), shard)
            start += CHUNK
    with worker_pool(jobs) as pool:
        window: deque[AsyncResult[list[Made]]] = deque()
        start = 0
        while True:
            # Keep a bounded window of chunks in flight; results are taken from the left, in order.
            while len(window) < jobs * 4:
                window.append(pool.apply_async(make_chunk, ((build_seed, start, CHUNK, order()), shard)))
                start += CHUNK
            yield from window.popleft().get()


@dataclass
class Stats:
    """Raw generation statistics per outcome (a difficulty, or a puzzle not kept for another reason)."""

    made: Counter[str] = field(default_factory=Counter)
    generate_seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    grade_seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    duplicates: int = 0

    def add(self, made: Made) -> None:
        self.made[made.outcome] += 1
        self.generate_seconds[made.outcome] += made.generate_seconds
        self.grade_seconds[made.outcome] += made.grade_seconds

    def lines(self) -> list[str]:
        total = sum(self.made.values())
        out = [f"raw puzzles: {total}, duplicates dropped: {self.duplicates}"]
        for name in (*DIFFICULTIES, UNSOLVED, SKIPPED, UNFIT):
            n = self.made[name]
            if n:
                gen = self.generate_seconds[name] / n * 1000
                grd = self.grade_seconds[name] / n * 1000
                out.append(f"  {name:<8} {n:>7} ({n / total:6.1%})  generate {gen:7.1f} ms  grade {grd:7.1f} ms")
        return out


def technique_name(text: str) -> str:
    """The grader's name for ``text`` (any case); ValueError naming the choices when there is none."""
    by_name = {name.lower(): name for name in SCORES}
    name = by_name.get(text.strip().lower())
    if name is None:
        close = closest(text, SCORES)
        raise ValueError(
            f"unknown technique {text!r} "
            + (f"(did you mean {close!r}?)" if close else f"(choose from {', '.join(SCORES)})")
        )
    return name
