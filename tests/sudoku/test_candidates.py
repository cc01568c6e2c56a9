from __future__ import annotations

import pytest

from sudokupool.sudoku.candidates import BIT, DIGITS_OF, POPCOUNT, Candidates, common_peers, sees
from sudokupool.sudoku.grid import GridError


def test_from_puzzle_removes_digits_seen_in_row_column_and_box() -> None:
    cg = Candidates.from_puzzle("12" + "." * 7 + "3" + "." * 71)  # r1c1=1, r1c2=2, r2c1=3
    assert cg.values[:2] == [1, 2]
    assert cg.cands[0] == 0
    assert DIGITS_OF[cg.cands[2]] == (4, 5, 6, 7, 8, 9)  # r1c3: row has 1 2, box has 3
    assert DIGITS_OF[cg.cands[80]] == tuple(range(1, 10))


def test_clashing_givens_raise() -> None:
    with pytest.raises(GridError):
        Candidates.from_puzzle("1" + "." * 8 + "1" + "." * 71)


def test_place_removes_the_digit_from_peers_only() -> None:
    cg = Candidates.from_puzzle("." * 81)
    cg.place(40, 5)  # r5c5
    assert cg.values[40] == 5
    assert not cg.has(36, 5)  # r5c1, same row
    assert not cg.has(4, 5)  # r1c5, same column
    assert not cg.has(30, 5)  # r4c4, same box
    assert cg.has(0, 5)  # r1c1 does not see r5c5
    assert cg.digit_cells(5) == [c for c in range(81) if c != 40 and not sees(c, 40)]


def test_eliminate_reports_whether_it_changed_something() -> None:
    cg = Candidates.from_puzzle("." * 81)
    assert cg.eliminate(0, 3)
    assert not cg.eliminate(0, 3)
    assert POPCOUNT[cg.cands[0]] == 8
    assert cg.cands[0] & BIT[3] == 0


def test_broken_and_solved_states() -> None:
    cg = Candidates.from_puzzle("." * 81)
    assert not cg.is_broken()
    cg.cands[0] = 0
    assert cg.is_broken()
    assert not cg.is_solved()
    assert cg.empty_cells() == list(range(81))
    assert cg.grid() == "." * 81


def test_common_peers() -> None:
    # r1c1 and r1c9 share only row 1.
    assert common_peers(0, 8) == frozenset(range(1, 8))
    assert 0 not in common_peers(0, 1)
    assert sees(0, 80) is False
