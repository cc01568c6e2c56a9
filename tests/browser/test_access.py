"""The page for players who do not use a mouse or do not see the screen well, in a real browser.

A whole game by keyboard alone, from the first Tab to the solved board; focus that stays on the board when
the control that had it goes away; what a screen reader is told (the live region); the letter shortcuts
turned off; reflow at 320 px and 200 % zoom; and axe-core on every page (the player at first load, in play
and with a pasted puzzle, the embeddable player, the print sheet) in both schemes on a desktop and a phone,
where a serious or critical violation fails. axe-core comes from npm at a pinned version into the shared test-tool cache
(``tests/tools.py``); it skips single characters, so the board's digits and highlights are checked by
``tests/web/test_contrast.py`` from the stylesheet instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from sudokupool.sudoku.transform import Transform
from sudokupool.web.site import STATIC_DIR
from tests.browser.conftest import DESKTOP, PHONE, Contexts
from tests.browser.test_play import cell, first_with, name_of, open_puzzle, peers
from tests.tools import tools

pytestmark = pytest.mark.browser

Record = dict[str, Any]
AXE_VERSION = "4.14.1"
ARROWS = {(1, 0): "ArrowDown", (-1, 0): "ArrowUp", (0, 1): "ArrowRight", (0, -1): "ArrowLeft"}


@pytest.fixture(scope="module")
def axe_source() -> str:
    return (tools("axe-core", node={"axe-core": AXE_VERSION}).node_modules / "axe-core" / "axe.min.js").read_text()


def axe(page: Page) -> list[str]:
    """axe-core's serious and critical violations on the page as it is, one line each (axe-core injected)."""
    result: dict[str, Any] = page.evaluate("axe.run(document, { resultTypes: ['violations'] })")
    assert result["testEngine"]["version"] == AXE_VERSION
    assert len(result["passes"]) >= 15, "axe-core checked almost nothing"
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:4]]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def focused(page: Page) -> str:
    """What has focus: a cell's name, else ``#id``, else the tag name."""
    found: str = page.evaluate(
        "(() => { const e = document.activeElement; return e?.dataset?.cell ?? (e?.id ? `#${e.id}` : e?.tagName) })()"
    )
    return found


