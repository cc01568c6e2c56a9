"""The embeddable player inside another origin's page, the Share panel's snippet, and the print sheet as a PDF.

The host page is served by a second HTTP server on another loopback port: another origin, as a site that
embeds the player would be. The print sheet goes through Chromium's own ``--print-to-pdf`` (its default
paper, US Letter) and Playwright's ``page.pdf`` on A4; poppler's ``pdfinfo`` and ``pdftotext`` (Debian's
``poppler-utils``) count the pages and read the codes back.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Frame, Page, expect

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, Contexts
from tests.servers import Server

pytestmark = pytest.mark.browser

Record = dict[str, Any]


class HostPages:
    """Another origin: serves ``/`` as a page whose body is ``self.body`` (set by the test)."""

    def __init__(self) -> None:
        self.body = ""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                data = f"<!doctype html><html><body><h1>A blog</h1>{outer.body}</body></html>".encode()
                self.send_response(200)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def host() -> Iterator[HostPages]:
    pages = HostPages()
    yield pages
    pages.close()


def framed(page: Page, host: HostPages, src: str) -> Frame:
    """Open the host page with an iframe of ``src`` and return that frame once it has loaded."""
    host.body = f'<iframe id="player" src="{src}" width="380" height="540" style="border:0"></iframe>'
    page.goto(host.url)
    handle = page.locator("#player").element_handle()
    assert handle is not None
    frame = handle.content_frame()
    assert frame is not None
    frame.wait_for_load_state()
    return frame


def test_the_player_plays_inside_another_origins_page(
    contexts: Contexts, web_server: Server, host: HostPages, records: list[Record], shots: Path
) -> None:
    page = contexts.page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    record = records[11]
    frame = framed(page, host, f"{web_server.url}/embed/{record['canonical_id']}")
    assert host.url.rstrip("/") != web_server.url  # another origin (another port)
    cells = frame.locator(".cell")
    expect(cells).to_have_count(81)
    expect(frame.locator("#status-code")).to_have_text(record["canonical_id"])
    expect(frame.locator("#status-code")).to_have_attribute("href", f"/p/{record['canonical_id']}")
    shown = frame.eval_on_selector_all(".cell", "els => els.map(e => e.querySelector('.value')?.textContent ?? '.')")
    assert "".join(shown) == record["puzzle"]
    # No site chrome: no header, difficulty buttons, side cards or footer.
    for selector in (".top", "[data-difficulty]", ".side", ".foot", "#hint"):
        assert frame.locator(selector).count() == 0, selector

    # Play: a wrong digit, Check marks it; the right one, and Undo takes it back.
    empty = record["puzzle"].index(".")
    right = record["solution"][empty]
    wrong = next(d for d in "123456789" if d != right)
    target = cells.nth(empty)
    target.click()
    frame.locator(f'.pad .digits button[data-digit="{wrong}"]').click()
    expect(target.locator(".shown")).to_have_text(wrong)
    frame.locator("#check").click()
    expect(target).to_have_class(re.compile(r"\bwrong\b"))
    expect(frame.locator("#message")).to_contain_text("1 entry does not match")
    target.click()
    frame.locator(f'.pad .digits button[data-digit="{right}"]').click()
    expect(target.locator(".shown")).to_have_text(right)
    expect(target).not_to_have_class(re.compile(r"\bwrong\b"))
    frame.locator("#undo").click()
    expect(target.locator(".shown")).to_have_text(wrong)
    # The keyboard works inside the frame too.
    target.focus()
    page.keyboard.press("Backspace")
    expect(target.locator(".shown")).to_have_text("")
    assert not [text for text in console if "frame" in text.lower() and "refused" in text.lower()]
    page.screenshot(path=shots / "embed-in-host.png")


def test_the_full_page_still_refuses_to_be_framed(
    contexts: Contexts, web_server: Server, host: HostPages, records: list[Record]
) -> None:
    # The control: the same check that lets the player in keeps the full page out (frame-ancestors 'none').
    page = contexts.page()
    frame = framed(page, host, f"{web_server.url}/p/{records[11]['canonical_id']}")
    # The grid's element is in the page's HTML itself: a framed page would show it without any script.
    assert frame.locator("#grid").count() == 0
    assert not frame.url.startswith(web_server.url)


def test_an_unknown_code_in_the_player_says_so(contexts: Contexts, web_server: Server) -> None:
    page = contexts.page()
    page.goto(f"{web_server.url}/embed/NOSUCHPUZZLE0")
    expect(page.locator("#error-text")).to_contain_text("No puzzle has the code")


@pytest.mark.parametrize("written", [pytest.param("%E0%A4%A", id="cut-utf-8"), pytest.param("%ZZ", id="not-hex")])
def test_a_malformed_link_in_the_player_shows_the_message_and_the_button(
    contexts: Contexts, web_server: Server, written: str
) -> None:
    page = contexts.page()
    page.goto(f"{web_server.url}/embed/{written}")
    expect(page.locator("#error-text")).to_contain_text(f"No puzzle has the code “{written}”")
    expect(page.locator("#error-retry")).to_be_visible()


def test_the_share_panel_gives_the_embed_snippet(contexts: Contexts, web_server: Server, records: list[Record]) -> None:
    page = contexts.page()
    code = records[3]["canonical_id"]
    page.goto(f"/p/{code}")
    snippet = page.locator("#share-embed")
    expect(snippet).to_have_value(re.compile(re.escape(f'src="{web_server.url}/embed/{code}"')))
    value = snippet.input_value()
    assert value.startswith("<iframe ") and value.endswith("</iframe>")
    expect(page.locator("#print-sheet")).to_have_attribute("href", f"/print?ids={code}")
    expect(page.locator("#download-svg")).to_have_attribute(
        "href", f"/api/puzzles/{code}/image?variant=puzzle&format=svg"
    )


# ---- the print sheet -------------------------------------------------------------------------------


def pdf_text(pdf: Path, page: int | None = None) -> str:
    pages = [] if page is None else ["-f", str(page), "-l", str(page)]
    # -layout keeps the page's rows together: the codes of a row of grids come in reading order.
    return subprocess.run(
        ["pdftotext", "-layout", *pages, str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout


def pdf_pages(pdf: Path) -> tuple[int, str]:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    pages = re.search(r"^Pages:\s+(\d+)$", info, re.MULTILINE)
    size = re.search(r"^Page size:\s+(.+)$", info, re.MULTILINE)
    assert pages is not None and size is not None
    return int(pages.group(1)), size.group(1)


@pytest.fixture(scope="module")
def poppler() -> None:
    missing = [tool for tool in ("pdfinfo", "pdftotext") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"the print sheet tests need {', '.join(missing)}: apt-get install -y poppler-utils")


def check_sheet(pdf: Path, codes: list[str]) -> None:
    """Puzzle pages of six, then answer pages of six, each page holding exactly its codes in order."""
    sheets = (len(codes) + 5) // 6
    pages, _ = pdf_pages(pdf)
    assert pages == 2 * sheets
    for number in range(1, pages + 1):
        text = pdf_text(pdf, number)
        sheet = (number - 1) % sheets
        expected = codes[sheet * 6 : sheet * 6 + 6]
        found = [code for code in re.findall(r"\b[0-9A-Z]{13}\b", text) if code in codes]
        assert found == expected, f"page {number}"
        assert ("Answers" in text) == (number > sheets)


def test_chromium_prints_the_sheet_to_a_clean_pdf(
    poppler: None, web_server: Server, records: list[Record], tmp_path: Path, shots: Path
) -> None:
    codes = [r["canonical_id"] for r in records[:12]]
    pdf = tmp_path / "sheet.pdf"
    subprocess.run(
        [
            str(CHROMIUM),
            *CHROMIUM_ARGS,
            "--no-pdf-header-footer",
            f"--print-to-pdf={pdf}",
            f"{web_server.url}/print?ids={','.join(codes)}",
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    _, size = pdf_pages(pdf)
    assert "letter" in size
    check_sheet(pdf, codes)
    shutil.copy(pdf, shots / "print-letter.pdf")
    text = pdf_text(pdf)
    assert "Print this page" not in text  # the screen's instructions stay off paper


@pytest.mark.parametrize("count", [1, 5, 7])
def test_the_sheet_fits_a4_too(
    poppler: None, contexts: Contexts, web_server: Server, records: list[Record], tmp_path: Path, count: int
) -> None:
    codes = [r["canonical_id"] for r in records[20 : 20 + count]]
    page = contexts.page()
    page.goto(f"/print?ids={','.join(codes)}")
    pdf = tmp_path / "sheet.pdf"
    page.pdf(path=str(pdf), format="A4", print_background=True)
    _, size = pdf_pages(pdf)
    assert "A4" in size
    check_sheet(pdf, codes)


def test_a_random_sheet_prints_the_count_asked(poppler: None, contexts: Contexts, tmp_path: Path) -> None:
    page = contexts.page()
    page.goto("/print?difficulty=easy&count=4")
    pdf = tmp_path / "sheet.pdf"
    page.pdf(path=str(pdf), format="Letter")
    text = pdf_text(pdf)
    assert pdf_pages(pdf)[0] == 2
    codes = re.findall(r"\b[0-9A-Z]{13}\b", text)
    assert len(codes) == 8 and len(set(codes)) == 4
    assert text.count("Easy") == 8
