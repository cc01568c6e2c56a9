"""Merging exports: the records of several exports, in order, each puzzle once.

A record whose puzzle is already in (the same canonical form, worked out from its grid) is dropped, the first
one kept. A line the service would skip (not a valid record) is skipped too and counted, and so is a record
whose ids (``canonical``, ``canonical_id``, ``puzzle_id``) are not its grid's: they are what dedupes the pool
and shares a puzzle, so none is taken on trust. Lines are written as they are. Memory holds the ids seen and
the pack's small columns, not the records.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.pool import Pool
from pathlib import Path

from sudokupool.config import Settings
from sudokupool.exporting.writer import ExportWriter
from sudokupool.pool.export import ExportError, LineError, numbered_lines, parse_record
from sudokupool.storage.naming import export_timestamp, is_export_name
from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.ids import canonical_id, puzzle_id

#: Inputs are not bounded by SUDOKUPOOL_MAX_EXPORT_BYTES: merging is how exports past it are made.
_NO_BOUND = 1 << 62
#: Records sent to a worker at a time (their canonical forms take about a second), and read at a time.
_CHUNK = 64
_BATCH = 2048


def exports_of(item: Path) -> list[Path]:
    """The exports ``item`` stands for: itself, or a directory's exports oldest first; OSError when unreadable."""
    if not item.is_dir():
        if not item.is_file():
            raise FileNotFoundError(f"{item}: no such file")
        return [item]
    return sorted((p for p in item.iterdir() if is_export_name(p.name) and p.is_file()), key=_age)


class Unreadable(Exception):
    """An input that cannot be read to its end (the message says why)."""


_IDS = ("canonical", "canonical_id", "puzzle_id")


@dataclass(frozen=True, slots=True)
class _Line:
    text: bytes  # with its newline
    puzzle: str
    ids: tuple[str, str, str]  # what the record says: canonical, canonical_id, puzzle_id


@dataclass(frozen=True, slots=True)
class _Keyed:
    """A record with the share code of its grid's canonical form, or the first id it claims that is not its
    grid's (``problem``)."""

    text: bytes
    canonical_id: str
    problem: str | None


def _keyed(line: _Line | None) -> _Keyed | None:
    """``line`` keyed by its grid's canonical form (None for a bad line)."""
    if line is None:
        return None
    form = canonical_form(line.puzzle)
    actual = (form, canonical_id(form), puzzle_id(line.puzzle))
    problem = next((name for name, a, b in zip(_IDS, line.ids, actual, strict=True) if a != b), None)
    return _Keyed(line.text, actual[1], problem)


def _lines(path: Path) -> Iterator[_Line | None]:
    """The records of the export at ``path`` as they are, None for each line that is not a valid record."""
    try:
        with path.open("rb") as raw:
            gzipped = path.name.endswith(".gz")
            for _, line in numbered_lines(
                raw, gzipped=gzipped, max_line=Settings.max_record_bytes, max_bytes=_NO_BOUND
            ):
                try:
                    record = parse_record(line) if line is not None else None
                except LineError:
                    record = None
                if record is None or line is None:
                    yield None
                else:
                    ids = (record.canonical, record.canonical_id, record.puzzle_id)
                    yield _Line(line + b"\n", record.puzzle, ids)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    except ExportError as exc:
        raise Unreadable(str(exc)) from None


def merge_one(path: Path, seen: set[str], writer: ExportWriter, pool: Pool | None) -> Counter[str]:
    """Add the records of ``path`` whose grids' canonical forms are not ``seen`` (by share code) to ``writer``;
    how many were kept, dropped as duplicates, bad lines, and records whose ids are not their grid's. With a
    ``pool``, the forms are worked out there, a batch at a time (so memory holds one batch of records)."""
    counts: Counter[str] = Counter()
    lines = _lines(path)
    while batch := list(itertools.islice(lines, _BATCH)):
        keyed = pool.map(_keyed, batch, chunksize=_CHUNK) if pool is not None else map(_keyed, batch)
        for entry in keyed:
            if entry is None:
                counts["bad"] += 1
            elif entry.problem is not None:
                counts["wrong ids"] += 1
            elif entry.canonical_id in seen:
                counts["duplicate"] += 1
            else:
                seen.add(entry.canonical_id)
                writer.add_line(entry.text)
                counts["kept"] += 1
    return counts


def _age(path: Path) -> tuple[datetime, str]:
    return export_timestamp(path.name), path.name
