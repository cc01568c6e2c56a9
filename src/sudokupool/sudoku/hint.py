"""A hint for a player's own board: fix what is wrong first, else the easiest step from where they are.

The board is the puzzle's givens plus the player's entries (81 cells). Entries that differ from the
solution and cells whose digit clashes with another in a house come first: the hint is to fix them. A
full, right board is finished. Otherwise the hint is the step the grader would take next from the
board's candidates (its techniques in the grader's order, easiest first, and Brute Force when none
applies), written as a solve-path step. The player's pencil marks, when sent, narrow those candidates,
as long as they keep every digit the solution needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from sudokupool.sudoku.candidates import BIT, Candidates
from sudokupool.sudoku.check import conflicting_cells
from sudokupool.sudoku.grid import EMPTY, GridError, cell_name, parse_grid
from sudokupool.sudoku.techniques import ADVANCED, SINGLES, Step, memo
from sudokupool.sudoku.techniques.last_resort import brute_force

#: The longest pencil-mark text read: 81 fields of up to nine digits and the commas between them.
MAX_CANDIDATES_TEXT: Final = 81 * 10 - 1

Kind = Literal["fix", "finished", "step"]


class HintError(ValueError):
    """A board or pencil marks that cannot be hinted; the message says what is wrong, naming the cell."""


class NeededDigitErased(HintError):
    """Well-formed pencil marks that leave out a digit the solution needs in ``cell``."""

    def __init__(self, cell: int) -> None:
        super().__init__(f"candidates: the pencil marks of {cell_name(cell)} leave out a digit it needs")
        self.cell = cell


@dataclass(frozen=True, slots=True)
class Hint:
    """``fix`` with the ``wrong`` and ``conflicting`` cells, ``finished``, or the next ``step``."""

    kind: Kind
    wrong: tuple[int, ...] = ()
    conflicting: tuple[int, ...] = ()
    step: Step | None = None

    def to_dict(self) -> dict[str, object]:
        """The hint as one JSON object (docs/api.md, "Grids and hints"); ``step`` only when there is one."""
        if self.kind == "fix":
            return {
                "status": "fix",
                "wrong": [cell_name(c) for c in self.wrong],
                "conflicting": [cell_name(c) for c in self.conflicting],
            }
        if self.kind == "finished":
            return {"status": "finished", "wrong": [], "conflicting": []}
        assert self.step is not None
        return {"status": "step", "wrong": [], "conflicting": [], "step": self.step.to_dict()}


def parse_candidates(text: str) -> list[int]:
    """Pencil marks as 81 comma-separated fields, one a cell in row-major order, each the digits marked
    there (``,,27,...``); an empty field marks nothing. Returns a candidate mask per cell (0: none marked)."""
    if len(text) > MAX_CANDIDATES_TEXT:
        raise HintError(f"candidates: at most {MAX_CANDIDATES_TEXT} characters")
    fields = text.split(",")
    if len(fields) != 81:
        raise HintError(f"candidates: 81 comma-separated fields, one a cell, got {len(fields)}")
    masks = []
    for cell, field in enumerate(fields):
        mask = 0
        for ch in field:
            if not "1" <= ch <= "9":
                raise HintError(f"candidates: {cell_name(cell)} holds {ch!r}; a field holds digits 1-9 only")
            mask |= BIT[ord(ch) - 48]
        masks.append(mask)
    return masks


def next_step(cg: Candidates, solution: str) -> Step:
    """The step the grader takes next from ``cg`` (not finished): the easiest technique that applies."""
    memo.forget()  # what the finders remember belongs to another grid
    for finder in SINGLES + ADVANCED:
        step = finder(cg)
        if step is not None:
            return step
    return brute_force(cg, solution)


def hint(puzzle: str, solution: str, board_text: str, candidates_text: str | None = None) -> Hint:
    """The hint for ``board_text`` in ``puzzle`` (with its ``solution``) and the player's pencil marks.

    Raises :class:`HintError` when the board is malformed or does not hold the puzzle's givens, when the
    pencil marks are malformed, or when they leave out a digit the solution needs (the message names the
    first such cell).
    """
    try:
        board = parse_grid(board_text)
    except GridError as exc:
        raise HintError(f"board: {exc}") from None
    for cell, given in enumerate(puzzle):
        if given != EMPTY and board[cell] != given:
            raise HintError(f"board: {cell_name(cell)} must hold the puzzle's given {given}")
    marks = None if candidates_text is None else parse_candidates(candidates_text)
    entries = [c for c in range(81) if puzzle[c] == EMPTY and board[c] != EMPTY]
    wrong = tuple(c for c in entries if board[c] != solution[c])
    conflicting = tuple(c for c in conflicting_cells(board) if puzzle[c] == EMPTY)
    if wrong or conflicting:
        return Hint("fix", wrong, conflicting)
    if EMPTY not in board:
        return Hint("finished")
    cg = Candidates.from_puzzle(board)
    if marks is not None:
        for cell, mask in enumerate(marks):
            if not mask or board[cell] != EMPTY:
                continue
            if not mask & BIT[ord(solution[cell]) - 48]:
                raise NeededDigitErased(cell)
            cg.cands[cell] &= mask
    return Hint("step", step=next_step(cg, solution))
