"""``sudokupool check FILE``: validate an export exactly as the service loads it, and more.

Beyond the loader's checks it replays every solve path and confirms each puzzle has one solution;
``--canonical`` also recomputes canonical forms, share codes and symmetry. Exit 1 on any bad line.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from sudokupool.export import LineError
from sudokupool.loader import LoadError, LoadReport, load_export
from sudokupool.storage.base import StorageError
from sudokupool.storage.local import LocalStore


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("check", help="validate an export file (exit 1 on any bad line)")
    parser.add_argument("file", type=Path, help="an export: .ndjson or .ndjson.gz")
    parser.add_argument(
        "--canonical", action="store_true", help="also recompute canonical forms, ids and symmetry (slower)"
    )
    parser.set_defaults(func=run)


def verifier(*, canonical: bool) -> Any:
    """The extra per-record checks of ``check``: one solution, a sound solve path, optionally the ids."""
    from sudokupool.sudoku.canonical import canonical_form
    from sudokupool.sudoku.ids import canonical_id, puzzle_id
    from sudokupool.sudoku.replay import replay
    from sudokupool.sudoku.solver import count_solutions
    from sudokupool.sudoku.symmetry import symmetry_class

    def verify(record: dict[str, Any]) -> None:
        puzzle, solution = record["puzzle"], record["solution"]
        if count_solutions(puzzle, 2) != 1:
            raise LineError("not-unique", "the puzzle has more than one solution")
        if record["solve_path"] is not None:
            errors = replay(puzzle, solution, record["solve_path"])
            if errors:
                raise LineError("bad-solve-path", "; ".join(errors[:3]))
        if canonical:
            form = canonical_form(puzzle)
            expected = {
                "canonical": form,
                "canonical_id": canonical_id(form),
                "puzzle_id": puzzle_id(puzzle),
                "symmetry": symmetry_class(puzzle),
            }
            for name, value in expected.items():
                if record[name] != value:
                    raise LineError(f"wrong-{name.replace('_', '-')}", f"{name} should be {value}")

    return verify


async def check_file(path: Path, *, canonical: bool = False) -> LoadReport:
    """Validate ``path``; raise :class:`LoadError` when it cannot be read at all."""
    store = LocalStore(path)
    try:
        listing = await store.list_exports(limit=1)
    except StorageError as exc:
        raise LoadError(str(exc)) from None
    if listing.latest is None:
        raise LoadError(f"{path}: not an export")
    _, report = await load_export(store, listing.latest, log_lines=False, verify=verifier(canonical=canonical))
    return report


def run(args: argparse.Namespace) -> int:
    try:
        report = asyncio.run(check_file(args.file, canonical=args.canonical))
    except LoadError as exc:
        print(f"sudokupool check: {exc}", file=sys.stderr)
        return 1
    for number, problem in report.problems:
        print(f"line {number}: {problem}")
    if report.skipped_total > len(report.problems):
        print(f"... and {report.skipped_total - len(report.problems)} more bad lines")
    print(report.summary())
    return 1 if report.skipped else 0
