"""The engine's answers over HTTP as JSON bytes: a grid's live grade, a hint, a pool record in another layout.

The live grade and the hint are jobs of the work pool (top-level functions of picklable arguments, whose
result is a picklable ``(kind, body)``): ``kind`` is ``ok``, or says why there is no answer (``invalid``: a
malformed or clashing grid or board; ``unsolvable``: no or several solutions; ``marks``: pencil marks that
erase a needed digit), and ``body`` is the JSON to send, an ``{"error": ...}`` object unless ``ok``. The
same input always gives the same bytes, so a cache or a CDN may keep them.

The jobs import the grader and the techniques when they first run, in the work process: a serving worker
that imports this module to submit them never holds the finders (2 MB of its private memory).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.check import check_grid
from sudokupool.sudoku.grid import cell_name
from sudokupool.sudoku.ids import canonical_id, puzzle_id
from sudokupool.sudoku.relayout import PreparedPath, Relayout, prepare_path
from sudokupool.sudoku.symmetry import symmetry_class

Kind = Literal["ok", "invalid", "unsolvable", "marks"]
Answer = tuple[Kind, bytes]
#: How a pool record's body starts (``sudokupool.pool.export.Record``'s first fields): its puzzle id and grid.
_HEAD: Final = re.compile(rb'\{"canonical_id":"[0-9A-Z]{13}","puzzle_id":"([0-9A-Z]{13})","puzzle":"([1-9.]{81})",')
#: A record's symmetry, the first of its fields to hold these names (every field before it is fixed).
_SYMMETRY: Final = re.compile(rb',"symmetric":(true|false),"symmetry":"([a-z0-9-]+)",')
#: A record's solve path (its steps as JSON between brackets, or null), and how the steps end, the source following:
#: neither can be inside a string, where every quote is escaped.
_PATH_KEY: Final = b',"solve_path":'
_PATH_END: Final = b'}],"source":'
#: The kind of answer for each verdict of :func:`~sudokupool.sudoku.check.check_grid` other than unique.
_VERDICT_KIND: Final[dict[str, Kind]] = {
    "invalid": "invalid",
    "no-solution": "unsolvable",
    "multiple-solutions": "unsolvable",
}


def grid_error(verdict: str, reason: str, cells: tuple[int, ...] = ()) -> Answer:
    """Why a grid has no answer: ``{"error", "status", "cells"}`` (the cells of a clash, else none)."""
    body = {"error": reason, "status": verdict, "cells": [cell_name(c) for c in cells]}
    return _VERDICT_KIND[verdict], orjson.dumps(body)


def grade_answer(grid: str) -> Answer:
    """The live grade of ``grid`` (normalised): ``in_pool`` false, its ``canonical_id`` and the object
    ``sudokupool grade --json`` prints; or why it has none."""
    from sudokupool.sudoku.grader import grade

    graded = grade(grid)
    if not graded.solved:
        assert graded.reason is not None
        cells = check_grid(grid).conflicts if graded.status == "invalid" else ()
        return grid_error(graded.status, graded.reason, cells)
    body = {"in_pool": False, "canonical_id": canonical_id(canonical_form(grid)), **graded.to_dict(grid)}
    return "ok", orjson.dumps(body)


def hint_answer(puzzle: str, solution: str | None, board: str, candidates: str | None) -> Answer:
    """The hint (:func:`~sudokupool.sudoku.hint.hint`) for ``board`` in ``puzzle``; with no ``solution``
    given, the puzzle is checked and solved first."""
    from sudokupool.sudoku.hint import HintError, NeededDigitErased, hint

    if solution is None:
        checked = check_grid(puzzle)
        if checked.solution is None:
            assert checked.reason is not None
            return grid_error(checked.verdict, checked.reason, checked.conflicts)
        solution = checked.solution
    try:
        found = hint(puzzle, solution, board, candidates)
    except NeededDigitErased as exc:
        return "marks", orjson.dumps({"error": str(exc), "cells": [cell_name(exc.cell)]})
    except HintError as exc:
        return "invalid", orjson.dumps({"error": str(exc)})
    return "ok", orjson.dumps(found.to_dict())


def moved_record(record: dict[str, Any], solution: str, grid: str, move: Relayout) -> bytes:
    """A pool ``record`` (with its ``solution``) moved by ``move`` to ``grid``, the layout asked: ``in_pool``
    true, the grid's own ``puzzle_id`` and symmetry, the solution and solve path as they read there."""
    symmetry = symmetry_class(grid)
    out: dict[str, Any] = {"in_pool": True, **record}
    out.update(puzzle=grid, puzzle_id=puzzle_id(grid), symmetric=symmetry != "none", symmetry=symmetry)
    if record.get("solve_path") is not None:
        out["solve_path"] = move.path(record["solve_path"])
    out["solution"] = move.grid(solution)
    return orjson.dumps(out)


