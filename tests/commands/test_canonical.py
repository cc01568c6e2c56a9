"""``sudokupool canonical``: a puzzle's canonical form and ids, from a puzzle written as ``grade`` reads one."""

from __future__ import annotations

import io

import pytest

from sudokupool.cli import main

PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
PASTED = """
5 3 . | . 7 . | . . .
6 . . | 1 9 5 | . . .
. 9 8 | . . . | . 6 .
------+-------+------
8 . . | . 6 . | . . 3
4 . . | 8 . 3 | . . 1
7 . . | . 2 . | . . 6
------+-------+------
. 6 . | . . . | 2 8 .
. . . | 4 1 9 | . . 5
. . . | . 8 . | . 7 9
"""
EXPECTED = (
    f"puzzle:       {PUZZLE}\n"
    "canonical:    ........1.....2.34156...27......8.......51..232974......16..9....34..7..28.91.45.\n"
    "canonical_id: 5B8TBHZWFRPVZ\n"
    "puzzle_id:    SD8XJDXH3EJS9\n"
    "symmetry:     rotational-180\n"
)


@pytest.mark.parametrize(
    "written",
    [
        pytest.param(PUZZLE, id="one-line"),
        pytest.param(PUZZLE.replace(".", "0"), id="zeros"),
        pytest.param(f"{PUZZLE} 7.2", id="rated"),
        pytest.param(PASTED, id="pasted-grid"),
        pytest.param(PASTED.replace(" . ", " _ ").replace("|", "│"), id="box-drawing-and-underscores"),
    ],
)
def test_canonical_reads_a_puzzle_as_grade_does(capsys: pytest.CaptureFixture[str], written: str) -> None:
    assert main(["canonical", written]) == 0
    assert capsys.readouterr().out == EXPECTED


def test_canonical_reads_standard_input_and_refuses_two_puzzles(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(PASTED))
    assert main(["canonical", "-"]) == 0
    assert capsys.readouterr().out == EXPECTED
    assert main(["canonical", f"{PUZZLE}\n{PUZZLE}"]) == 2
    assert capsys.readouterr().err == "sudokupool canonical: give one puzzle, not 2\n"
    assert main(["canonical", "12"]) == 2
    assert capsys.readouterr().err == "sudokupool canonical: a grid has 81 cells, got 2\n"
