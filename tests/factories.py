"""Small genuine pools for tests, made with the engine and the export format's own code."""

from __future__ import annotations

import gzip
import time
from functools import cache
from pathlib import Path
from typing import Any

from sudokupool.pool.export import parse_record, record_line
from sudokupool.pool.pool import Pool, PoolBuilder
from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.generator import generate
from sudokupool.sudoku.grader import grade
from sudokupool.sudoku.ids import canonical_id, puzzle_id
from sudokupool.sudoku.symmetry import symmetry_class

#: The name of the export the ``export_dir`` fixture writes and ``build_pool`` reports as its source.
EXPORT_NAME = "pool-20261122T100000Z.ndjson.gz"


@cache
def make_record(seed: int, symmetry: str | None = None) -> dict[str, Any] | None:
    """The export record of the puzzle the generator makes for ``seed`` (with a clue pattern of ``symmetry``,
    default the generator's); None if the grader cannot solve it."""
    made = generate(seed) if symmetry is None else generate(seed, symmetry)
    graded = grade(made.puzzle)
    if not graded.solved or graded.difficulty is None or graded.difficulty_level is None:
        return None
    form = canonical_form(made.puzzle)
    symmetry = symmetry_class(made.puzzle)
    now = int(time.time())
    return {
        "canonical_id": canonical_id(form),
        "puzzle_id": puzzle_id(made.puzzle),
        "puzzle": made.puzzle,
        "canonical": form,
        "difficulty": graded.difficulty,
        "difficulty_level": graded.difficulty_level,
        "clue_count": 81 - made.puzzle.count("."),
        "symmetric": symmetry != "none",
        "symmetry": symmetry,
        "seed": seed,
        "created_at": now,
        "tags": ["test"],
        "score": graded.score,
        "tier": graded.tier,
        "stars": graded.stars,
        "hardest_technique": graded.hardest_technique,
        "techniques": graded.techniques,
        "solve_path": graded.solve_path,
        "source": "tests",
        "volume": None,
        "used_at": None,
        "synced_at": now,
        "solution": made.solution,
    }


def make_records(count: int, *, start: int = 1, symmetry: str | None = None) -> list[dict[str, Any]]:
    """``count`` graded records from consecutive seeds (skipping puzzles the grader cannot solve)."""
    records: list[dict[str, Any]] = []
    seed = start
    while len(records) < count:
        record = make_record(seed, symmetry)
        if record is not None:
            records.append(dict(record))
        seed += 1
    return records


def read_export(path: Path) -> list[bytes]:
    """The lines of the export at ``path`` (gzip or plain), without their newlines."""
    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    return data.splitlines()


def write_export(path: Path, records: list[dict[str, Any]], *, extra_lines: tuple[bytes, ...] = ()) -> Path:
    """Write ``records`` (and any raw ``extra_lines``) as an export; gzip when the name ends in .gz."""
    data = b"".join(record_line(r) for r in records) + b"".join(line + b"\n" for line in extra_lines)
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def build_pool(records: list[dict[str, Any]], *, loaded_at: int = 1_795_000_000) -> Pool:
    """A pool of ``records`` as the loader builds one from an export named ``EXPORT_NAME``."""
    builder = PoolBuilder(loaded_at=loaded_at)
    for record in records:
        builder.add(parse_record(record_line(record)))
    return builder.build(source="tests", export_key=EXPORT_NAME, export_size=0)
