"""The web page against the real server, in headless Chromium (Debian's ``chromium``) driven by Playwright.

Playwright's own browser download does not work here, so the system browser is launched by path. One
browser serves the whole module (the sync API runs its own event loop, so it is closed before any other
module's async tests run). Screenshots go to a temporary directory, or to ``$SUDOKUPOOL_SCREENSHOTS``
to look at them (the README's pictures, of the demo pool, come from ``scripts/screenshots.py``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from tests.servers import Server, run_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1180, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def web_server(export_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("web") / "server.log"
    with run_server({"SUDOKUPOOL_EXPORTS": str(export_dir)}, log) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists() or shutil.which(str(CHROMIUM)) is None:
        pytest.fail(
            f"the browser tests need Chromium at {CHROMIUM}: install Debian's `chromium` package "
            "(apt-get install -y chromium; scripts/test does it when run as root)"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class Contexts:
    """Opens browser contexts (fresh storage each) on the server; fails the test on any script error."""

    def __init__(self, browser: Browser, server: Server) -> None:
        self.browser = browser
        self.server = server
        self.opened: list[BrowserContext] = []
        self.errors: list[str] = []

    def page(self, *, viewport: dict[str, int] = DESKTOP, scheme: str = "light", scale: float = 1) -> Page:
        context = self.browser.new_context(
            base_url=self.server.url,
            viewport=viewport,  # type: ignore[arg-type]
            color_scheme=scheme,  # type: ignore[arg-type]
            device_scale_factor=scale,
            reduced_motion="reduce",
        )
        self.opened.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        return page

    def close(self) -> None:
        for context in self.opened:
            context.close()


@pytest.fixture
def contexts(browser: Browser, web_server: Server) -> Iterator[Contexts]:
    opened = Contexts(browser, web_server)
    yield opened
    opened.close()
    assert opened.errors == [], f"script errors on the page: {opened.errors}"


@pytest.fixture
def page(contexts: Contexts) -> Page:
    return contexts.page()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    target = os.environ.get("SUDOKUPOOL_SCREENSHOTS")
    if not target:
        return tmp_path
    directory = Path(target)
    directory.mkdir(parents=True, exist_ok=True)
    return directory
