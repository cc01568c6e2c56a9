"""Play the pool in a real browser: load, type, conflicts, hints, share links, a win, errors, screenshots."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import DESKTOP, PHONE, Contexts, Shared
from tests.servers import Server

pytestmark = pytest.mark.browser

Record = dict[str, Any]
START = 1_795_000_000_000  # milliseconds since the epoch


# ---- the grid, as the solve path names it ----------------------------------------------------------


def index_of(name: str) -> int:
    return (int(name[1]) - 1) * 9 + int(name[3]) - 1


def name_of(i: int) -> str:
    return f"r{i // 9 + 1}c{i % 9 + 1}"


def peers(i: int) -> set[int]:
    r, c = divmod(i, 9)
    return {
        j for j in range(81) if j != i and (j // 9 == r or j % 9 == c or (j // 27 == i // 27 and j % 9 // 3 == c // 3))
    }


def house(name: str) -> set[str]:
    kind, number = name.split()
    n = int(number) - 1
    if kind == "row":
        return {name_of(n * 9 + c) for c in range(9)}
    if kind == "column":
        return {name_of(r * 9 + n) for r in range(9)}
    return {name_of((n // 3 * 3 + k // 3) * 9 + n % 3 * 3 + k % 3) for k in range(9)}


def expected_hint(record: Record, values: list[int], marks: list[int], seen: set[int]) -> int | None:
    """The step the page should show (the page's rule, stated again): the first placement not yet made,
    or the first removal-only step not yet shown whose removal still matters in the player's grid."""
    for index, step in enumerate(record["solve_path"]):
        if step["placements"]:
            if any(values[index_of(p["cell"])] != p["digit"] for p in step["placements"]):
                return index
            continue
        if index in seen:
            continue
        for elimination in step["eliminations"]:
            i, bit = index_of(elimination["cell"]), 1 << elimination["digit"]
            if values[i] or (marks[i] and not marks[i] & bit):
                continue
            if all(values[j] != elimination["digit"] for j in peers(i)):
                return index
    return None


# ---- driving the page --------------------------------------------------------------------------------


def open_puzzle(page: Page, code: str) -> None:
    page.goto(f"/p/{code}")
    expect(page.locator("#status-code")).to_have_text(code)


def cell(page: Page, name: str) -> Any:
    return page.locator(f'[data-cell="{name}"]')


def cells_with(page: Page, cls: str) -> set[str]:
    names: list[str] = page.eval_on_selector_all(f".cell.{cls}", "els => els.map(e => e.dataset.cell)")
    return set(names)


def cells_with_each(page: Page, *classes: str) -> dict[str, set[str]]:
    """``cells_with`` of each class, read in one call into the page (a hint's four highlights at once)."""
    found: dict[str, list[str]] = page.evaluate(
        "classes => Object.fromEntries(classes.map(c => [c, [...document.querySelectorAll(`.cell.${c}`)]"
        ".map(e => e.dataset.cell)]))",
        list(classes),
    )
    return {cls: set(found[cls]) for cls in classes}


def shown_digits(page: Page) -> str:
    digits: list[str] = page.eval_on_selector_all(
        ".cell", "els => els.map(e => e.querySelector('.value')?.textContent ?? '.')"
    )
    return "".join(digits)


def saved_game(page: Page, code: str) -> dict[str, Any]:
    """The player's grid as the page keeps it (per puzzle, in localStorage)."""
    data: dict[str, Any] = json.loads(page.evaluate(f"localStorage.getItem('sudokupool:game:{code}')"))
    return data


def enter(page: Page, name: str, digit: int) -> None:
    cell(page, name).click()
    page.keyboard.press(str(digit))


def freeze_clock(page: Page) -> None:
    """Stop the page's clock, so the timer shows only the time a test lets pass with ``run_for``."""
    page.clock.install(time=START)
    page.clock.pause_at(START + 1000)


def most_removals(records: list[Record]) -> Record:
    """The puzzle whose solve path has the most removal-only steps (the pool's hardest, in practice)."""
    return max(records, key=lambda r: (sum(not s["placements"] for s in r["solve_path"]), r["canonical_id"]))


def first_with(records: list[Record], test: Any) -> Record:
    return next(r for r in records if test(r))


# ---- tests -------------------------------------------------------------------------------------------


def test_page_loads_a_puzzle_with_its_details(page: Page, records: list[Record]) -> None:
    record = records[0]
    # The browser takes the record gzip-coded, as the server holds it; the page reads it as usual.
    with page.expect_response(re.compile(r"/api/puzzles/[0-9A-Z]+$")) as answer:
        open_puzzle(page, record["canonical_id"])
    assert answer.value.headers["content-encoding"] == "gzip"
    assert answer.value.json()["canonical_id"] == record["canonical_id"]

    assert shown_digits(page) == record["puzzle"]
    assert len(cells_with(page, "given")) == record["clue_count"]
    assert cell(page, "r1c1").get_attribute("role") == "gridcell"
    given = next(i for i, ch in enumerate(record["puzzle"]) if ch != ".")
    expect(cell(page, name_of(given))).to_have_accessible_name(f"{name_of(given)}, given {record['puzzle'][given]}")
    details = page.locator("#details")
    expect(details.locator('[data-field="difficulty"]')).to_have_text(record["difficulty"])
    expect(details.locator('[data-field="clues"]')).to_have_text(str(record["clue_count"]))
    expect(details.locator('[data-field="hardest-technique"]')).to_have_text(record["hardest_technique"])
    expect(details.locator('[data-field="techniques"]')).to_have_text(", ".join(record["techniques"]))
    stars = details.locator('[data-field="stars"]')
    expect(stars).to_have_text(f"{'★' * record['stars']}{'☆' * (5 - record['stars'])}{record['stars']} of 5 stars")
    expect(stars.locator('[aria-hidden="true"]')).to_have_text(f"{'★' * record['stars']}{'☆' * (5 - record['stars'])}")
    expect(page.locator("#share-code")).to_have_text(record["canonical_id"])
    href = f"/api/puzzles/{record['canonical_id']}/image?variant=solution"
    expect(page.locator("#download-solution")).to_have_attribute("href", href)
    expect(page.locator("#pool-stats")).to_contain_text(f"The pool holds {len(records)} puzzles")


def test_typing_digits_flags_a_conflict(page: Page, records: list[Record]) -> None:
    record = records[1]
    puzzle = record["puzzle"]
    open_puzzle(page, record["canonical_id"])
    # An empty cell, and a digit a given in its row already holds.
    empty = next(
        i
        for i, ch in enumerate(puzzle)
        if ch == "." and any(puzzle[j] != "." for j in range(i // 9 * 9, i // 9 * 9 + 9))
    )
    row = range(empty // 9 * 9, empty // 9 * 9 + 9)
    clash = next(j for j in row if puzzle[j] != ".")
    target = cell(page, name_of(empty))

    enter(page, name_of(empty), int(puzzle[clash]))

    expect(target.locator(".shown")).to_have_text(puzzle[clash])
    expect(target).to_have_class(re.compile(r"\bconflict\b"))
    expect(target).to_have_attribute("aria-invalid", "true")
    expect(cell(page, name_of(clash))).to_have_class(re.compile(r"\bconflict\b"))
    assert cells_with(page, "conflict") >= {name_of(empty), name_of(clash)}

    page.keyboard.press("Backspace")
    expect(target.locator(".shown")).to_have_text("")
    assert cells_with(page, "conflict") == set()

    # Pencil marks: P switches the mode; digits then toggle small marks.
    page.keyboard.press("p")
    expect(page.locator("#pencil")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("3")
    page.locator('.pad .digits button[data-digit="7"]').click()
    expect(target.locator(".marks")).to_have_text("37")
    page.locator("#pencil").click()
    page.locator('.pad .digits button[data-digit="5"]').click()
    expect(target.locator(".shown")).to_have_text("5")

    # The arrows move the selection (and the focus) to the next cell.
    target.focus()
    page.keyboard.press("ArrowDown" if empty < 72 else "ArrowUp")
    below = name_of(empty + 9 if empty < 72 else empty - 9)
    expect(cell(page, below)).to_have_attribute("aria-selected", "true")
    expect(cell(page, below)).to_be_focused()


def test_hint_highlights_the_step_it_explains(page: Page, records: list[Record]) -> None:
    record = first_with(records, lambda r: r["solve_path"][0]["houses"])
    step = record["solve_path"][0]
    open_puzzle(page, record["canonical_id"])

    page.locator("#hint").click()

    expect(page.locator("#hint-text")).to_have_text(step["explanation"])
    expect(page.locator("#hint-technique")).to_contain_text(step["technique"])
    assert cells_with(page, "hint-cell") == set(step["cells"])
    assert cells_with(page, "hint-place") == {p["cell"] for p in step["placements"]}
    assert cells_with(page, "hint-house") == set().union(*(house(h) for h in step["houses"]))
    assert cells_with(page, "hint-elim") == set()

    # Once the player makes that placement, the hint moves on to the next step.
    for placement in step["placements"]:
        enter(page, placement["cell"], placement["digit"])
    expect(page.locator("#hint-panel")).to_be_hidden()
    page.keyboard.press("h")
    game = saved_game(page, record["canonical_id"])
    expected = expected_hint(record, [int(d) for d in game["values"]], game["marks"], set())
    assert expected is not None and expected > 0
    expect(page.locator("#hint-text")).to_have_text(record["solve_path"][expected]["explanation"])

    # A wrong digit comes first: the hint names the mistake instead of a step.
    wrong = next(i for i, d in enumerate(game["values"]) if d == "0")
    digit = next(d for d in range(1, 10) if str(d) != record["solution"][wrong])
    enter(page, name_of(wrong), digit)
    page.locator("#hint").click()
    expect(page.locator("#hint-technique")).to_have_text("Fix a mistake first")
    assert cells_with(page, "wrong") == {name_of(wrong)}


def test_following_every_hint_solves_the_puzzle(page: Page, records: list[Record]) -> None:
    record = most_removals(records)
    path = record["solve_path"]
    assert any(not s["placements"] for s in path), "the test pool should hold a puzzle with removal steps"
    code = record["canonical_id"]
    open_puzzle(page, code)
    seen: set[int] = set()
    removal_hints = 0

    for _ in range(len(path) + 1):
        if page.locator("#success").is_visible():
            break
        game = saved_game(page, code)
        expected = expected_hint(record, [int(d) for d in game["values"]], game["marks"], seen)
        assert expected is not None
        step = path[expected]
        page.locator("#hint").click()
        expect(page.locator("#hint-text")).to_have_text(step["explanation"])
        shown = cells_with_each(page, "hint-cell", "hint-place", "hint-elim", "hint-house")
        assert shown["hint-cell"] == set(step["cells"])
        assert shown["hint-place"] == {p["cell"] for p in step["placements"]}
        assert shown["hint-elim"] == {e["cell"] for e in step["eliminations"]}
        assert shown["hint-house"] == set().union(set(), *(house(h) for h in step["houses"]))
        if not step["placements"]:
            seen.add(expected)
            removal_hints += 1
        page.locator("#hint-apply").click()

    expect(page.locator("#success")).to_contain_text("Solved in")
    assert shown_digits(page) == record["solution"]
    assert removal_hints > 0


def test_entering_the_solution_shows_success(contexts: Contexts, records: list[Record], shots: Path) -> None:
    page = contexts.page()
    record = records[2]
    freeze_clock(page)
    open_puzzle(page, record["canonical_id"])
    empties = [i for i, ch in enumerate(record["puzzle"]) if ch == "."]

    for i in empties[:-1]:
        enter(page, name_of(i), int(record["solution"][i]))
    expect(page.locator("#success")).to_be_hidden()
    page.clock.run_for(465_000)
    last = empties[-1]
    cell(page, name_of(last)).click()
    page.locator(f'.pad .digits button[data-digit="{record["solution"][last]}"]').click()

    expect(page.locator("#success")).to_be_visible()
    expect(page.locator("#success")).to_have_text("Solved in 07:45. Well done!")
    expect(page.locator("#grid")).to_have_class(re.compile(r"\bsolved\b"))
    expect(page.locator(".pad .digits button").first).to_be_disabled()
    expect(page.locator("#hint")).to_be_disabled()
    assert shown_digits(page) == record["solution"]
    # A reload keeps the finished game.
    page.reload()
    expect(page.locator("#success")).to_be_visible()
    page.screenshot(path=shots / "web-solved.png")


def test_check_and_reveal_use_the_solution(page: Page, records: list[Record]) -> None:
    record = records[3]
    open_puzzle(page, record["canonical_id"])
    empties = [i for i, ch in enumerate(record["puzzle"]) if ch == "."]
    right, wrong = empties[0], empties[1]
    enter(page, name_of(right), int(record["solution"][right]))
    enter(page, name_of(wrong), next(d for d in range(1, 10) if str(d) != record["solution"][wrong]))

    page.locator("#check").click()
    expect(page.locator("#message")).to_contain_text("1 entry does not match")
    assert cells_with(page, "wrong") == {name_of(wrong)}

    page.locator("#reveal-cell").click()  # the wrong cell is still selected
    expect(cell(page, name_of(wrong)).locator(".shown")).to_have_text(record["solution"][wrong])
    assert cells_with(page, "wrong") == set()

    page.locator("#reveal-all").click()
    expect(page.locator("#reveal-all")).to_have_text("Sure? Reveal all")
    page.locator("#reveal-all").click()
    expect(page.locator("#success")).to_contain_text("solution is revealed")
    assert shown_digits(page) == record["solution"]


def test_share_link_opens_the_same_puzzle(contexts: Contexts, records: list[Record]) -> None:
    page = contexts.page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    with page.expect_response(re.compile(r"/api/puzzles/random$")):
        page.goto("/")
    with page.expect_response(re.compile(r"/api/puzzles/random\?difficulty=easy$")) as answer:
        page.get_by_role("button", name="Easy", exact=True).click()
    assert answer.value.headers["content-encoding"] == "gzip"
    code = answer.value.json()["canonical_id"]
    expect(page.locator("#share-code")).to_have_text(code)
    expect(page.locator("#status-difficulty")).to_have_text("Easy")
    assert page.url == f"{contexts.server.url}/p/{code}"
    link = page.locator("#share-link").input_value()
    assert link == f"{contexts.server.url}/p/{code}"
    page.locator("#copy-link").click()
    expect(page.locator("#copy-link")).to_have_text("Copied ✓")
    assert page.evaluate("navigator.clipboard.readText()") == link
    puzzle = shown_digits(page)
    record = next(r for r in records if r["canonical_id"] == code)
    assert puzzle == record["puzzle"]

    fresh = contexts.page(viewport=PHONE)
    fresh.goto(link)
    expect(fresh.locator("#share-code")).to_have_text(code)
    assert shown_digits(fresh) == puzzle

    # The query form works too, in any case, and the address becomes the share link.
    other = contexts.page()
    other.goto(f"/?id={code.lower()}")
    expect(other.locator("#share-code")).to_have_text(code)
    assert other.url == link


def test_unknown_code_shows_a_clear_message(page: Page) -> None:
    page.goto("/p/ZZZZZZZZZZZZZ")
    expect(page.locator("#error")).to_be_visible()
    expect(page.locator("#error-text")).to_contain_text("No puzzle has the code “ZZZZZZZZZZZZZ”")
    expect(page.locator("#grid")).to_be_hidden()

    page.locator("#error-retry").click()
    expect(page.locator("#error")).to_be_hidden()
    expect(page.locator("#grid")).to_be_visible()
    assert re.fullmatch(r".*/p/[0-9A-Z]{13}", page.url)


@pytest.mark.parametrize("written", [pytest.param("%E0%A4%A", id="cut-utf-8"), pytest.param("%ZZ", id="not-hex")])
def test_a_malformed_link_shows_the_message_and_the_button(page: Page, written: str) -> None:
    page.goto(f"/p/{written}")
    expect(page.locator("#error")).to_be_visible()
    expect(page.locator("#error-text")).to_contain_text(f"No puzzle has the code “{written}”")
    expect(page.locator("#main")).to_have_attribute("aria-busy", "false")

    page.locator("#error-retry").click()
    expect(page.locator("#grid")).to_be_visible()
    assert re.fullmatch(r".*/p/[0-9A-Z]{13}", page.url)


def test_server_gone_mid_game_keeps_the_game(page: Page, records: list[Record]) -> None:
    record = records[4]
    open_puzzle(page, record["canonical_id"])
    empty = record["puzzle"].index(".")
    enter(page, name_of(empty), int(record["solution"][empty]))
    page.route("**/api/**", lambda route: route.abort())

    page.get_by_role("button", name="Hard", exact=True).click()
    expect(page.locator("#error-text")).to_contain_text("Could not reach the server")
    expect(page.locator("#error-text")).to_contain_text("Your current game is still here")
    expect(page.locator("#share-code")).to_have_text(record["canonical_id"])
    page.locator("#check").click()  # the solution was fetched with the puzzle
    expect(page.locator("#message")).to_contain_text("Everything so far is correct")


def test_a_set_kept_for_offline_play_is_played_while_the_server_is_gone(page: Page, records: list[Record]) -> None:
    by_id = {r["canonical_id"]: r for r in records}
    open_puzzle(page, records[0]["canonical_id"])
    page.locator("#set-count").select_option("10")
    page.get_by_role("button", name="Keep for offline play").click()
    expect(page.locator("#set-status")).to_contain_text("10 puzzles kept in this browser")
    kept = page.evaluate("JSON.parse(localStorage.getItem('sudokupool:offline-set')).map((r) => r.canonical_id)")
    assert len(set(kept)) == 10 and set(kept) <= set(by_id)
    page.route("**/api/**", lambda route: route.abort())

    page.get_by_role("button", name="Any", exact=True).click()
    expect(page.locator("#status-code")).to_have_text(kept[0])
    expect(page.locator("#message")).to_contain_text("Offline: playing a kept puzzle (9 left)")
    page.get_by_role("button", name="Any", exact=True).click()
    expect(page.locator("#status-code")).to_have_text(kept[1])
    # The links to the pictures are there for an <img>.
    expect(page.locator("#daily-image")).to_have_attribute("href", "/api/v2/puzzles/daily/image")


@pytest.mark.parametrize(
    ("viewport", "scheme", "name"),
    [
        pytest.param(DESKTOP, "light", "web-desktop-light.png", id="desktop-light"),
        pytest.param(DESKTOP, "dark", "web-desktop-dark.png", id="desktop-dark"),
        pytest.param(PHONE, "light", "web-phone-light.png", id="phone-light"),
        pytest.param(PHONE, "dark", "web-phone-dark.png", id="phone-dark"),
    ],
)
def test_layout_in_both_schemes_and_sizes(
    contexts: Contexts, records: list[Record], shots: Path, viewport: dict[str, int], scheme: str, name: str
) -> None:
    record = most_removals(records)
    page = contexts.page(viewport=viewport, scheme=scheme, scale=2 if viewport is PHONE else 1)
    freeze_clock(page)
    open_puzzle(page, record["canonical_id"])
    # A game under way: every candidate pencilled, hints followed up to the first step that removes one.
    page.locator("#automarks").click()
    for _ in record["solve_path"]:
        page.locator("#hint").click()
        if page.locator("#hint-legend .key.hint-elim").count():
            break
        page.locator("#hint-apply").click()
    page.clock.run_for(754_000)
    expect(page.locator(".cell.hint-elim .marks .x").first).to_be_visible()
    expect(page.locator("#timer")).to_have_text("12:34")

    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (background == "rgb(16, 19, 26)") == (scheme == "dark")
    # Nothing sticks out sideways, and the grid fits the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    box = page.locator("#grid").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    # A phone shows its first screen (the board); a desktop the whole page.
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=shots / name, full_page=viewport is DESKTOP)


# ---- the harness ---------------------------------------------------------------------------------------

#: A document of the site's origin that is quick to load: storage, cookies and permissions are the origin's.
ORIGIN_PAGE = "/api/v1/health"


def test_a_tests_first_page_holds_nothing_the_test_before_left(
    browser: Browser, web_server: Server, shared: Shared
) -> None:
    probe = f"/static/style.css?v=probe-{uuid.uuid4().hex}"  # cached for a year, at an address of this run's own

    def fetched(page: Page) -> int:
        """The bytes a fetch of ``probe`` took from the network (0: from the HTTP cache)."""
        size: int = page.evaluate(
            "async url => { await (await fetch(url)).text();"
            " const seen = performance.getEntriesByName(new URL(url, location).href);"
            " return seen[seen.length - 1].transferSize }",
            probe,
        )
        return size

    def next_test() -> tuple[Contexts, Page]:
        """A test's contexts as the fixture gives them, and its first page, on the origin."""
        shared.empty()
        contexts = Contexts(browser, web_server, shared)
        page = contexts.page()
        assert page.context is shared.context
        page.goto(ORIGIN_PAGE)
        return contexts, page

    before, page = next_test()
    page.evaluate("localStorage.setItem('left', 'behind'); document.cookie = 'left=behind; max-age=600'")
    page.context.grant_permissions(["clipboard-read"])
    assert fetched(page) > 0
    assert fetched(page) == 0, "the probe was not cached: the check below would not tell"
    before.close()

    after, page = next_test()
    assert page.evaluate("localStorage.getItem('left')") is None
    assert page.evaluate("document.cookie") == ""
    assert page.evaluate("navigator.permissions.query({name: 'clipboard-read'}).then(p => p.state)") == "prompt"
    assert fetched(page) > 0
    # A clock a test installs (the context's, in Playwright) does not stay for the next test.
    freeze_clock(page)
    assert abs(page.evaluate("Date.now()") / 1000 - time.time()) > 600
    after.close()
    after, page = next_test()
    assert abs(page.evaluate("Date.now()") / 1000 - time.time()) < 600
    # A test's second page is another device's: nothing of the first page's is there.
    page.evaluate("localStorage.setItem('mine', 'first')")
    other = after.page()
    assert other.context is not shared.context
    other.goto(ORIGIN_PAGE)
    assert other.evaluate("localStorage.getItem('mine')") is None
    after.close()
