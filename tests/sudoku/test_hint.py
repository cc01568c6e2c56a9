from __future__ import annotations

from typing import Any

import pytest

from sudokupool.sudoku.candidates import DIGITS_OF, Candidates
from sudokupool.sudoku.hint import HintError, hint, parse_candidates
from tests.helpers import demo_records

# A subset, a fish and a chain, besides the singles every path starts with.
FAMILIES = {
    "subset": ("Naked Pair", "Naked Triple", "Hidden Pair", "Hidden Triple"),
    "fish": ("X-Wing", "Swordfish", "Finned X-Wing", "Finned Swordfish"),
    "chain": ("X-Chain", "XY-Chain", "AIC", "Continuous Nice Loop", "Discontinuous Nice Loop"),
}


@pytest.fixture(scope="module")
def demo() -> list[dict[str, Any]]:
    return demo_records()


def _cell_index(name: str) -> int:
    return (int(name[1]) - 1) * 9 + int(name[3]) - 1


def _state_before(record: dict[str, Any], index: int) -> Candidates:
    """The grader's candidates just before step ``index`` of the record's path."""
    cg = Candidates.from_puzzle(record["puzzle"])
    for step in record["solve_path"][:index]:
        for item in step["placements"]:
            cg.place(_cell_index(item["cell"]), item["digit"])
        for item in step["eliminations"]:
            cg.eliminate(_cell_index(item["cell"]), item["digit"])
    return cg


def _marks(cg: Candidates) -> str:
    return ",".join("" if cg.values[c] else "".join(map(str, DIGITS_OF[cg.cands[c]])) for c in range(81))


def _find(demo: list[dict[str, Any]], names: tuple[str, ...]) -> tuple[dict[str, Any], int]:
    for record in demo:
        for index, step in enumerate(record["solve_path"]):
            if step["technique"] in names:
                return record, index
    raise AssertionError(f"no demo step of {names}")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_with_the_graders_pencil_marks_the_hint_is_the_graders_next_step(
    demo: list[dict[str, Any]], family: str
) -> None:
    record, index = _find(demo, FAMILIES[family])
    cg = _state_before(record, index)
    got = hint(record["puzzle"], record["solution"], cg.grid(), _marks(cg))
    assert got.kind == "step"
    assert got.to_dict()["step"] == record["solve_path"][index]


def test_on_the_bare_puzzle_the_hint_is_the_first_step(demo: list[dict[str, Any]]) -> None:
    record = demo[0]
    got = hint(record["puzzle"], record["solution"], record["puzzle"])
    assert got.to_dict() == {"status": "step", "wrong": [], "conflicting": [], "step": record["solve_path"][0]}


def test_without_pencil_marks_the_hint_comes_from_the_board_alone(demo: list[dict[str, Any]]) -> None:
    # Before a subset step the grader's own eliminations made it; from the board alone, with no
    # eliminations, an easier step or the same applies, never a harder one.
    record, index = _find(demo, FAMILIES["subset"])
    cg = _state_before(record, index)
    got = hint(record["puzzle"], record["solution"], cg.grid())
    assert got.step is not None
    assert got.step.score <= record["solve_path"][index]["score"]


def test_wrong_entries_and_conflicts_are_named_first(demo: list[dict[str, Any]]) -> None:
    record = demo[0]
    puzzle, solution = record["puzzle"], record["solution"]
    empty = [c for c in range(81) if puzzle[c] == "."]
    board = list(puzzle)
    wrong_cell = empty[0]
    board[wrong_cell] = next(
        d for d in "123456789" if d != solution[wrong_cell] and d not in _house_digits(puzzle, wrong_cell)
    )
    got = hint(puzzle, solution, "".join(board)).to_dict()
    assert got["status"] == "fix"
    assert got["wrong"] == [_name(wrong_cell)]
    assert got["conflicting"] == []
    # A second entry repeating that digit in the row: both entries conflict.
    clash = next(c for c in empty[1:] if c // 9 == wrong_cell // 9)
    board[clash] = board[wrong_cell]
    got = hint(puzzle, solution, "".join(board)).to_dict()
    assert got["status"] == "fix"
    assert _name(wrong_cell) in got["wrong"]
    assert got["conflicting"] == sorted([_name(wrong_cell), _name(clash)], key=lambda n: (n[1], n[3]))


def _house_digits(puzzle: str, cell: int) -> set[str]:
    from sudokupool.sudoku.grid import PEERS

    return {puzzle[p] for p in PEERS[cell]}


def _name(cell: int) -> str:
    return f"r{cell // 9 + 1}c{cell % 9 + 1}"


def test_a_finished_board_says_so(demo: list[dict[str, Any]]) -> None:
    record = demo[1]
    got = hint(record["puzzle"], record["solution"], record["solution"])
    assert got.to_dict() == {"status": "finished", "wrong": [], "conflicting": []}


def test_pencil_marks_that_erase_a_needed_digit_name_the_cell(demo: list[dict[str, Any]]) -> None:
    record = demo[2]
    cg = Candidates.from_puzzle(record["puzzle"])
    cell = next(c for c in range(81) if not cg.values[c] and len(DIGITS_OF[cg.cands[c]]) > 1)
    fields = _marks(cg).split(",")
    fields[cell] = fields[cell].replace(record["solution"][cell], "")
    with pytest.raises(HintError, match=f"pencil marks of {_name(cell)} leave out a digit it needs"):
        hint(record["puzzle"], record["solution"], record["puzzle"], ",".join(fields))


def test_a_board_without_the_givens_is_refused(demo: list[dict[str, Any]]) -> None:
    record = demo[0]
    puzzle = record["puzzle"]
    given = next(c for c in range(81) if puzzle[c] != ".")
    board = puzzle[:given] + "." + puzzle[given + 1 :]
    with pytest.raises(HintError, match=f"{_name(given)} must hold the puzzle's given {puzzle[given]}"):
        hint(puzzle, record["solution"], board)
    with pytest.raises(HintError, match="board: a grid has 81 cells"):
        hint(puzzle, record["solution"], puzzle[:80])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(",," * 20, "81 comma-separated fields", id="too-few"),
        pytest.param(",".join(["1"] * 80 + ["0"]), "r9c9 holds '0'", id="zero"),
        pytest.param(",".join(["x"] + [""] * 80), "r1c1 holds 'x'", id="letter"),
        pytest.param("1" * 900, "at most 809 characters", id="too-long"),
    ],
)
def test_malformed_pencil_marks_are_refused(text: str, message: str) -> None:
    with pytest.raises(HintError, match=message):
        parse_candidates(text)


def test_pencil_marks_parse_to_masks() -> None:
    masks = parse_candidates(",".join(["19", ""] + ["5"] * 79))
    assert masks[:3] == [0b100000001, 0, 0b10000]
