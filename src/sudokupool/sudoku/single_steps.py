"""The singles' steps of a solve path as JSON: their templates, and every step the pack writes for one, made once.

A single (a Naked Single, a Full House, a Hidden Single) places one digit in one cell, and its step is written from
its technique's score and a template of that cell, digit and house (:data:`TEMPLATES`). A cell and a digit have eight
such steps, their forms: the two of a Naked Single, then a Full House and a Hidden Single in the cell's row, column
and box. :func:`table` holds all of them, 81 x 9 x 8 texts, so that a solve path's singles (most of its steps) are
found by looking their text up whole rather than by a regex, and moved to another layout by looking up the step of
the moved cell, digit and form.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Final

from sudokupool.sudoku.grid import BOX_OF, COL_OF, ROW_OF, cell_name, house_name
from sudokupool.sudoku.technique_table import SCORES

#: The explanations of the singles (docs/export-format.md's solve path; ``sudoku/techniques/singles.py`` writes
#: them) by technique, as functions of the step's one cell, digit and house: an explanation that reads exactly as
#: one of these moves as it with the moved cell, digit and house, as ``Names.text`` would move it (no other word
#: of them names anything a layout moves).
TEMPLATES: Final[dict[str, tuple[Callable[[str, int, str], str], ...]]] = {
    "Naked Single": (
        lambda c, d, h: f"The row, column and box of {c} already hold every digit except {d}, so {c} = {d}.",
        lambda c, d, h: f"After the earlier eliminations, {d} is the only candidate left in {c}, so {c} = {d}.",
    ),
    "Full House": (lambda c, d, h: f"{h.capitalize()} has only {c} left empty and misses only {d}, so {c} = {d}.",),
    "Hidden Single": (lambda c, d, h: f"In {h}, {d} fits only in {c}, so {c} = {d}.",),
}
#: Each form's technique, template and the kind of its house (0-2: row, column, box; None: it names none).
FORMS: Final[tuple[tuple[str, Callable[[str, int, str], str], int | None], ...]] = (
    *(("Naked Single", template, None) for template in TEMPLATES["Naked Single"]),
    *(("Full House", TEMPLATES["Full House"][0], kind) for kind in range(3)),
    *(("Hidden Single", TEMPLATES["Hidden Single"][0], kind) for kind in range(3)),
)
#: Each form's form in a layout whose rows are the columns: a row's step becomes a column's and the other way.
TRANSPOSED_FORMS: Final = tuple(
    FORMS.index((technique, template, None if kind is None else (1, 0, 2)[kind])) for technique, template, kind in FORMS
)
#: What the table leaves out of a step: its first key and the quote that opens its technique, and its closing brace.
OPENING: Final = '{"technique":"'
CLOSING: Final = "}"


def step_json(technique: str, score: object, cell: str, digit: object, house: str, explanation: str) -> str:
    """A single's step as JSON, as ``msgspec`` and ``orjson`` alike write it (``house`` empty: it names none)."""
    houses = f'"{house}"' if house else ""
    return (
        f'{OPENING}{technique}","score":{score},"placements":[{{"cell":"{cell}","digit":{digit}}}],'
        f'"eliminations":[],"cells":["{cell}"],"houses":[{houses}],"digits":[{digit}],"explanation":"{explanation}"'
        f"{CLOSING}"
    )


@cache
def table() -> tuple[dict[str, tuple[int, int, int]], tuple[tuple[tuple[str, ...], ...], ...]]:
    """Every single's step as the pack writes it, without its :data:`OPENING` and :data:`CLOSING`: the cell (0-80),
    digit (1-9) and form of each step, and the step of each cell, digit and form (``steps[cell][digit - 1][form]``).
    Made the first time it is asked for, then kept for the process's life (the texts are shared by the two)."""
    steps = tuple(
        tuple(tuple(_step(cell, digit, form) for form in range(len(FORMS))) for digit in range(1, 10))
        for cell in range(81)
    )
    found = {
        text: (cell, digit, form)
        for cell, by_digit in enumerate(steps)
        for digit, by_form in enumerate(by_digit, start=1)
        for form, text in enumerate(by_form)
    }
    return found, steps


def _step(cell: int, digit: int, form: int) -> str:
    """The step of ``cell``, ``digit`` and ``form`` without its opening and closing."""
    technique, template, kind = FORMS[form]
    house = "" if kind is None else house_name(kind * 9 + (ROW_OF, COL_OF, BOX_OF)[kind][cell])
    name = cell_name(cell)
    text = step_json(technique, SCORES[technique], name, digit, house, template(name, digit, house))
    return text[len(OPENING) : -len(CLOSING)]
