"""A build: generate, grade and deduplicate puzzles to an :class:`~sudokupool.exporting.orders.Order` and write
them as an export.

Puzzle ``i`` of a build is generated from a seed derived from ``(seed, i)`` alone, the work is spread over
``jobs`` processes, and results are consumed strictly in index order, so a seed always yields the same puzzles
in the same order whatever the number of processes (only the timestamps differ). A puzzle is kept when the
grader solves it completely, it fits the order (its level wanted, and its quota not yet full; its path uses
every technique; minimal when asked), and its canonical form is new. Kept records go to disk as they are kept
(:class:`~sudokupool.exporting.writer.ExportWriter`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sudokupool import __version__
from sudokupool.exporting.orders import Made, Order, Shard, Stats, ordered_results
from sudokupool.exporting.writer import ExportWriter, output_path
from sudokupool.storage.naming import is_export_name
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.grid import clue_count
from sudokupool.sudoku.ids import canonical_id, puzzle_id
from sudokupool.sudoku.symmetry import symmetry_class

#: What made a record: the builder at the package's version, raised when the grading changes.
SOURCE = f"sudokupool-build/{__version__}"
#: Appended to the output's name when a build misses its target: not an export name, so a service pointed at
#: the directory does not load a short build as the newest export.
PARTIAL = ".partial"


@dataclass(frozen=True)
class Plan:
    """What to build: the ``order`` from ``seed`` (its ``shard``) in ``jobs`` processes, ``target`` puzzles of the
    ``wanted`` difficulties (with ``quotas``: that many of each), within ``time_limit`` seconds, each record
    with ``tags`` and ``volume``."""

    order: Order
    seed: int
    wanted: tuple[str, ...]
    target: int
    quotas: dict[str, int] | None = None
    shard: Shard = field(default_factory=Shard)
    jobs: int = 1
    time_limit: float | None = None
    tags: tuple[str, ...] = ()
    volume: str | None = None


@dataclass
class Built:
    """What a build wrote: the export's ``path`` (a ``.partial`` name when ``timed_out``), its pack, and counts."""

    path: Path
    packed: Path | None
    count: int
    inflated: int
    kept_by: Counter[str]
    stats: Stats
    timed_out: bool
    seconds: float


def make_record(made: Made, symmetry: str, tags: list[str], volume: str | None) -> dict[str, Any]:
    """The export record for a kept puzzle (field order is applied by ``record_line``)."""
    g, form = made.grade, made.form
    assert g is not None  # only graded puzzles are kept
    now = int(time.time())
    return {
        "canonical_id": canonical_id(form),
        "puzzle_id": puzzle_id(made.puzzle),
        "puzzle": made.puzzle,
        "solution": made.solution,
        "canonical": form,
        "difficulty": g.difficulty,
        "difficulty_level": g.difficulty_level,
        "clue_count": clue_count(made.puzzle),
        "symmetric": symmetry != "none",
        "symmetry": symmetry,
        "seed": made.seed,
        "created_at": now,
        "tags": tags,
        "score": g.score,
        "tier": g.tier,
        "stars": g.stars,
        "hardest_technique": g.hardest_technique,
        "techniques": list(g.techniques),
        "solve_path": g.solve_path,
        "source": SOURCE,
        "volume": volume,
        "used_at": None,
        "synced_at": now,
    }


def build(plan: Plan, out: Path, on_made: Callable[[int, Counter[str]], None] | None = None) -> Built:
    """Build ``plan`` into ``out`` (a file, or a directory for ``pool-<UTC time>.ndjson.gz``), with its pack when
    the file has an export name and the target was reached. ``on_made(kept, kept_by)`` is called after each
    puzzle made. OSError when the export cannot be written (nothing is left of it then)."""
    started = time.monotonic()
    stats = Stats()
    kept_by: Counter[str] = Counter()
    seen_ids: set[str] = set()
    quotas = plan.quotas
    timed_out = False
    directory = out if out.is_dir() else out.parent
    gzipped = out.is_dir() or out.name.endswith(".gz")
    packs = out.is_dir() or is_export_name(out.name)
    tags = list(plan.tags)
    with ExportWriter(directory, gzipped=gzipped, pack=packs) as writer:
        # Read when each chunk is sent: the order narrows as quotas fill.
        current = [plan.order]
        for made in ordered_results(plan.seed, lambda: current[0], plan.jobs, plan.shard):
            stats.add(made)
            difficulty = made.outcome
            if made.grade is not None and (quotas is None or kept_by[difficulty] < quotas[difficulty]):
                # A share code is the canonical form's digest: one seen before is the same puzzle.
                code = canonical_id(made.form)
                if code in seen_ids:
                    stats.duplicates += 1
                else:
                    seen_ids.add(code)
                    writer.add(make_record(made, symmetry_class(made.puzzle), tags, plan.volume))
                    kept_by[difficulty] += 1
                    if quotas is not None and kept_by[difficulty] == quotas[difficulty]:
                        # Puzzles sent from now on stop as soon as they show this level: it is full.
                        current[0] = current[0].without(DIFFICULTIES.index(difficulty) + 1)
            if on_made is not None:
                on_made(writer.count, kept_by)
            if writer.count >= plan.target:
                break
            if plan.time_limit is not None and time.monotonic() - started > plan.time_limit:
                timed_out = True
                break
        path = output_path(out, datetime.now(UTC))
        if timed_out:
            path = path.with_name(path.name + PARTIAL)
        packed = writer.commit(path, pack=not timed_out)
    return Built(path, packed, writer.count, writer.inflated, kept_by, stats, timed_out, time.monotonic() - started)
