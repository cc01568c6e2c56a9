from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sudokupool.sudoku.ids import ALPHABET, canonical_id, normalise_id, puzzle_id

PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"


def reference_code(tag: str, text: str) -> str:
    """The id spelled out from its definition: 65 leading bits of SHA-256, 5 bits per character."""
    bits = "".join(f"{byte:08b}" for byte in hashlib.sha256((tag + text).encode()).digest())[:65]
    return "".join("0123456789ABCDEFGHJKMNPQRSTVWXYZ"[int(bits[i : i + 5], 2)] for i in range(0, 65, 5))


def test_ids_follow_the_definition() -> None:
    assert puzzle_id(PUZZLE) == reference_code("sudokupool-puzzle-v1:", PUZZLE)
    assert canonical_id(PUZZLE) == reference_code("sudokupool-canonical-v1:", PUZZLE)


@given(st.text(alphabet="123456789.", min_size=81, max_size=81))
def test_every_grids_ids_follow_the_definition(grid: str) -> None:
    assert puzzle_id(grid) == reference_code("sudokupool-puzzle-v1:", grid)
    assert canonical_id(grid) == reference_code("sudokupool-canonical-v1:", grid)


def test_pinned_values() -> None:
    # Pinned so an accidental change of tag, hash or alphabet shows up as a failing test.
    assert canonical_id("." * 81) == "36VXTX2QY2GGV"
    assert puzzle_id("." * 81) == "8TCQ1NNKPX0B4"


def test_puzzle_and_canonical_ids_differ_for_same_string() -> None:
    assert puzzle_id(PUZZLE) != canonical_id(PUZZLE)


def test_alphabet() -> None:
    assert len(ALPHABET) == 32
    assert not set("ILOU") & set(ALPHABET)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("36VXTX2QY2GGV", "36VXTX2QY2GGV", id="exact"),
        pytest.param("36vxtx2qy2ggv", "36VXTX2QY2GGV", id="lower-case"),
        pytest.param("36VXTX2QY2GGO", "36VXTX2QY2GG0", id="O-is-0"),
        pytest.param("i6VXTX2QY2GGl", "16VXTX2QY2GG1", id="I-and-L-are-1"),
        pytest.param("36VXTX2QY2GG", None, id="too-short"),
        pytest.param("36VXTX2QY2GGVV", None, id="too-long"),
        pytest.param("36VXTX2QY2GGU", None, id="U-not-allowed"),
        pytest.param("../../etc/pas", None, id="path"),
        pytest.param("36VXTX2QY2GG\u00df", None, id="non-ascii-sharp-s"),
        pytest.param("\u0130" * 13, None, id="non-ascii-dotted-I"),
        pytest.param("A" * 100_000, None, id="very-long"),
        pytest.param("", None, id="empty"),
        pytest.param("36VXTX2 Y2GGV", None, id="space"),
    ],
)
def test_normalise_id(text: str, expected: str | None) -> None:
    assert normalise_id(text) == expected


@given(st.text())
def test_normalise_id_never_raises_and_returns_valid_codes(text: str) -> None:
    result = normalise_id(text)
    assert result is None or (len(result) == 13 and set(result) <= set(ALPHABET))


@given(st.text(alphabet="0123456789abcdefghjkmnpqrstvwxyzABCDEFGHJKMNPQRSTVWXYZ", min_size=13, max_size=13))
def test_normalise_id_accepts_any_crockford_code(text: str) -> None:
    assert normalise_id(text) == text.upper()
