"""Paste a puzzle into the page, in a real browser against the real server: a pool puzzle in another layout
plays with its code and the server's hints, any other is graded live and replays from its address, and a paste
that is no puzzle (or a busy server) is told under the field."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from sudokupool.sudoku.transform import random_transform
from tests.browser.test_play import cell, open_puzzle

pytestmark = pytest.mark.browser

Record = dict[str, Any]
# Not in any test pool: Sudoku Exchange's SE-rated sample (bench/data), as tests/api/test_engine.py grades it.
HARD = "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......"


def values_on_page(page: Page) -> str:
    digits: list[str] = page.eval_on_selector_all(
        ".cell", "els => els.map(e => e.querySelector('.value')?.textContent || '.')"
    )
    return "".join(digits)


def paste(page: Page, text: str) -> None:
    page.get_by_label("Any puzzle, row by row").fill(text)
    page.get_by_role("button", name="Play this puzzle").click()


def as_rows(grid: str) -> str:
    """A grid as people write one out: spaced digits, a rule between bands."""
    rows = [" ".join(grid[r * 9 : r * 9 + 9]) for r in range(9)]
    return "\n".join([*rows[0:3], "------+-------+------", *rows[3:6], "------+-------+------", *rows[6:9]])


def test_a_pool_puzzle_pasted_in_another_layout_plays_with_its_code_and_the_servers_hints(
    page: Page, records: list[Record], shots: Path
) -> None:
    record = records[5]
    move = random_transform(random.Random(8))
    grid, solution = move.apply(record["puzzle"]), move.apply(record["solution"])
    assert grid != record["puzzle"]
    page.goto("/")
    expect(page.locator(".grid .cell")).to_have_count(81)
    paste(page, as_rows(grid))

    expect(page).to_have_url(re.compile(re.escape(f"/?grid={grid}") + "$"))
    expect(page.locator("#message")).to_contain_text(f"Found in the pool ({record['difficulty']}, code")
    expect(page.locator("#status-code")).to_have_text(record["canonical_id"])
    assert values_on_page(page) == grid
    expect(page.locator("#share-link")).to_have_value(re.compile(re.escape(f"/?grid={grid}") + "$"))
    expect(page.locator("#share-images")).to_be_hidden()
    expect(page.get_by_label("Any puzzle, row by row")).to_have_value("")

    # The hint comes from the server, found from the board; applying it fills the pasted layout's digit.
    hints: list[str] = []
    page.on("request", lambda request: hints.append(request.url) if "/hint?" in request.url else None)
    page.get_by_role("button", name="Hint").click()
    expect(page.locator("#hint-technique")).to_contain_text("Next step: ")
    assert len(hints) == 1 and f"/api/v2/grids/{grid.replace('.', '0')}/hint?board=" in hints[0]
    page.screenshot(path=str(shots / "paste-pool.png"), full_page=True)
    before = values_on_page(page)
    page.get_by_role("button", name="Apply this step").click()
    expect(page.locator("#announce")).to_contain_text("Step applied")
    after = values_on_page(page)
    changed = [i for i in range(81) if before[i] != after[i]]
    assert changed and all(after[i] == solution[i] for i in changed)

    # A wrong entry is named first, as the API names it.
    empty = after.index(".")
    wrong = next(d for d in "123456789" if d != solution[empty])
    cell(page, f"r{empty // 9 + 1}c{empty % 9 + 1}").click()
    page.keyboard.press(wrong)
    page.get_by_role("button", name="Hint").click()
    expect(page.locator("#hint-technique")).to_have_text("Fix a mistake first")
    expect(cell(page, f"r{empty // 9 + 1}c{empty % 9 + 1}")).to_have_class(re.compile(r"\bwrong\b"))


def test_a_puzzle_the_pool_lacks_is_graded_and_its_address_plays_it_again(page: Page, records: list[Record]) -> None:
    open_puzzle(page, records[0]["canonical_id"])
    paste(page, f"{HARD.replace('.', '0')}  SE 7.2")
    expect(page.locator("#message")).to_contain_text("Graded: ", timeout=60_000)
    expect(page.locator("#status-code")).to_have_text("not in the pool")
    expect(page.locator("#share-code")).to_have_text("none: not in the pool")
    assert values_on_page(page) == HARD

    cell(page, "r1c2").click()
    page.keyboard.press("7")
    page.reload()
    expect(page.locator("#status-code")).to_have_text("not in the pool")
    assert values_on_page(page) == HARD[:1] + "7" + HARD[2:]  # the progress kept under the grid
    page.go_back()
    expect(page.locator("#status-code")).to_have_text(records[0]["canonical_id"])


def test_a_paste_that_is_no_puzzle_or_a_busy_server_is_told_under_the_field(
    page: Page, records: list[Record], shots: Path
) -> None:
    record = records[1]
    open_puzzle(page, record["canonical_id"])
    field, error = page.get_by_label("Any puzzle, row by row"), page.locator("#paste-error")
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/grids/" in request.url else None)

    paste(page, HARD[:80])  # read on the page: never sent
    expect(error).to_have_text("A puzzle has 81 cells; this one has 80.")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_be_focused()
    assert asked == []

    paste(page, "11" + "." * 79)
    expect(error).to_have_text(
        "This is not a puzzle that can be played: the givens clash: digit 1 appears twice in row 1 (r1c1, r1c2)."
    )
    paste(page, "." * 81)
    expect(error).to_contain_text("This puzzle has more than one solution")
    page.screenshot(path=str(shots / "paste-error.png"))

    def busy(route: Route) -> None:
        body = json.dumps({"error": "the server is busy with other grades and hints"})
        route.fulfill(status=503, headers={"Retry-After": "7", "Content-Type": "application/json"}, body=body)

    page.route("**/api/v2/grids/**", busy)
    paste(page, HARD)
    expect(error).to_have_text("The server is busy with other puzzles. Try again in 7 seconds.")
    # The game on the board never changed; a good paste clears the error.
    expect(page.locator("#status-code")).to_have_text(record["canonical_id"])
    page.unroute("**/api/v2/grids/**")
    paste(page, record["puzzle"])
    expect(page.locator("#message")).to_contain_text("Found in the pool")
    expect(error).to_be_empty()
    expect(field).not_to_have_attribute("aria-invalid", "true")
