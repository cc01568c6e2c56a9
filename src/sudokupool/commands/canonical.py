"""``sudokupool canonical PUZZLE``: print a puzzle's canonical form, share codes and symmetry."""

from __future__ import annotations

import argparse
import sys

from sudokupool.commands import CommandError
from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.grid import GridError, has_conflict, parse_grid
from sudokupool.sudoku.ids import canonical_id, puzzle_id
from sudokupool.sudoku.pasted import read_puzzles
from sudokupool.sudoku.symmetry import symmetry_class


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``canonical`` subcommand."""
    parser = subparsers.add_parser(
        "canonical",
        help="print a puzzle's canonical form, canonical_id, puzzle_id and symmetry",
        description=(
            "Print the minlex canonical form of PUZZLE, its share code (canonical_id), the id of the exact "
            "grid (puzzle_id) and the symmetry class of its clue pattern. PUZZLE is read as `grade` reads one: "
            "81 cells on a line ('0', '.' or '_' for empty), or a grid pasted over several lines with spaces, "
            "'|', '-', '+' or box-drawing characters between cells; '-' reads it from standard input."
        ),
    )
    parser.add_argument(
        "puzzle",
        metavar="PUZZLE",
        help="81 cells, row-major: 1-9 for givens, '.', '0' or '_' for empty (a pasted grid too), or '-'",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the four values, one ``name: value`` line each; exit 2 on a malformed grid."""
    text = sys.stdin.read() if args.puzzle == "-" else args.puzzle
    found = read_puzzles(text.splitlines())
    if len(found) > 1:
        raise CommandError(f"give one puzzle, not {len(found)}")
    try:
        puzzle = parse_grid(found[0] if found else text)
    except GridError as exc:
        raise CommandError(str(exc)) from None
    if has_conflict(puzzle):
        raise CommandError("a digit repeats in a row, column or box")
    form = canonical_form(puzzle)
    print(f"puzzle:       {puzzle}")
    print(f"canonical:    {form}")
    print(f"canonical_id: {canonical_id(form)}")
    print(f"puzzle_id:    {puzzle_id(puzzle)}")
    print(f"symmetry:     {symmetry_class(puzzle)}")
    return 0
