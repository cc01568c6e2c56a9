"""The page's Daily button and technique picker, in a real browser against the real server."""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PHONE, Contexts
from tests.servers import Server

pytestmark = pytest.mark.browser

Record = dict[str, Any]


def shown_code(page: Page) -> str:
    code = page.locator("#status-code")
    expect(code).not_to_have_text("")
    text: str = code.inner_text()
    return text


def test_daily_loads_the_servers_puzzle_of_the_day(page: Page, web_server: Server) -> None:
    page.goto("/")
    shown_code(page)
    daily = httpx.get(f"{web_server.url}/api/v1/puzzles/daily").json()
    with page.expect_response(lambda r: r.url.endswith("/api/puzzles/daily")) as answer:
        page.get_by_role("button", name="Daily").click()
    assert answer.value.status == 200
    expect(page.locator("#status-code")).to_have_text(daily["canonical_id"])
    expect(page.locator("#message")).to_have_text("The puzzle of the day (UTC): everyone gets this one today.")
    assert page.url.endswith(f"/p/{daily['canonical_id']}")
    # The share link of the daily is the puzzle's own: it opens the same puzzle on any later day.
    expect(page.locator("#share-code")).to_have_text(daily["canonical_id"])


def test_the_picker_lists_the_pools_techniques_and_loads_one_that_needs_it(page: Page, records: list[Record]) -> None:
    used = Counter(t for r in records for t in r["techniques"])
    page.goto("/")
    picker = page.locator("#technique")
    # The placeholder, then every technique the pool uses, with its count, in the catalogue's order.
    expect(picker.locator("option")).to_have_count(1 + len(used))
    texts = picker.locator("option").all_inner_texts()
    assert texts[0] == "Technique…"
    assert {
        text.rsplit(" (", 1)[0]: int(text.rsplit(" (", 1)[1].rstrip(")").replace(",", "")) for text in texts[1:]
    } == used
    rare = min(used, key=lambda name: (used[name], name))
    for _ in range(3):
        with page.expect_response(lambda r: "/api/puzzles/random?technique=" in r.url) as answer:
            picker.select_option(rare)
        assert answer.value.status == 200
        record = answer.value.json()
        expect(page.locator("#status-code")).to_have_text(record["canonical_id"])
        assert rare in record["techniques"]
        expect(page.locator('#details [data-field="techniques"]')).to_contain_text(rare)
        expect(page.locator("#message")).to_have_text(f"This puzzle's solution needs {rare}.")
        # Back to its placeholder: the same technique can be picked again.
        expect(picker).to_have_value("")


def test_daily_and_the_picker_fit_a_phone(contexts: Contexts) -> None:
    page = contexts.page(viewport=PHONE)
    page.goto("/")
    shown_code(page)
    for locator in (page.get_by_role("button", name="Daily"), page.locator("#technique")):
        box = locator.bounding_box()
        assert box is not None
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        assert box["height"] >= 40  # a finger's target
