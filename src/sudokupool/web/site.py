"""The web page that plays the pool: ``/``, ``/p/{canonical_id}`` (a share link), ``/embed/{canonical_id}``
(the embeddable player) and ``/static/...``.

The page is static HTML, CSS and JavaScript with no build step; it calls the unversioned ``/api/puzzles/...``
paths, and ``/api/v2/grids/...`` (rate limited as any client) for a pasted puzzle. ``index.html`` names its
assets as ``/static/<file>?v=dev``; the page is served with ``dev`` replaced by a hash of the assets, so
browsers may keep a versioned asset for a year and still pick up a new release at once (the page itself is
always revalidated). The two pages share the board with its pad (the markup
``player.js`` finds on both) as parts in ``static/parts/``, put in place when the page is prepared: a line
``<!--#include NAME -->`` stands for the part; a part's ``<!--#slot -->`` line takes the page's lines between
its include and ``<!--#end NAME -->``.
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from pathlib import Path
from typing import Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sudokupool.api.conditional import etag_matches

STATIC_DIR: Final = Path(__file__).parent / "static"
VERSION_MARK: Final = "?v=dev"
PARTS: Final = "parts"
_INCLUDE: Final = re.compile(
    r"^(?P<indent>[ \t]*)<!--#include (?P<name>[\w.-]+) -->\n(?:(?P<fill>.*?)^[ \t]*<!--#end (?P=name) -->\n)?",
    re.MULTILINE | re.DOTALL,
)
_SLOT: Final = re.compile(r"^(?P<indent>[ \t]*)<!--#slot -->\n", re.MULTILINE)
VERSIONED_CACHE: Final = "public, max-age=31536000, immutable"
REVALIDATE: Final = "no-cache"
# The page loads nothing but its own files and calls nothing but its own API.
PAGE_HEADERS: Final = {
    "content-security-policy": (
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
        "frame-ancestors 'none'; form-action 'self'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}
# The embeddable player is made to sit in an <iframe> of any other site: the page's policy but for its
# frame-ancestors (and no X-Frame-Options, which has no "any origin" value).
EMBED_HEADERS: Final = {
    **PAGE_HEADERS,
    "content-security-policy": PAGE_HEADERS["content-security-policy"].replace(
        "frame-ancestors 'none'", "frame-ancestors *"
    ),
}


def asset_version(static_dir: Path) -> str:
    """A short hash over every file in ``static_dir`` (names and contents): changes whenever an asset does."""
    digest = hashlib.sha256()
    for path in sorted(p for p in static_dir.rglob("*") if p.is_file()):
        digest.update(path.relative_to(static_dir).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def with_parts(html: str, parts: Path) -> str:
    """``html`` with each include of a part of ``parts`` replaced by the part, indented as the include, its slot
    filled with the lines the include encloses."""

    def part(include: re.Match[str]) -> str:
        text = (parts / include["name"]).read_text(encoding="utf-8")
        fill = textwrap.dedent(include["fill"] or "")
        text = _SLOT.sub(lambda slot: textwrap.indent(fill, slot["indent"]), text)
        return textwrap.indent(text, include["indent"])

    return _INCLUDE.sub(part, html)


class IndexPage:
    """An HTML file of ``static_dir`` (``index.html``) with its parts in place and its asset links versioned,
    prepared once; ``respond`` serves it, with ``headers``, on every path it is routed to."""

    def __init__(self, static_dir: Path, name: str = "index.html", headers: dict[str, str] = PAGE_HEADERS) -> None:
        version = asset_version(static_dir)
        html = with_parts((static_dir / name).read_text(encoding="utf-8"), static_dir / PARTS)
        self.body = html.replace(VERSION_MARK, f"?v={version}").encode()
        self.etag = f'"{version}"'
        self.headers = headers

    async def respond(self, request: Request) -> Response:
        headers = {**self.headers, "etag": self.etag, "cache-control": REVALIDATE}
        # Every If-None-Match line counts: they make one list (RFC 9110, 5.3).
        if_none_match = ", ".join(request.headers.getlist("if-none-match"))
        if if_none_match and etag_matches(if_none_match, self.etag):
            return Response(status_code=304, headers=headers)
        return Response(self.body, media_type="text/html; charset=utf-8", headers=headers)


class CacheHeaders:
    """Sets ``Cache-Control`` on the static files: a year for a versioned URL (``?v=``), else revalidate."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        versioned = any(part.startswith(b"v=") for part in scope.get("query_string", b"").split(b"&"))
        value = (VERSIONED_CACHE if versioned else REVALIDATE).encode()

        async def send_with_cache(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in (200, 304):
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control"]
                message = {**message, "headers": [*headers, (b"cache-control", value)]}
            await send(message)

        await self.app(scope, receive, send_with_cache)


def web_routes(static_dir: Path = STATIC_DIR) -> list[BaseRoute]:
    """The page at ``/`` and ``/p/{canonical_id}`` (the script reads the code from the path, or ``/?id=``),
    the embeddable player at ``/embed/{canonical_id}``, and their files under ``/static``. Mount these after
    the API so ``/api/...`` never reaches them.

    The player asks ``/api/puzzles/{canonical_id}`` for its puzzle, so ``/embed/daily`` plays the daily puzzle
    as soon as the API serves one at ``/api/puzzles/daily`` (a fixed path of ``puzzle_routes``, matched
    before any code); until then it says no puzzle has that code."""
    page = IndexPage(static_dir)
    embed = IndexPage(static_dir, "embed.html", EMBED_HEADERS)
    return [
        Route("/", page.respond, methods=["GET"]),
        Route("/p/{canonical_id}", page.respond, methods=["GET"]),
        Route("/embed/{canonical_id}", embed.respond, methods=["GET"]),
        Mount("/static", app=CacheHeaders(StaticFiles(directory=static_dir)), name="static"),
    ]
