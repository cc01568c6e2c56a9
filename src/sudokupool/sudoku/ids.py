"""Share codes: 13-character Crockford base32 ids for a puzzle's canonical form and for its exact grid.

An id is the first 65 bits of SHA-256 over a version tag and the string, written as 13 base32 digits
(5 bits each) from the alphabet ``0-9 A-Z`` without ``I L O U``. Collision odds are in docs/grading.md.
"""

from __future__ import annotations

import hashlib
from typing import Final

ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ID_LENGTH: Final = 13
CANONICAL_TAG: Final = "sudokupool-canonical-v1:"
PUZZLE_TAG: Final = "sudokupool-puzzle-v1:"

_BITS: Final = ID_LENGTH * 5  # 65
# Lookups accept lower case and the usual misreadings: I and L for 1, O for 0.
_READ: Final = str.maketrans("ILO", "110")
_VALID: Final = frozenset(ALPHABET)
#: Every two digits, by the ten bits they write.
_PAIRS: Final = tuple(first + second for first in ALPHABET for second in ALPHABET)


def share_code(text: str) -> str:
    """13 Crockford base32 digits of the first 65 bits of SHA-256 over ``text`` (ASCII)."""
    digest = hashlib.sha256(text.encode("ascii")).digest()
    value = int.from_bytes(digest[:9], "big") >> (72 - _BITS)
    # Two digits at a time, from the first: the 13th is the last 5 bits.
    pairs = _PAIRS
    return (
        pairs[value >> 55]
        + pairs[value >> 45 & 1023]
        + pairs[value >> 35 & 1023]
        + pairs[value >> 25 & 1023]
        + pairs[value >> 15 & 1023]
        + pairs[value >> 5 & 1023]
        + ALPHABET[value & 31]
    )


def canonical_id(canonical: str) -> str:
    """The share code of a canonical form (the output of ``canonical_form``)."""
    return share_code(CANONICAL_TAG + canonical)


def puzzle_id(puzzle: str) -> str:
    """The id of the exact puzzle grid (81 characters, ``.`` for empty cells)."""
    return share_code(PUZZLE_TAG + puzzle)


def normalise_id(text: str) -> str | None:
    """The upper-case id ``text`` spells, or None when it is not 13 Crockford base32 characters.

    Case-insensitive; ``I``/``L`` read as ``1`` and ``O`` as ``0``. Safe on any input: the length and
    ASCII checks come first, so long, non-ASCII or path-like strings are rejected without other work.
    """
    if len(text) != ID_LENGTH or not text.isascii():
        return None
    code = text.upper().translate(_READ)
    if not _VALID.issuperset(code):
        return None
    return code
