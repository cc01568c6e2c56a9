#!/usr/bin/env python3
"""Make the README's pictures of the web page (docs/images/web-*.png) from the demo pool.

    python scripts/screenshots.py [--out docs/images]

It starts ``sudokupool serve`` on the demo pool on a free loopback port, as the README's set-up does,
shows it to the page at the README's address (127.0.0.1:8000, which the share link shows), and drives
Debian's ``chromium`` with Playwright (the test extras), as ``tests/browser`` does. The
game shown is the demo pool's Expert puzzle whose first removal-only step is Locked Candidates, the
latest in its solve path (ties by share code): every candidate pencilled ("Auto marks"), hints
followed up to that step, the timer at 12:34. ``web-solved.png`` is the demo pool's first Easy puzzle,
solved in 07:45.

The pictures of the ways to show a puzzle elsewhere use the same first Easy puzzle: ``show-formats.png``
its PNG, WebP and SVG answers at 240 px side by side in one page; ``show-embed.png`` the embeddable player
in an iframe of another origin's page (a page the browser is handed, at ``HOST``: nothing is sent there),
two digits entered; ``show-print.png`` the print sheet of the pool's first six codes as the browser shows
it before printing.
"""

from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path
from typing import Any

import orjson
from playwright.sync_api import Page, expect, sync_playwright
from readme_examples import ROOT, demo_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
DESKTOP = {"width": 1180, "height": 900}
PHONE = {"width": 390, "height": 844}
SHOWN = "http://127.0.0.1:8000"  # where the README's set-up serves
START = 1_795_000_000_000  # the page's clock, in milliseconds since the epoch
HOST = "http://localhost:8080"  # the other site that shows the puzzle (answered by the browser itself)


def demo_records() -> list[dict[str, Any]]:
    export = sorted((ROOT / "snapshots").glob("pool-*.ndjson*"))[-1]
    opener: Any = gzip.open if export.suffix == ".gz" else open
    with opener(export, "rb") as lines:
        return [orjson.loads(line) for line in lines if line.strip()]


def first_removal(record: dict[str, Any]) -> tuple[int, str]:
    """The index and technique of the first solve-path step that only removes candidates."""
    for index, step in enumerate(record["solve_path"]):
        if not step["placements"]:
            return index, step["technique"]
    return -1, ""


def game_under_way(records: list[dict[str, Any]]) -> dict[str, Any]:
    experts = [r for r in records if r["difficulty"] == "Expert" and first_removal(r)[1].startswith("Locked")]
    return max(experts, key=lambda r: (first_removal(r)[0], r["canonical_id"]))


def open_page(browser: Any, url: str, viewport: dict[str, int], scheme: str, scale: float) -> Page:
    """A fresh page that sees the server at the README's address (its share link shows that)."""
    context = browser.new_context(
        base_url=SHOWN, viewport=viewport, color_scheme=scheme, device_scale_factor=scale, reduced_motion="reduce"
    )

    def forward(route: Any) -> None:
        route.fulfill(response=route.fetch(url=route.request.url.replace(SHOWN, url, 1)))

    context.route(f"{SHOWN}/**", forward)
    page: Page = context.new_page()
    page.set_default_timeout(20_000)
    page.clock.install(time=START)
    page.clock.pause_at(START + 1000)
    return page


def open_puzzle(page: Page, code: str) -> None:
    page.goto(f"/p/{code}")
    expect(page.locator("#status-code")).to_have_text(code)


def shoot_game(browser: Any, url: str, record: dict[str, Any], out: Path) -> None:
    for viewport, scheme, name in [
        (DESKTOP, "light", "web-desktop-light.png"),
        (DESKTOP, "dark", "web-desktop-dark.png"),
        (PHONE, "light", "web-phone-light.png"),
        (PHONE, "dark", "web-phone-dark.png"),
    ]:
        page = open_page(browser, url, viewport, scheme, 2 if viewport is PHONE else 1)
        open_puzzle(page, record["canonical_id"])
        page.locator("#automarks").click()
        for _ in record["solve_path"]:
            page.locator("#hint").click()
            if page.locator("#hint-legend .key.hint-elim").count():
                break
            page.locator("#hint-apply").click()
        page.clock.run_for(754_000)
        page.locator(".cell.hint-elim .marks .x").first.wait_for()
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=out / name, full_page=viewport is DESKTOP)
        page.context.close()
        print(f"{out / name}: {record['canonical_id']}, {viewport['width']}x{viewport['height']}, {scheme}")