def tab_to(page: Page, target: str, limit: int = 40) -> int:
    """Presses Tab until ``target`` (as ``focused`` names it) has focus; the number of presses."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if focused(page) == target:
            return presses
    raise AssertionError(f"{limit} presses of Tab never reached {target}; focus is on {focused(page)}")


def walk(page: Page, start: int, target: int) -> None:
    """From the focused cell ``start`` to ``target`` with the arrow keys, one row or column a press."""
    (r, c), (tr, tc) = divmod(start, 9), divmod(target, 9)
    for _ in range(abs(tr - r)):
        page.keyboard.press(ARROWS[(1 if tr > r else -1, 0)])
    for _ in range(abs(tc - c)):
        page.keyboard.press(ARROWS[(0, 1 if tc > c else -1)])
    expect(cell(page, name_of(target))).to_be_focused()
    expect(cell(page, name_of(target))).to_have_attribute("aria-selected", "true")


def news(page: Page) -> Any:
    return expect(page.locator("#announce"))


def values_on_page(page: Page) -> str:
    digits: list[str] = page.eval_on_selector_all(
        ".cell", "els => els.map(e => e.querySelector('.value')?.textContent ?? '.')"
    )
    return "".join(digits)


# ---- keyboard ----------------------------------------------------------------------------------------


def test_a_whole_game_by_keyboard_from_the_first_tab(page: Page, records: list[Record]) -> None:
    record = first_with(records, lambda r: r["solve_path"][0]["placements"])
    puzzle, solution = record["puzzle"], record["solution"]
    open_puzzle(page, record["canonical_id"])
    first_empty = puzzle.index(".")

    # The first Tab reaches the skip link; Enter lands on the grid's first empty cell, selected.
    assert tab_to(page, "A", limit=1) == 1
    expect(page.locator(".skip")).to_be_focused()
    page.keyboard.press("Enter")
    at = first_empty
    expect(cell(page, name_of(at))).to_be_focused()
    expect(cell(page, name_of(at))).to_have_attribute("aria-selected", "true")

    # A wrong digit is announced with the cell it clashes with; Backspace takes it away.
    row = range(at // 9 * 9, at // 9 * 9 + 9)
    clash = next(j for j in row if puzzle[j] != ".")
    page.keyboard.press(puzzle[clash])
    clashes = ", ".join(name_of(j) for j in sorted(peers(at)) if puzzle[j] == puzzle[clash])
    news(page).to_have_text(f"{name_of(at)}: {puzzle[clash]}. Conflict with {clashes}.")
    expect(cell(page, name_of(at))).to_have_attribute("aria-invalid", "true")
    page.keyboard.press("Backspace")
    news(page).to_have_text(f"{name_of(at)} erased.")

    # Pencil marks by P, then back to digits; Ctrl+Z undoes the mark.
    page.keyboard.press("p")
    expect(page.locator("#pencil")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press(solution[at])
    news(page).to_have_text(f"{name_of(at)}: pencil mark {solution[at]} added.")
    expect(cell(page, name_of(at))).to_have_accessible_name(f"{name_of(at)}, empty, pencil marks {solution[at]}")
    page.keyboard.press("Control+z")
    news(page).to_have_text("Undone.")
    page.keyboard.press("p")
    expect(page.locator("#pencil")).to_have_attribute("aria-pressed", "false")

    # H shows the first step, and says it; Tab reaches "Apply this step"; Enter applies it and focus goes to
    # the cell it filled, with the news of what changed.
    step = record["solve_path"][0]
    page.keyboard.press("h")
    expect(page.locator("#hint-panel")).to_be_visible()
    news(page).to_have_text(f"Hint: Step 1 of {len(record['solve_path'])}: {step['technique']}. {step['explanation']}")
    expect(cell(page, name_of(at))).to_be_focused()
    tab_to(page, "#hint-apply")
    page.keyboard.press("Enter")
    placed = step["placements"][0]
    at = (int(placed["cell"][1]) - 1) * 9 + int(placed["cell"][3]) - 1
    expect(page.locator("#hint-panel")).to_be_hidden()
    expect(cell(page, placed["cell"])).to_be_focused()
    expect(cell(page, placed["cell"])).to_have_attribute("aria-selected", "true")
    news(page).to_contain_text(f"Step applied: {placed['cell']} is {placed['digit']}")

    # Every cell left, by arrows from wherever focus is, then its digit.
    for target in [i for i, ch in enumerate(values_on_page(page)) if ch == "."]:
        walk(page, at, target)
        page.keyboard.press(solution[target])
        at = target
    expect(page.locator("#success")).to_contain_text("Solved in")
    news(page).to_contain_text("Solved in")
    assert values_on_page(page) == solution
    expect(cell(page, name_of(at))).to_be_focused()


def test_tabbing_in_selects_the_cell_and_arrows_move_from_it(page: Page, records: list[Record]) -> None:
    record = records[6]
    puzzle = record["puzzle"]
    open_puzzle(page, record["canonical_id"])
    first_empty = puzzle.index(".")
    target = name_of(first_empty)
    presses = tab_to(page, target)
    assert presses <= 12  # the skip link, the header's buttons and the technique picker, then the grid
    expect(cell(page, target)).to_have_attribute("aria-selected", "true")
    expect(cell(page, target)).to_have_accessible_name(f"{target}, empty")
    below = first_empty + 9
    page.keyboard.press("ArrowDown")
    expect(cell(page, name_of(below))).to_be_focused()
    expect(cell(page, name_of(below))).to_have_attribute("aria-selected", "true")
    # A given is named as one, and the status line says why a digit does nothing; the next move clears it.
    given = next(i for i in range(81) if puzzle[i] != ".")
    walk(page, below, given)
    page.keyboard.press("5")
    expect(page.locator("#message")).to_have_text(f"{name_of(given)} is a given: it cannot change.")
    empty = next(i for i in range(81) if puzzle[i] == "." and i != first_empty)
    walk(page, given, empty)
    page.keyboard.press("5")
    expect(page.locator("#message")).to_have_text("")
    news(page).to_contain_text(f"{name_of(empty)}: 5.")


def test_the_embedded_player_plays_from_the_first_tab(contexts: Contexts, records: list[Record]) -> None:
    page = contexts.page(viewport=PHONE)
    record = records[7]
    page.goto(f"/embed/{record['canonical_id']}")
    expect(page.locator("#status-code")).to_have_text(record["canonical_id"])
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Sudoku puzzle {record['canonical_id']}")
    first_empty = record["puzzle"].index(".")
    assert tab_to(page, name_of(first_empty)) == 2  # the link to the full player, then the grid
    digit = record["solution"][first_empty]
    page.keyboard.press(digit)
    expect(cell(page, name_of(first_empty)).locator(".shown")).to_have_text(digit)
    news(page).to_have_text(f"{name_of(first_empty)}: {digit}.")


def test_focus_stays_on_the_board_when_its_control_goes_away(page: Page, records: list[Record]) -> None:
    record = records[8]
    solution = record["solution"]
    open_puzzle(page, record["canonical_id"])
    first_empty = record["puzzle"].index(".")
    tab_to(page, name_of(first_empty))

    # Hide: the panel goes, focus comes back to the selected cell.
    page.keyboard.press("h")
    tab_to(page, "#hint-close")
    page.keyboard.press("Enter")
    expect(page.locator("#hint-panel")).to_be_hidden()
    expect(cell(page, name_of(first_empty))).to_be_focused()
    news(page).to_have_text("Hint hidden.")

    # A win from the pad: its buttons are disabled, focus goes to the cell just filled.
    empties = [i for i, ch in enumerate(record["puzzle"]) if ch == "."]
    at = first_empty
    for target in empties[:-1]:
        walk(page, at, target)
        page.keyboard.press(solution[target])
        at = target
    last = empties[-1]
    walk(page, at, last)
    page.keyboard.press("Tab")  # the pad's first button follows the grid
    expect(page.locator('.pad .digits button[data-digit="1"]')).to_be_focused()
    for _ in range(int(solution[last]) - 1):
        page.keyboard.press("Tab")
    expect(page.locator(f'.pad .digits button[data-digit="{solution[last]}"]')).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#success")).to_contain_text("Solved in")
    expect(cell(page, name_of(last))).to_be_focused()


def test_reveal_all_leaves_focus_on_the_board(page: Page, records: list[Record]) -> None:
    open_puzzle(page, records[9]["canonical_id"])
    tab_to(page, "#reveal-all", limit=60)
    page.keyboard.press("Enter")
    expect(page.locator("#reveal-all")).to_have_text("Sure? Reveal all")
    news(page).to_have_text("Sure? Reveal all: press it again within 4 seconds to confirm.")
    page.keyboard.press("Enter")
    expect(page.locator("#success")).to_contain_text("solution is revealed")
    news(page).to_have_text("The solution is revealed. Try another puzzle!")
    assert re.fullmatch(r"r[1-9]c[1-9]", focused(page)), focused(page)


def test_letter_shortcuts_act_on_the_board_only_and_can_be_turned_off(page: Page, records: list[Record]) -> None:
    record = records[10]
    open_puzzle(page, record["canonical_id"])
    # On a control beside the board, H is that control's key.
    page.locator("#copy-link").focus()
    page.keyboard.press("h")
    page.keyboard.press("p")
    expect(page.locator("#hint-panel")).to_be_hidden()
    expect(page.locator("#pencil")).to_have_attribute("aria-pressed", "false")

    # Turned off (by keyboard), P and H do nothing even in the grid; digits still do. The choice is kept.
    expect(page.locator("#hint")).to_have_attribute("aria-keyshortcuts", "H")
    tab_to(page, "#shortcuts", limit=60)
    page.keyboard.press("Space")
    expect(page.locator("#shortcuts")).not_to_be_checked()
    expect(page.locator("#pencil")).not_to_have_attribute("aria-keyshortcuts", "P")
    expect(page.locator("#message")).to_have_text("Letter shortcuts off.")
    page.reload()
    expect(page.locator("#shortcuts")).not_to_be_checked()
    first_empty = record["puzzle"].index(".")
    tab_to(page, name_of(first_empty))
    page.keyboard.press("h")
    page.keyboard.press("p")
    expect(page.locator("#hint-panel")).to_be_hidden()
    expect(page.locator("#pencil")).to_have_attribute("aria-pressed", "false")
    page.keyboard.press("4")
    news(page).to_contain_text(f"{name_of(first_empty)}: 4.")


# ---- low vision and small screens --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "scheme"), [("player", "light"), ("player", "dark"), ("embed", "dark"), ("print", "light")]
)
def test_no_sideways_scrolling_at_320_px(contexts: Contexts, records: list[Record], name: str, scheme: str) -> None:
    page = contexts.page(viewport={"width": 320, "height": 640}, scheme=scheme)
    record = records[0]
    if name == "player":
        open_puzzle(page, record["canonical_id"])
        page.locator("#automarks").click()
        page.locator("#hint").click()
        expect(page.locator("#hint-panel")).to_be_visible()
    elif name == "embed":
        embedded(page, record)
    else:
        print_sheet(page, record)
    assert page.evaluate("document.documentElement.scrollWidth") <= 320
    too_wide: list[str] = page.evaluate(
        "[...document.querySelectorAll('body *')]"
        ".filter(e => !e.closest('.sr-only') && e.getBoundingClientRect().right > 320.5)"
        ".map(e => e.id || e.className || e.tagName)"
    )
    assert too_wide == []


def test_the_board_fits_the_window_at_200_percent_zoom(contexts: Contexts, records: list[Record]) -> None:
    page = contexts.page(viewport={"width": 640, "height": 450})
    open_puzzle(page, records[0]["canonical_id"])
    page.locator(".status-bar").scroll_into_view_if_needed()
    page.evaluate("window.scrollTo(0, document.querySelector('.status-bar').getBoundingClientRect().top + scrollY)")
    top = page.locator(".status-bar").bounding_box()
    grid = page.locator("#grid").bounding_box()
    assert top is not None and grid is not None
    assert grid["y"] + grid["height"] - top["y"] <= 450, (top, grid)
    assert grid["width"] >= 300


def test_pencil_marks_are_readable_on_a_phone(contexts: Contexts, records: list[Record]) -> None:
    page = contexts.page(viewport=PHONE)
    open_puzzle(page, records[0]["canonical_id"])
    page.locator("#automarks").click()
    size = page.evaluate("parseFloat(getComputedStyle(document.querySelector('.marks span')).fontSize)")
    assert size >= 11.5, size
    weight = page.evaluate("getComputedStyle(document.querySelector('.marks')).fontWeight")
    assert int(weight) >= 600


# ---- axe-core ----------------------------------------------------------------------------------------


def first_load(page: Page, record: Record) -> None:
    open_puzzle(page, record["canonical_id"])


def in_play(page: Page, record: Record) -> None:
    """Pencil marks everywhere, a digit entered, and a hint showing with its highlights."""
    open_puzzle(page, record["canonical_id"])
    page.locator("#automarks").click()
    step = record["solve_path"][0]
    placed = step["placements"][0]
    cell(page, placed["cell"]).click()
    page.keyboard.press(str(placed["digit"]))
    page.keyboard.press("h")
    expect(page.locator("#hint-panel")).to_be_visible()
    expect(page.locator(".cell.hint-cell").first).to_be_visible()


def embedded(page: Page, record: Record) -> None:
    page.goto(f"/embed/{record['canonical_id']}")
    expect(page.locator("#status-code")).to_have_text(record["canonical_id"])


def print_sheet(page: Page, record: Record) -> None:
    page.goto(f"/print?ids={record['canonical_id']}")
    expect(page.locator("figure")).to_have_count(2)


def pasted(page: Page, record: Record) -> None:
    """A pool puzzle pasted in another layout with the server's hint showing, and a paste that is no puzzle
    told under the field."""
    page.goto("/")
    grid = Transform(transpose=True).apply(record["puzzle"])
    field = page.get_by_label("Any puzzle, row by row")
    field.fill(grid)
    page.get_by_role("button", name="Play this puzzle").click()
    expect(page.locator("#message")).to_contain_text("Found in the pool")
    page.get_by_role("button", name="Hint").click()
    expect(page.locator("#hint-technique")).to_contain_text("Next step: ")
    field.fill(grid[:80])
    page.get_by_role("button", name="Play this puzzle").click()
    expect(page.locator("#paste-error")).to_have_text("A puzzle has 81 cells; this one has 80.")


PAGES: dict[str, Callable[[Page, Record], None]] = {
    "player": first_load,
    "in-play": in_play,
    "pasted": pasted,
    "embed": embedded,
    "print": print_sheet,
}


#: What a script would read to tell a phone from a desktop, or the dark scheme from the light.
SIZE_OR_SCHEME = re.compile(r"matchMedia|prefers-color-scheme|innerWidth|innerHeight|clientWidth|screen\\.|resize")


@pytest.mark.parametrize("name", list(PAGES))
def test_axe_finds_nothing_serious(contexts: Contexts, records: list[Record], axe_source: str, name: str) -> None:
    """Each page is brought to its state once, then checked on a desktop and a phone in both schemes: its size and
    scheme are its stylesheets' alone (no script of the page reads either), so the page as it is then is the page
    as it loads there."""
    scripts = {path.name: path.read_text() for path in STATIC_DIR.rglob("*.js")}
    assert scripts and not {name for name, text in scripts.items() if SIZE_OR_SCHEME.search(text)}
    page = contexts.page()
    record = first_with(records, lambda r: r["solve_path"][0]["placements"])
    PAGES[name](page, record)
    page.evaluate(axe_source)  # evaluated by the browser's debugger, so the page's CSP does not block it
    found = {}
    for size, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)  # type: ignore[arg-type]
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
            assert page.evaluate("[innerWidth, matchMedia('(prefers-color-scheme: dark)').matches]") == [
                viewport["width"],
                scheme == "dark",
            ]
            if violations := axe(page):
                found[f"{size}, {scheme}"] = violations
    assert found == {}
