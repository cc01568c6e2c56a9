"""``sudokupool merge EXPORT_OR_DIR... --out DIR/``: join exports made anywhere into one export and its pack.

A pool larger than one machine's build is made in shards, each a ``build`` with its own ``--seed`` (on other
machines, other days), then merged. Inputs are read in the order given (a directory: every export in it,
oldest first) and their lines written as they are, in that order; a record whose puzzle is already in
(the same ``canonical_id``: the digest of its canonical form) is dropped, the first one kept. A line the
service would skip (not a valid record) is skipped too and counted. Memory holds the ids seen and the pack's
small columns, not the records.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sudokupool.commands.build import output_path, warn_export_limit
from sudokupool.commands.writer import ExportWriter, prepare_output
from sudokupool.config import Settings
from sudokupool.loading.export import ExportError, LineError, numbered_lines, parse_record
from sudokupool.naming import export_timestamp, is_export_name

#: Inputs are not bounded by SUDOKUPOOL_MAX_EXPORT_BYTES: merging is how exports past it are made.
_NO_BOUND = 1 << 62


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``merge`` subcommand."""
    parser = subparsers.add_parser(
        "merge",
        help="join exports (e.g. shards built with different seeds) into one export and its pack",
        description=(
            "Join exports into one export and its pack: records in input order, unchanged, each puzzle once "
            "(a record whose canonical_id came before is dropped, the first kept). A directory stands for "
            "every export in it, oldest first. A pool larger than one build: build shards with different "
            "--seed values (anywhere), then merge them."
        ),
    )
    parser.add_argument("inputs", metavar="EXPORT_OR_DIR", nargs="+", type=Path, help="an export, or a directory")
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


@dataclass(frozen=True, slots=True)
class _Line:
    text: bytes  # with its newline
    canonical_id: str


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
                yield None if record is None or line is None else _Line(line + b"\n", record.canonical_id)
    except OSError as exc:
        raise _Unreadable(exc.strerror or str(exc)) from None
    except ExportError as exc:
        raise _Unreadable(str(exc)) from None


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
    seen: set[str] = set()
    dropped = 0
    started = time.monotonic()
    try:
        with ExportWriter(directory, gzipped=out.is_dir() or out.name.endswith(".gz"), pack=True) as writer:
            for path in inputs:
                counts: Counter[str] = Counter()
                try:
                    for line in _lines(path):
                        if line is None:
                            counts["bad"] += 1
                        elif (code := line.canonical_id) in seen:
                            counts["duplicate"] += 1
                        else:
                            seen.add(code)
                            writer.add_line(line.text)
                            counts["kept"] += 1
                except _Unreadable as exc:
                    print(f"sudokupool merge: cannot read {path}: {exc}", file=sys.stderr)
                    return 1
                dropped += counts["duplicate"]
                bad = f", {counts['bad']} bad lines skipped" if counts["bad"] else ""
                print(f"{path}: {counts['kept']} kept, {counts['duplicate']} duplicates dropped{bad}", file=sys.stderr)
            if not writer.count:
                print("sudokupool merge: no record to write", file=sys.stderr)
                return 1
            path = output_path(out, datetime.now(UTC))
            packed = writer.commit(path, pack=is_export_name(path.name))
    except OSError as exc:
        print(f"sudokupool merge: cannot write the export in {directory}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(
        f"wrote {writer.count} puzzles from {len(inputs)} exports ({dropped} duplicates dropped) to {path} "
        f"in {time.monotonic() - started:.1f} s "
        f"({path.stat().st_size / 1e6:.2f} MB)" + (f" and its pack {packed.name}" if packed else ""),
        file=sys.stderr,
    )
    warn_export_limit(writer.inflated, "merge")
    return 0