def shoot_solved(browser: Any, url: str, record: dict[str, Any], out: Path) -> None:
    page = open_page(browser, url, DESKTOP, "light", 1)
    open_puzzle(page, record["canonical_id"])
    empties = [i for i, ch in enumerate(record["puzzle"]) if ch == "."]
    for i in empties[:-1]:
        page.locator(f'[data-cell="r{i // 9 + 1}c{i % 9 + 1}"]').click()
        page.keyboard.press(record["solution"][i])
    page.clock.run_for(465_000)
    last = empties[-1]
    page.locator(f'[data-cell="r{last // 9 + 1}c{last % 9 + 1}"]').click()
    page.keyboard.press(record["solution"][last])
    page.locator("#success").wait_for()
    page.screenshot(path=out / "web-solved.png")
    page.context.close()
    print(f"{out / 'web-solved.png'}: {record['canonical_id']}, solved")


def host_page(browser: Any, url: str, viewport: dict[str, int], body: str) -> Page:
    """A page of another site, at ``HOST``, whose HTML is ``body``; requests to ``SHOWN`` reach the server."""
    page = open_page(browser, url, viewport, "light", 1)
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A page elsewhere</title><style>'
        "body{font:16px/1.5 system-ui,sans-serif;margin:24px;color:#222}"
        "figure{display:inline-block;width:240px;margin:0 24px 0 0;vertical-align:top}"
        "figcaption{font:13px monospace;color:#555;overflow-wrap:anywhere}"
        f"</style></head><body>{body}</body></html>"
    )
    page.context.route(f"{HOST}/**", lambda route: route.fulfill(body=html, content_type="text/html; charset=utf-8"))
    page.goto(f"{HOST}/")
    return page


def shoot_show(browser: Any, url: str, record: dict[str, Any], codes: list[str], out: Path) -> None:
    code = record["canonical_id"]
    figures = "".join(
        f'<figure><img src="{SHOWN}/api/v2/puzzles/{code}/image?{query}" width="240" height="240" alt="">'
        f"<figcaption>?{query}</figcaption></figure>"
        for query in ("format=png&size=240", "format=webp&size=240&variant=solution", "format=svg&size=240")
    )
    page = host_page(browser, url, {"width": 860, "height": 380}, f"<h2>One puzzle, three formats</h2>{figures}")
    page.wait_for_function("[...document.images].every((img) => img.complete && img.naturalWidth > 0)")
    page.screenshot(path=out / "show-formats.png")
    page.context.close()
    print(f"{out / 'show-formats.png'}: {code}, PNG, WebP (solution) and SVG at 240 px")

    snippet = (
        f'<iframe src="{SHOWN}/embed/{code}" title="Sudoku puzzle {code}" width="380" height="540" '
        'style="border:0;max-width:100%" loading="lazy"></iframe>'
    )
    body = (
        "<h2>Puzzle of the week</h2><p>This week's puzzle is an easy one. Play it right here:</p>"
        f'<div style="display:inline-block;box-shadow:0 1px 6px rgb(0 0 0 / .25)">{snippet}</div>'
    )
    page = host_page(browser, url, {"width": 640, "height": 720}, body)
    frame = page.frame_locator("iframe")
    expect(frame.locator("#status-code")).to_have_text(code)
    empties = [i for i, ch in enumerate(record["puzzle"]) if ch == "."]
    for i in empties[:2]:
        frame.locator(f'[data-cell="r{i // 9 + 1}c{i % 9 + 1}"]').click()
        frame.locator(f'.pad .digits button[data-digit="{record["solution"][i]}"]').click()
    page.clock.run_for(83_000)
    page.screenshot(path=out / "show-embed.png")
    page.context.close()
    print(f"{out / 'show-embed.png'}: {code}, embedded in {HOST}")

    page = open_page(browser, url, {"width": 900, "height": 1160}, "light", 1)
    page.goto(f"/print?ids={','.join(codes)}")
    page.screenshot(path=out / "show-print.png")
    page.context.close()
    print(f"{out / 'show-print.png'}: /print?ids={','.join(codes)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="where the pictures go")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    records = demo_records()
    easy = min((r for r in records if r["difficulty"] == "Easy"), key=lambda r: r["canonical_id"])
    with demo_server() as port, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            url = f"http://127.0.0.1:{port}"
            shoot_game(browser, url, game_under_way(records), out)
            shoot_solved(browser, url, easy, out)
            shoot_show(browser, url, easy, sorted(r["canonical_id"] for r in records)[:6], out)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
