"""``sudokupool merge EXPORT_OR_DIR... --out DIR/``: join exports made anywhere into one export and its pack.

A pool larger than one machine's build is made in shards, each a ``build`` with its own ``--seed`` (on other
machines, other days), then merged. Inputs are read in the order given (a directory: every export in it,
oldest first) and their lines written as they are, in that order; a record whose puzzle is already in
(the same canonical form, worked out from its grid) is dropped, the first one kept. A line the service would
skip (not a valid record) is skipped too and counted, and so is a record whose ids (``canonical``,
``canonical_id``, ``puzzle_id``) are not its grid's: they are what dedupes the pool and shares a puzzle, so
none is taken on trust. Working out a canonical form costs about 16 ms a puzzle (``--jobs`` spreads it).
Memory holds the ids seen and the pack's small columns, not the records.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.pool import Pool
from pathlib import Path

from sudokupool.commands.build import output_path, warn_export_limit
from sudokupool.commands.workers import worker_pool
from sudokupool.commands.writer import ExportWriter, prepare_output
from sudokupool.config import Settings
from sudokupool.loading.export import ExportError, LineError, numbered_lines, parse_record
from sudokupool.naming import export_timestamp, is_export_name
from sudokupool.plural import counted
from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.ids import canonical_id, puzzle_id

#: Inputs are not bounded by SUDOKUPOOL_MAX_EXPORT_BYTES: merging is how exports past it are made.
_NO_BOUND = 1 << 62
#: Records sent to a worker at a time (their canonical forms take about a second), and read at a time.
_CHUNK = 64
_BATCH = 2048


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``merge`` subcommand."""
    parser = subparsers.add_parser(
        "merge",
        help="join exports (e.g. shards built with different seeds) into one export and its pack",
        description=(
            "Join exports into one export and its pack: records in input order, unchanged, each puzzle once "
            "(a record whose canonical form, worked out from its grid, came before is dropped, the first kept; "
            "a record whose ids are not its grid's is skipped). A directory stands for every export in it, "
            "oldest first. A pool larger than one build: build shards with different --seed values (anywhere), "
            "then merge them."
        ),
    )
    parser.add_argument("inputs", metavar="EXPORT_OR_DIR", nargs="+", type=Path, help="an export, or a directory")
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="work out canonical forms in N processes (default: all CPUs)",
    )
    parser.add_argument(
        "--out",
        required=True,
        help="a directory to write pool-<UTC time>.ndjson.gz and its pack in (a path ending in / is made if "
        "missing), or an output file as for build",
    )
    parser.set_defaults(func=run)


def exports_of(item: Path) -> list[Path]:
    """The exports ``item`` stands for: itself, or a directory's exports oldest first; OSError when unreadable."""
    if not item.is_dir():
        if not item.is_file():
            raise FileNotFoundError(f"{item}: no such file")
        return [item]
    return sorted((p for p in item.iterdir() if is_export_name(p.name) and p.is_file()), key=_age)


class _Unreadable(Exception):
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
        raise _Unreadable(exc.strerror or str(exc)) from None
    except ExportError as exc:
        raise _Unreadable(str(exc)) from None


def _merge_one(path: Path, seen: set[str], writer: ExportWriter, pool: Pool | None) -> Counter[str]:
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


def _tally(counts: Counter[str]) -> str:
    """One input's line of the report: ``4 kept, 1 duplicate dropped, 2 bad lines skipped``."""
    parts = [f"{counts['kept']} kept", f"{counted(counts['duplicate'], 'duplicate')} dropped"]
    if counts["bad"]:
        parts.append(f"{counted(counts['bad'], 'bad line')} skipped")
    if counts["wrong ids"]:
        parts.append(f"{counted(counts['wrong ids'], 'record')} with wrong ids skipped")
    return ", ".join(parts)


def _age(path: Path) -> tuple[datetime, str]:
    return export_timestamp(path.name), path.name


def run(args: argparse.Namespace) -> int:
    """Exit 0 when merged, 1 when an input cannot be read or the result written, 2 on bad arguments."""
    inputs: list[Path] = []
    for item in args.inputs:
        try:
            found = exports_of(item)
        except OSError as exc:
            print(f"sudokupool merge: {exc}", file=sys.stderr)
            return 2
        if not found:
            print(f"sudokupool merge: {item} holds no export (pool-YYYYMMDDTHHMMSSZ.ndjson[.gz])", file=sys.stderr)
            return 2
        inputs += found
    try:
        out = prepare_output(args.out)
    except ValueError as exc:
        print(f"sudokupool merge: {exc}", file=sys.stderr)
        return 2
    directory = out if out.is_dir() else out.parent
    if args.jobs < 1:
        print("sudokupool merge: --jobs must be at least 1", file=sys.stderr)
        return 2
    seen: set[str] = set()
    dropped = 0
    started = time.monotonic()
    # More processes than CPUs would only cost their start-up and memory.
    jobs = min(args.jobs, os.cpu_count() or 1)
    try:
        with (
            worker_pool(jobs) if jobs > 1 else nullcontext() as pool,
            ExportWriter(directory, gzipped=out.is_dir() or out.name.endswith(".gz"), pack=True) as writer,
        ):
            for path in inputs:
                try:
                    counts = _merge_one(path, seen, writer, pool)
                except _Unreadable as exc:
                    print(f"sudokupool merge: cannot read {path}: {exc}", file=sys.stderr)
                    return 1
                dropped += counts["duplicate"]
                print(f"{path}: {_tally(counts)}", file=sys.stderr)
            if not writer.count:
                print("sudokupool merge: no record to write", file=sys.stderr)
                return 1
            path = output_path(out, datetime.now(UTC))
            packed = writer.commit(path, pack=is_export_name(path.name))
    except OSError as exc:
        print(f"sudokupool merge: cannot write the export in {directory}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(
        f"wrote {counted(writer.count, 'puzzle')} from {counted(len(inputs), 'export')} "
        f"({counted(dropped, 'duplicate')} dropped) to {path} "
        f"in {time.monotonic() - started:.1f} s "
        f"({path.stat().st_size / 1e6:.2f} MB)" + (f" and its pack {packed.name}" if packed else ""),
        file=sys.stderr,
    )
    warn_export_limit(writer.inflated, "merge")
    return 0
