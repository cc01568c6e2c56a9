"""The print sheet's HTML and its errors (its PDF is printed by Chromium in tests/browser/test_show.py)."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from typing import Any

import httpx
import pytest

from sudokupool.api.computed import BUSY, TOO_LONG
from sudokupool.work import WorkBudgetExceeded, WorkQueueFull

pytestmark = pytest.mark.anyio

SVG = re.compile(r"<svg .*?</svg>", re.DOTALL)


def sheets(html: str) -> list[tuple[str, list[str], list[str]]]:
    """Each sheet as (class, codes in order, the SVGs' labels)."""
    out = []
    for kind, body in re.findall(r'<section class="sheet (\w+)">(.*?)</section>', html, re.DOTALL):
        codes = re.findall(r'<span class="code">([^<]+)</span>', body)
        labels = [ET.fromstring(svg).attrib["aria-label"] for svg in SVG.findall(body)]
        out.append((kind, codes, labels))
    return out


@pytest.mark.parametrize("count", [1, 6, 7, 12])
async def test_codes_print_six_to_a_sheet_then_their_answers(
    client: httpx.AsyncClient, records: list[dict[str, Any]], count: int
) -> None:
    codes = [r["canonical_id"] for r in records[:count]]
    response = await client.get("/print", params={"ids": ",".join(codes)})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=3600"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    groups = [codes[i : i + 6] for i in range(0, count, 6)]
    expected = [("puzzles", g, ["Sudoku puzzle"] * len(g)) for g in groups]
    expected += [("answers", g, ["Sudoku solution"] * len(g)) for g in groups]
    assert sheets(response.text) == expected
    numbers = re.findall(r'<span class="number">(\d+)</span>', response.text)
    assert numbers == [str(n) for n in range(1, count + 1)] * 2
    difficulties = re.findall(r'<span class="difficulty">([^<]+)</span>', response.text)
    assert difficulties == [r["difficulty"] for r in records[:count]] * 2
    # Its one stylesheet, versioned; no script.
    assert re.search(r'<link rel="stylesheet" href="/static/print\.css\?v=[0-9a-f]{12}">', response.text)
    assert "<script" not in response.text


async def test_screen_readers_get_each_grid_as_a_table_of_its_digits_instead_of_the_picture(
    client: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    chosen = records[:2]
    response = await client.get("/print", params={"ids": ",".join(r["canonical_id"] for r in chosen)})
    html = response.text
    # Every picture is hidden from screen readers; a table of its digits stands beside it.
    assert html.count('<div class="picture" aria-hidden="true"><svg ') == 4
    tables = re.findall(r'<div class="sr-only"><table><caption>(.*?)</caption>(.*?)</table></div>', html, re.DOTALL)
    expected = [(f"Puzzle {n}, row by row", r["puzzle"]) for n, r in enumerate(chosen, 1)]
    expected += [(f"Answer {n}, row by row", r["solution"]) for n, r in enumerate(chosen, 1)]
    assert [caption for caption, _ in tables] == [caption for caption, _ in expected]
    for (_, table), (_, grid) in zip(tables, expected, strict=True):
        heads = re.findall(r'<th scope="(row|col)">([^<]+)</th>', table)
        assert heads == [("col", f"Column {c}") for c in range(1, 10)] + [("row", f"Row {r}") for r in range(1, 10)]
        cells = re.findall(r"<td>([^<]+)</td>", table)
        assert cells == [ch if ch != "." else "empty" for ch in grid]


async def test_codes_are_read_as_the_api_reads_them(client: httpx.AsyncClient, records: list[dict[str, Any]]) -> None:
    code = records[2]["canonical_id"]
    response = await client.get("/print", params={"ids": f" {code.lower()} "})
    assert response.status_code == 200
    assert sheets(response.text)[0][1] == [code]


async def test_a_random_sheet_has_the_count_asked_of_the_difficulty_asked(
    client: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    by_code = {r["canonical_id"]: r for r in records}
    response = await client.get("/print", params={"difficulty": "EASY", "count": "3"})
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    (puzzles, codes, _), (answers, again, _) = sheets(response.text)
    assert (puzzles, answers) == ("puzzles", "answers")
    assert codes == again and len(set(codes)) == 3
    assert {by_code[c]["difficulty"] for c in codes} == {"Easy"}


async def test_a_seed_prints_the_same_sheet_again(client: httpx.AsyncClient) -> None:
    query = {"difficulty": "medium", "count": "5", "seed": "31337"}
    first = await client.get("/print", params=query)
    second = await client.get("/print", params=query)

    assert first.status_code == 200
    assert first.headers["cache-control"].startswith("public, max-age=")
    assert sheets(first.text)[0][1] == sheets(second.text)[0][1]
    set_ = (await client.get("/api/v1/puzzles", params=query)).json()
    assert sheets(first.text)[0][1] == [p["canonical_id"] for p in set_["puzzles"]]


async def test_a_random_sheet_links_to_itself_with_its_seed(client: httpx.AsyncClient) -> None:
    response = await client.get("/print", params={"count": "4"})

    link = re.search(r'The same sheet again: <a href="([^"]+)"', response.text)
    assert link is not None
    again = await client.get(html.unescape(link.group(1)))
    assert again.headers["cache-control"].startswith("public")
    assert sheets(again.text)[0][1] == sheets(response.text)[0][1]


async def test_no_parameters_give_six_random_puzzles(client: httpx.AsyncClient) -> None:
    response = await client.get("/print")
    assert response.status_code == 200
    assert len(set(sheets(response.text)[0][1])) == 6


@pytest.mark.parametrize(
    ("query", "status", "error"),
    [
        pytest.param("ids=", 400, "ids must be puzzle codes separated by commas, with none empty", id="empty"),
        pytest.param("ids=A,,B", 400, "ids must be puzzle codes separated by commas, with none empty", id="gap"),
        pytest.param("ids=" + ",".join(["X"] * 13), 400, "at most 12 puzzles fit a print sheet, got 13", id="13"),
        pytest.param("ids=NOSUCHPUZZLE0", 404, "no puzzle has the code NOSUCHPUZZLE0", id="unknown"),
        pytest.param("ids=NOPE1,NOPE2", 404, "no puzzle has the codes NOPE1, NOPE2", id="unknowns"),
        pytest.param("ids=X&count=2", 400, "give either ids, or difficulty, count and seed, not both", id="both"),
        pytest.param("count=0", 400, "count must be a whole number from 1 to 12", id="count-0"),
        pytest.param("count=13", 400, "count must be a whole number from 1 to 12", id="count-13"),
        pytest.param("count=two", 400, "count must be a whole number from 1 to 12", id="count-word"),
        pytest.param("count=", 400, "count must be a whole number from 1 to 12", id="count-empty"),
        pytest.param("seed=", 400, "seed must be a whole number from 0 to 9007199254740991", id="seed-empty"),
        pytest.param("seed=-2", 400, "seed must be a whole number from 0 to 9007199254740991", id="seed-negative"),
        pytest.param(
            "difficulty=insane",
            400,
            "difficulty must be one of easy, medium, hard, expert (or empty for any)",
            id="diff",
        ),
    ],
)
async def test_bad_input_is_an_error_saying_what_is_allowed(
    client: httpx.AsyncClient, records: list[dict[str, Any]], query: str, status: int, error: str
) -> None:
    response = await client.get(f"/print?{query}")
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": error}


async def test_a_known_code_beside_unknown_ones_is_not_named(
    client: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    code = records[0]["canonical_id"]
    response = await client.get("/print", params={"ids": f"{code},NOSUCHPUZZLE0"})
    assert response.json() == {"error": "no puzzle has the code NOSUCHPUZZLE0"}


BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"


@pytest.mark.parametrize(
    ("query", "status", "text"),
    [
        pytest.param("ids=NOPE", 404, "No puzzle has the code NOPE.", id="unknown"),
        pytest.param("count=13", 400, "Count must be a whole number from 1 to 12.", id="count"),
        pytest.param("ids=%3Cb%3E", 404, "No puzzle has the code &lt;b&gt;.", id="escaped"),
    ],
)
async def test_a_browser_gets_an_error_as_a_small_page(
    client: httpx.AsyncClient, query: str, status: int, text: str
) -> None:
    response = await client.get(f"/print?{query}", headers={"accept": BROWSER})
    assert response.status_code == status
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["vary"] == "Accept"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert f"<p>{text}</p>" in response.text
    assert '<a href="/print">' in response.text and '<a href="/">' in response.text


@pytest.mark.parametrize(
    ("refusal", "text"),
    [
        pytest.param(WorkQueueFull(7), BUSY, id="queue-full"),
        pytest.param(WorkBudgetExceeded(10.0, 7), TOO_LONG, id="past-its-budget"),
    ],
)
async def test_a_browser_gets_a_busy_work_pool_as_a_small_page_that_says_when_to_retry(
    client: httpx.AsyncClient,
    records: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    refusal: Exception,
    text: str,
) -> None:
    async def refuse(*args: object, **kwargs: object) -> bytes:
        raise refusal

    runtime = client._transport.app.runtime  # type: ignore[attr-defined]
    monkeypatch.setattr(runtime.work, "submit", refuse)
    url = f"/print?ids={records[0]['canonical_id']}"
    page = await client.get(url, headers={"accept": BROWSER})
    assert page.status_code == 503
    assert page.headers["retry-after"] == "7"
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["cache-control"] == "no-store"
    assert f"<p>{html.escape(text[:1].upper() + text[1:])}.</p>" in page.text
    error = await client.get(url, headers={"accept": "application/json"})
    assert (error.status_code, error.headers["retry-after"], error.json()) == (503, "7", {"error": text})


@pytest.mark.parametrize(
    "accept",
    [
        pytest.param("application/json", id="json"),
        pytest.param("*/*", id="anything"),
        pytest.param("text/html;q=0.5, application/json", id="json-preferred"),
    ],
)
async def test_a_client_that_asks_for_json_or_anything_gets_json(client: httpx.AsyncClient, accept: str) -> None:
    response = await client.get("/print?ids=NOPE", headers={"accept": accept})
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.headers["vary"] == "Accept"
    assert response.json() == {"error": "no puzzle has the code NOPE"}


@pytest.mark.parametrize(
    ("accept", "html"),
    [
        pytest.param(BROWSER, True, id="browser"),
        pytest.param("text/html", True, id="html"),
        pytest.param("text/*", True, id="any-text"),
        pytest.param("", False, id="none"),
        pytest.param("*/*", False, id="anything"),
        pytest.param("application/json, text/html;q=0.9", False, id="json-first"),
        pytest.param("text/html;q=0", False, id="html-refused"),
        pytest.param("text/html;q=bad", False, id="bad-q"),
    ],
)
def test_prefers_html(accept: str, html: bool) -> None:
    from sudokupool.web.printsheet import prefers_html

    assert prefers_html(accept) is html
