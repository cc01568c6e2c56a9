"""Close matches for a mistyped name (a technique, a difficulty): ``xwing`` -> ``X-Wing``."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def _key(name: str) -> str:
    # Case, spaces and punctuation are what people get wrong most ("xwing", "x wing", "X_Wing").
    return "".join(ch for ch in name.lower() if ch.isalnum())


def closest(text: str, names: Iterable[str]) -> str | None:
    """The name of ``names`` that ``text`` most likely means (difflib's ratio, compared without case, spaces
    or punctuation), or None when none is close."""
    by_key = {_key(name): name for name in names}
    found = difflib.get_close_matches(_key(text), by_key, n=1, cutoff=0.75)
    return by_key[found[0]] if found else None
