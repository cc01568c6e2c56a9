"""``sudokupool grade``: grade puzzles with the human-style grader, as text or one JSON object a line.

Puzzles come from the arguments, from ``--file F`` or from standard input (``-``) in the forms people paste
(:func:`read_puzzles`): one a line, where the first whitespace-separated field of a line is the puzzle, so
rated lists such as ``PUZZLE 7.2`` work as they are; or a grid spread over lines and written with spaces,
``|``, ``-``, ``+`` or box-drawing characters between cells; ``0``, ``.`` or ``_`` for an empty cell; ``#``
starts a comment; blank lines and a leading byte-order mark are skipped. Answers keep the input order. Exit 0
when every puzzle was solved (or there were none: that is said on stderr), 1 when any was not (invalid, no
solution, several solutions, not graded within ``--time-per-puzzle``), 2 when the input cannot be read.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import orjson

from sudokupool.commands import CommandError
from sudokupool.commands.options import add_time_limit_option, check_time_limit
from sudokupool.commands.output import Progress
from sudokupool.exporting.workers import worker_pool
from sudokupool.sudoku.grader import Grade, grade
from sudokupool.sudoku.pasted import read_puzzles

#: Inputs at least this long report progress on stderr.
PROGRESS_FROM = 100
_CHUNK = 8


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``grade`` subcommand."""
    parser = subparsers.add_parser(
        "grade",
        help="grade puzzles: difficulty, score, tier and the step-by-step path",
        description=(
            "Grade each PUZZLE (81 cells, row-major: 1-9 for givens, '0', '.' or '_' for empty) with the "
            "human-style grader: its status, solution, difficulty, score, tier, hardest technique and numbered "
            "steps. Read puzzles from --file F or from standard input ('-'): one a line (the first field of a "
            "line, so 'PUZZLE RATING' lists work), or a grid over several lines with spaces, '|', '-', '+' "
            "or box-drawing characters between cells; '#' starts a comment. Exit 1 when any puzzle is "
            "invalid, has no or several solutions, or is not graded within the time limit."
        ),
    )
    parser.add_argument("puzzles", metavar="PUZZLE", nargs="*", help="a puzzle, or '-' for standard input")
    parser.add_argument("--file", metavar="F", help="read puzzles from F, one a line ('-': standard input)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per puzzle (puzzle, status, reason, solution, difficulty, ..., solve_path)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="grade in N processes (default 1; never more than one per puzzle or per CPU)",
    )
    add_time_limit_option(parser, "grading")
    parser.set_defaults(func=run)


def as_json(puzzle: str, g: Grade) -> dict[str, object]:
    """The ``--json`` object for one puzzle, in a fixed key order."""
    return g.to_dict(puzzle)


def as_text(puzzle: str, g: Grade) -> str:
    """A readable report: the grade, then the numbered steps."""
    lines = [f"puzzle:     {puzzle}", f"status:     {g.status}"]
    if not g.solved:
        lines.append(f"reason:     {g.reason}")
        return "\n".join(lines)
    lines += [
        f"solution:   {g.solution}",
        f"difficulty: {g.difficulty} (level {g.difficulty_level})",
        f"score:      {g.score}",
        f"tier:       {g.tier} ({g.stars} star{'s' if g.stars != 1 else ''})",
        f"hardest:    {g.hardest_technique}",
        f"steps:      {len(g.solve_path)}",
    ]
    width = len(str(len(g.solve_path)))
    for number, step in enumerate(g.solve_path, start=1):
        lines.append(f"  {number:>{width}}. {step['technique']} ({step['score']}): {step['explanation']}")
    return "\n".join(lines)


def _grades(puzzles: list[str], jobs: int, time_limit: float | None) -> Iterator[Grade]:
    # More processes than puzzles or CPUs would only cost their start-up and memory.
    jobs = min(jobs, len(puzzles), os.cpu_count() or 1)
    grader = functools.partial(grade, time_limit=time_limit)
    if jobs <= 1:
        yield from map(grader, puzzles)
        return
    with worker_pool(jobs) as pool:
        yield from pool.imap(grader, puzzles, chunksize=_CHUNK)


def _read(source: str) -> list[str]:
    if source == "-":
        return read_puzzles(sys.stdin)
    with Path(source).open(encoding="utf-8") as handle:
        return read_puzzles(handle)


def grade_all(
    puzzles: list[str], out: TextIO, err: TextIO, *, json: bool, jobs: int, time_limit: float | None = None
) -> int:
    """Grade ``puzzles`` (each within ``time_limit`` seconds) and write the answers to ``out`` in order; the
    exit code of ``run``."""
    progress = Progress(len(puzzles), err) if len(puzzles) >= PROGRESS_FROM else None
    unsolved = 0
    for done, (puzzle, g) in enumerate(zip(puzzles, _grades(puzzles, jobs, time_limit), strict=True), start=1):
        if not g.solved:
            unsolved += 1
        if json:
            out.write(orjson.dumps(as_json(puzzle, g)).decode() + "\n")
        else:
            out.write(("\n" if done > 1 else "") + as_text(puzzle, g) + "\n")
        if progress is not None:
            progress.update(done, f"{unsolved} not solved" if unsolved else "")
    if progress is not None:
        progress.final(len(puzzles), f"{unsolved} not solved" if unsolved else "")
        progress.close()
    out.flush()
    return 1 if unsolved else 0


def run(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise CommandError("--jobs must be at least 1")
    time_limit = check_time_limit(args.time_per_puzzle)
    sources = [args.file] if args.file else []
    inline: list[str] = []
    for item in args.puzzles:
        if item == "-":
            sources.append("-")
        else:
            # One argument may hold a pasted grid, spaces and line breaks included.
            inline += read_puzzles(item.splitlines()) or [item]
    if not sources and not inline:
        raise CommandError("give puzzles, --file F, or '-' for standard input")
    puzzles = list(inline)
    for source in sources:
        try:
            puzzles += _read(source)
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {source}: {exc}") from None
    if not puzzles:
        print("sudokupool grade: no puzzles read", file=sys.stderr)
        return 0
    return grade_all(puzzles, sys.stdout, sys.stderr, json=args.json, jobs=args.jobs, time_limit=time_limit)
