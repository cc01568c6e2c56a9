"""The web page against the real server, in headless Chromium (Debian's ``chromium``) driven by Playwright.

Playwright's own browser download does not work here, so the system browser is launched by path. One
browser serves the whole module (the sync API runs its own event loop, so it is closed before any other
module's async tests run), and one context of it each test's first page, emptied between tests (:class:`Shared`).
Screenshots go to a temporary directory, or to ``$SUDOKUPOOL_SCREENSHOTS`` to look at them (the README's pictures,
of the demo pool, come from ``scripts/screenshots.py``).
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
    # One client (127.0.0.1) loads every page of the module: at the anonymous limit, a print sheet costing 10 of 60
    # a minute, a module's pages could run out of it within a minute. The limit's own answers are tested elsewhere.
    env = {"SUDOKUPOOL_EXPORTS": str(export_dir), "SUDOKUPOOL_LIMIT_ANONYMOUS": "100000"}
    with run_server(env, log) as server:
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


class Shared:
    """The module's one browser context for each test's first page, kept open on the site by a page of its own.

    A page opened beside a live page of the same site in one context shares that page's renderer process, and
    starting a renderer is most of what a page load costs here. :meth:`empty` takes away what a test left:
    the origin's storage of every kind, cookies, permissions and the HTTP cache; a context whose clock a test
    installed is replaced."""

    def __init__(self, browser: Browser, server: Server) -> None:
        self.browser = browser
        self.origin = server.url
        self.open()

    def open(self) -> None:
        self.context = self.browser.new_context(base_url=self.origin, viewport=DESKTOP, reduced_motion="reduce")
        self.anchor = self.context.new_page()
        self.anchor.goto("/api/v1/health")
        self.session = self.context.new_cdp_session(self.anchor)

    def empty(self) -> None:
        if self.anchor.evaluate("'__pwClock' in globalThis"):
            # Playwright's clock is the context's, and stays installed: a context without it replaces this one.
            self.context.close()
            self.open()
            return
        self.session.send("Storage.clearDataForOrigin", {"origin": self.origin, "storageTypes": "all"})
        self.session.send("Network.clearBrowserCache")
        self.context.clear_cookies()
        self.context.clear_permissions()

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def shared(browser: Browser, web_server: Server) -> Iterator[Shared]:
    opened = Shared(browser, web_server)
    yield opened
    opened.close()


class Contexts:
    """Opens pages on the server, each in its own storage; fails the test on any script error.

    A test's first page opens in the module's shared context (:class:`Shared`), emptied before the test; every
    further page of the test (another device, another player) in a new context of its own."""

    def __init__(self, browser: Browser, server: Server, shared: Shared) -> None:
        self.browser = browser
        self.server = server
        self.shared: Shared | None = shared
        self.opened: list[BrowserContext] = []
        self.pages: list[Page] = []
        self.errors: list[str] = []

    def page(self, *, viewport: dict[str, int] = DESKTOP, scheme: str = "light", scale: float = 1) -> Page:
        if self.shared is not None and scale == 1:
            page = self.shared.context.new_page()
            page.set_viewport_size(viewport)  # type: ignore[arg-type]
            page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
            self.shared = None
        else:
            context = self.browser.new_context(
                base_url=self.server.url,
                viewport=viewport,  # type: ignore[arg-type]
                color_scheme=scheme,  # type: ignore[arg-type]
                device_scale_factor=scale,
                reduced_motion="reduce",
            )
            self.opened.append(context)
            page = context.new_page()
        self.pages.append(page)
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        return page

    def close(self) -> None:
        for page in self.pages:
            page.close()
        for context in self.opened:
            context.close()


@pytest.fixture
def contexts(browser: Browser, web_server: Server, shared: Shared) -> Iterator[Contexts]:
    shared.empty()
    opened = Contexts(browser, web_server, shared)
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
