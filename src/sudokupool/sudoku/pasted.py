"""Puzzles as people paste them: one a line (a line's first field, so ``PUZZLE 7.2`` lists work), or a grid
spread over lines and written with spaces, rules and box-drawing characters between its cells. ``grade`` and
``canonical`` read their input with :func:`read_puzzles`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

_CELLS: Final = frozenset("123456789" + "0._")
# What people put between cells when they write a grid out: spaces, rules drawn with ASCII, commas, and
# the box-drawing block (U+2500-U+257F) that pretty printers use.
_SEPARATORS: Final = frozenset(" \t\r\n\f\v|-+=:;,") | frozenset(map(chr, range(0x2500, 0x2580)))
_EMPTY_AS_DOT: Final = str.maketrans("_", ".")


def _cells(text: str) -> str | None:
    """The cells written in ``text`` (``_`` as ``.``), or None when it holds anything but cells and separators."""
    cells = []
    for ch in text:
        if ch in _CELLS:
            cells.append(ch)
        elif ch not in _SEPARATORS:
            return None
    return "".join(cells).translate(_EMPTY_AS_DOT)


def read_puzzles(lines: Iterable[str]) -> list[str]:
    """The puzzles written in ``lines``, each as its 81 cells (or, when malformed, as written, so the grader
    says what is wrong with it).

    A line whose first field is 81 cells is a puzzle (the rest of the line, such as a rating, is ignored);
    otherwise a line of cells and separators only is part of a grid spread over lines (a rule such as
    ``------+-------`` adds nothing), complete at 81 cells. Any other line is graded by its first field. A
    grid cut short by such a line, or by the end, is graded as the cells it has. ``#`` starts a comment.
    """
    out: list[str] = []
    pending = ""
    for number, raw in enumerate(lines):
        # A byte-order mark, which some editors put at the start of a UTF-8 file, is not part of the puzzle.
        line = (raw.removeprefix("\ufeff") if number == 0 else raw).split("#", 1)[0]
        fields = line.split()
        if not fields:
            continue
        first = _cells(fields[0])
        if first is not None and len(first) == 81:
            if pending:
                out.append(pending)
                pending = ""
            out.append(first)
            continue
        cells = _cells(line)
        if cells is not None and len(cells) <= 81:
            if len(pending) + len(cells) > 81:
                out.append(pending)
                pending = ""
            pending += cells
            if len(pending) == 81:
                out.append(pending)
                pending = ""
            continue
        if pending:
            out.append(pending)
            pending = ""
        out.append(fields[0])
    if pending:
        out.append(pending)
    return out
