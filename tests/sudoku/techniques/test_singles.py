from __future__ import annotations

from pencil import moves

from sudokupool.sudoku.candidates import Candidates
from sudokupool.sudoku.techniques.singles import full_house, hidden_single, naked_single


def grid(rows: dict[int, str]) -> str:
    """An 81-cell grid that is empty except for the given rows (1-based) written as 9 characters."""
    return "".join(rows.get(r, "." * 9) for r in range(1, 10))


def test_full_house_fills_the_last_cell_of_a_row() -> None:
    cg = Candidates.from_puzzle(grid({1: "12345678."}))
    step = full_house(cg)
    assert step is not None
    assert step.technique == "Full House"
    assert moves(step.placements) == {("r1c9", 9)}
    assert step.eliminations == []
    assert step.to_dict()["houses"] == ["row 1"]
    assert step.explanation == "Row 1 has only r1c9 left empty and misses only 9, so r1c9 = 9."


def test_full_house_needs_a_single_empty_cell() -> None:
    assert full_house(Candidates.from_puzzle(grid({1: "1234567.."}))) is None


def test_naked_single_when_row_column_and_box_hold_eight_digits() -> None:
    # Row 5 holds 1-4, column 5 holds 5 (r1), 6 (r2), 7 (r3) and 8 (r9): r5c5 can only be 9.
    puzzle = grid({1: "....5....", 2: "....6....", 3: "....7....", 5: "1234.....", 9: "....8...."})
    step = naked_single(Candidates.from_puzzle(puzzle))
    assert step is not None
    assert step.technique == "Naked Single"
    assert moves(step.placements) == {("r5c5", 9)}
    assert step.explanation.endswith("so r5c5 = 9.")


def test_hidden_single_in_a_box() -> None:
    # 1s in r2c5, r3c8, r5c1 and r7c2 leave r1c3 as the only place for 1 in box 1.
    puzzle = grid({2: "....1....", 3: ".......1.", 5: "1........", 7: ".1......."})
    step = hidden_single(Candidates.from_puzzle(puzzle))
    assert step is not None
    assert step.technique == "Hidden Single"
    assert moves(step.placements) == {("r1c3", 1)}
    assert step.to_dict()["houses"] == ["box 1"]
    assert step.explanation == "In box 1, 1 fits only in r1c3, so r1c3 = 1."


def test_no_single_on_an_empty_grid() -> None:
    cg = Candidates.from_puzzle("." * 81)
    assert full_house(cg) is None
    assert naked_single(cg) is None
    assert hidden_single(cg) is None
