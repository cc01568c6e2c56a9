"""The page's colours, worked out from the stylesheet's custom properties in both schemes.

axe-core skips single characters, so it never checks the board's digits and pencil marks; this test does,
on every highlight a cell can have, with WCAG 2's contrast ratio: at least 4.5:1 for text, 3:1 for
indicators that are not text (the focus ring, the box lines, the ring round the cell a hint fills). It
also reads the rules that use each colour, so a rule that switches to another colour is caught too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

import pytest

from sudokupool.web.site import STATIC_DIR

CSS: Final = (STATIC_DIR / "style.css").read_text()
TEXT: Final = 4.5
NON_TEXT: Final = 3.0

# Every background a cell can show: plain, its selection's houses, the same digit, selected, a hint's four
# highlights, a conflict, and the solved grid.
CELL_BACKGROUNDS: Final = (
    "--surface",
    "--peer",
    "--same",
    "--selected",
    "--hint-house",
    "--hint-cell",
    "--hint-place",
    "--hint-elim",
    "--conflict-bg",
    "--success-bg",
)
# Every ink a cell's digits can have: a given, an entry, a revealed digit and the pencil marks (muted), a
# conflicting or wrong digit and a struck pencil mark (conflict).
CELL_INKS: Final = ("--given", "--entered", "--muted", "--conflict")

# Text beside the board: (ink, backgrounds).
PAGE_TEXT: Final = (
    ("--text", ("--bg", "--surface", "--same", "--hint-house", "--hint-cell", "--hint-place", "--hint-elim")),
    ("--text", ("--error-bg",)),
    ("--muted", ("--bg", "--surface", "--peer")),  # labels, help, the status line, a digit placed nine times
    ("--accent", ("--bg", "--surface")),  # links
    ("--accent-text", ("--accent",)),  # the Hint button, a pressed Pencil
    ("--success", ("--success-bg",)),  # the solved banner
    ("--conflict", ("--surface",)),  # a button asking to confirm
    ("--star", ("--surface",)),
)
NON_TEXT_PAIRS: Final = (
    ("--focus", (*CELL_BACKGROUNDS, "--bg")),  # the focus ring, on a cell or round a control
    ("--thick", CELL_BACKGROUNDS),  # the box lines and the grid's border
    ("--line", ("--surface",)),  # the thin lines between plain cells
    ("--success", ("--hint-place",)),  # the ring round the cell a hint fills
)
# The rules that give those roles their colours: (selector, property, custom property).
RULES: Final = (
    (".cell.given", "color", "--given"),
    (".cell.entered", "color", "--entered"),
    (".cell.revealed", "color", "--muted"),
    (".marks", "color", "--muted"),
    (".marks .x", "color", "--conflict"),
    (".cell.conflict,\n.cell.wrong", "color", "--conflict"),
    (":focus-visible", "outline", "--focus"),
    (".cell:focus-visible", "outline", "--focus"),
    (".grid.pencil-mode .cell.selected", "box-shadow", "--focus"),
    (".cell.hint-place", "box-shadow", "--success"),
    (".row > .cell:nth-child(3n)", "border-right", "--thick"),
    (".row:nth-child(3n) > .cell", "border-bottom", "--thick"),
    (".cell", "border-right", "--line"),
    (".banner.success", "color", "--success"),
    (".pad .digits button.complete", "color", "--muted"),
    ('.details dd[data-field="stars"]', "color", "--star"),
)


def custom_properties(block: str) -> dict[str, str]:
    return dict(re.findall(r"(--[\w-]+):\s*(#[0-9a-fA-F]{6})\b", block))


def schemes() -> dict[str, dict[str, str]]:
    light = re.search(r"^:root \{(.*?)^\}", CSS, re.MULTILINE | re.DOTALL)
    dark = re.search(r"@media \(prefers-color-scheme: dark\) \{\s*:root \{(.*?)\}", CSS, re.DOTALL)
    assert light and dark
    base = custom_properties(light.group(1))
    return {"light": base, "dark": {**base, **custom_properties(dark.group(1))}}


def luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def failures(colours: dict[str, str], pairs: Iterable[tuple[str, Iterable[str]]], least: float) -> list[str]:
    """Each pair of ``pairs`` (an ink and its backgrounds) whose contrast is under ``least``."""
    out = []
    for ink, backgrounds in pairs:
        for background in backgrounds:
            ratio = contrast(colours[ink], colours[background])
            if ratio < least:
                out.append(f"{ink} {colours[ink]} on {background} {colours[background]}: {ratio:.2f}")
    return out


def test_the_ratio_is_wcags() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast("#ffffff", "#777777") == contrast("#777777", "#ffffff")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_digit_and_mark_on_every_highlight(scheme: str) -> None:
    colours = schemes()[scheme]
    pairs = [(ink, CELL_BACKGROUNDS) for ink in CELL_INKS]
    assert failures(colours, pairs, TEXT) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_text_beside_the_board(scheme: str) -> None:
    assert failures(schemes()[scheme], PAGE_TEXT, TEXT) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_focus_ring_box_lines_and_rings(scheme: str) -> None:
    assert failures(schemes()[scheme], NON_TEXT_PAIRS, NON_TEXT) == []


def test_both_schemes_set_every_colour_checked() -> None:
    light, dark = schemes().values()
    used = {*CELL_BACKGROUNDS, *CELL_INKS}
    for ink, backgrounds in (*PAGE_TEXT, *NON_TEXT_PAIRS):
        used |= {ink, *backgrounds}
    assert used <= light.keys()
    dark_block = re.search(r"@media \(prefers-color-scheme: dark\) \{\s*:root \{(.*?)\}", CSS, re.DOTALL)
    assert dark_block
    # Every colour of the light scheme is set again for the dark one (a forgotten one would be the light's).
    assert set(custom_properties(dark_block.group(1))) == set(light) == set(dark)


@pytest.mark.parametrize(("selector", "prop", "custom"), RULES, ids=[f"{s} {p}" for s, p, _ in RULES])
def test_the_rules_use_those_colours(selector: str, prop: str, custom: str) -> None:
    rule = re.search(rf"^{re.escape(selector)} \{{(.*?)^\}}", CSS, re.MULTILINE | re.DOTALL)
    assert rule, f"no rule {selector!r} in style.css"
    declared = dict(re.findall(r"^\s*([\w-]+):\s*(.*?);", rule.group(1), re.MULTILINE))
    assert prop in declared, f"{selector} sets no {prop}"
    assert f"var({custom})" in declared[prop], f"{selector} {{ {prop}: {declared[prop]} }}"


@pytest.mark.parametrize(("scheme", "least"), [("light", 2.4), ("dark", 1.95)])
def test_givens_and_entries_differ_by_weight_and_ink(scheme: str, least: float) -> None:
    # Both inks keep 4.5:1 on the selected cell, which bounds how far apart they can be (about 2.7:1 in the
    # light scheme, 2.2:1 in the dark); the weight tells them apart as well.
    colours = schemes()[scheme]
    assert contrast(colours["--given"], colours["--entered"]) >= least
    given = re.search(r"^\.cell\.given \{(.*?)^\}", CSS, re.MULTILINE | re.DOTALL)
    entered = re.search(r"^\.cell\.entered \{(.*?)^\}", CSS, re.MULTILINE | re.DOTALL)
    assert given and entered
    assert "font-weight: 700;" in given.group(1)
    assert "font-weight" not in entered.group(1)
