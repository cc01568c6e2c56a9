"""``sudokupool canonical PUZZLE``: print a puzzle's canonical form, share codes and symmetry."""

from __future__ import annotations

import argparse
import sys

from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.grid import GridError, has_conflict, parse_grid
from sudokupool.sudoku.ids import canonical_id, puzzle_id
from sudokupool.sudoku.symmetry import symmetry_class


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``canonical`` subcommand."""
    parser = subparsers.add_parser(
        "canonical",
        help="print a puzzle's canonical form, canonical_id, puzzle_id and symmetry",
        description=(
            "Print the minlex canonical form of PUZZLE, its share code (canonical_id), the id of the exact "
            "grid (puzzle_id) and the symmetry class of its clue pattern."
        ),
    )
    parser.add_argument(
        "puzzle", metavar="PUZZLE", help="81 characters, row-major: 1-9 for givens, '.' or '0' for empty"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the four values, one ``name: value`` line each; exit 2 on a malformed grid."""
    try:
        puzzle = parse_grid(args.puzzle)
    except GridError as exc:
        print(f"sudokupool canonical: {exc}", file=sys.stderr)
        return 2
    if has_conflict(puzzle):
        print("sudokupool canonical: a digit repeats in a row, column or box", file=sys.stderr)
        return 2
    form = canonical_form(puzzle)
    print(f"puzzle:       {puzzle}")
    print(f"canonical:    {form}")
    print(f"canonical_id: {canonical_id(form)}")
    print(f"puzzle_id:    {puzzle_id(puzzle)}")
    print(f"symmetry:     {symmetry_class(puzzle)}")
    return 0