@dataclass(frozen=True, slots=True)
class PreparedRecord:
    """A pool record's body read once to be moved to other layouts (:func:`prepare_record`): the text around what a
    layout changes (its puzzle id, grid, symmetry and solve path's steps) in six pieces, and those steps, prepared
    (:func:`~sudokupool.sudoku.relayout.prepare_path`) or as they are."""

    pieces: tuple[bytes, bytes, bytes, bytes, bytes, bytes]
    steps: PreparedPath | str

    @property
    def size(self) -> int:
        """About the bytes this holds alone (see :attr:`PreparedPath.size`)."""
        steps = self.steps
        return 300 + sum(map(len, self.pieces)) + (len(steps) + 49 if isinstance(steps, str) else steps.size)


def prepare_record(body: bytes, *, prepare: bool = True) -> PreparedRecord | None:
    """The record ``body`` (as the pool serves it) read to be moved, its solve path prepared unless ``prepare`` is
    false; None when the body is not written as the pack writes one (it must be read as JSON), or when its path was
    to be prepared and cannot be (see :func:`~sudokupool.sudoku.relayout.prepare_path`)."""
    head = _HEAD.match(body)
    symmetry = _SYMMETRY.search(body)
    path_at = body.find(_PATH_KEY)
    if head is None or symmetry is None or body[-1:] != b"}" or not head.end() < symmetry.start() < path_at:
        return None
    # The path's steps as JSON lie between ``start`` and ``end`` (empty for none, or a null path).
    start = end = path_at + len(_PATH_KEY)
    if body.startswith(b"[{", start):
        start += 1
        end = body.find(_PATH_END, start)
        if end < 0:
            return None
        end += 1
    elif not body.startswith((b"null,", b"[],"), start):
        return None
    try:
        text = body[start:end].decode()
    except ValueError:  # UnicodeDecodeError is one
        return None
    steps: PreparedPath | str | None = prepare_path(text) if prepare and text else text
    if steps is None:
        return None
    pieces = (
        b'{"in_pool":true,' + body[1 : head.start(1)],
        body[head.end(1) : head.start(2)],
        body[head.end(2) : symmetry.start(1)],
        body[symmetry.end(1) : symmetry.start(2)],
        body[symmetry.end(2) : start],
        body[end:-1] + b',"solution":"',
    )
    return PreparedRecord(pieces, steps)


def moved_prepared(record: PreparedRecord, solution: str, grid: str, move: Relayout) -> bytes | None:
    """:func:`moved_record` made from ``record`` (:func:`prepare_record`) and its ``solution``; None when its steps
    are not written as the pack writes them (:meth:`Relayout.path_json`), and the record must be read."""
    steps = record.steps
    try:
        moved = move.path_json(steps) if isinstance(steps, str) else move.prepared_path(steps)
    except ValueError:
        return None
    name = symmetry_class(grid)
    before_id, before_grid, before_symmetric, before_symmetry, before_path, before_solution = record.pieces
    parts = [
        before_id,
        puzzle_id(grid).encode(),
        before_grid,
        grid.encode(),
        before_symmetric,
        b"true" if name != "none" else b"false",
        before_symmetry,
        name.encode(),
        before_path,
        moved.encode(),
        before_solution,
        move.grid(solution).encode(),
        b'"}',
    ]
    return b"".join(parts)


def moved_body(body: bytes, solution: str, grid: str, move: Relayout) -> bytes | None:
    """:func:`moved_record` made from the record's ``body`` as the pool serves it (with its ``solution``) without
    reading it as JSON but for the steps of its solve path that are not singles (:meth:`Relayout.path_json`); None
    when the body is not written as the pack writes one, and it must be read."""
    record = prepare_record(body, prepare=False)
    return None if record is None else moved_prepared(record, solution, grid, move)


def held_record(body: bytes, solution: str, grid: str) -> bytes | None:
    """:func:`moved_record` for ``grid`` in the layout the pool holds it in, made from the record's ``body`` as
    the pool serves it (with its ``solution``) without reading it as JSON; None when the body does not already
    say what :func:`moved_record` would (its grid, puzzle id or symmetry), and it must be read."""
    head = _HEAD.match(body)
    symmetry = _SYMMETRY.search(body)
    if head is None or symmetry is None or body[-1:] != b"}":
        return None
    if head[2] != grid.encode() or head[1] != puzzle_id(grid).encode():
        return None
    name = symmetry_class(grid)
    if symmetry[2] != name.encode() or (symmetry[1] == b"true") != (name != "none"):
        return None
    return b'{"in_pool":true,' + body[1:-1] + b',"solution":"' + solution.encode() + b'"}'
