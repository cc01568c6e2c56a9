"""The print sheet: ``/print?ids=A,B,...`` or ``/print?difficulty=&count=N``, puzzles to print, then their answers.

One HTML page laid out for paper (``static/print.css``): sheets of up to six grids, two across and three
down, each grid with its number, code and difficulty, and after them the answer sheets in the same order.
The grids are the image endpoint's SVGs, inline (vector in a PDF, from the same render cache), sized in
millimetres so six fit the printable area of A4 and of US Letter alike; a sheet ends with a page break and
no grid is split across pages. The page loads its stylesheet and nothing else, and runs no script.

Bad input is a 400 (or 404 for unknown codes) naming what is allowed: a small HTML page for a browser (a
request whose ``Accept`` prefers ``text/html``), else the API's JSON error body.
"""

from __future__ import annotations

import html
from functools import partial
from typing import Final, NamedTuple

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sudokupool.api.errors import error_body, error_headers
from sudokupool.images.render import DEFAULT_SIZE, Variant, render
from sudokupool.loading.pool import Pool
from sudokupool.site import PAGE_HEADERS, VERSION_MARK
from sudokupool.state import Runtime
from sudokupool.sudoku import DIFFICULTIES

MAX_PUZZLES: Final = 12
DEFAULT_COUNT: Final = 6
PER_SHEET: Final = 6
DIFFICULTY_BY_FILTER: Final = {name.lower(): name for name in DIFFICULTIES}
# A random pick may repeat a puzzle; this many picks per puzzle asked are tried for distinct ones.
_PICK_TRIES: Final = 8


class PrintError(Exception):
    """Input the sheet cannot be made from: the status and the ``{"error": ...}`` message."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class Entry(NamedTuple):
    """One puzzle on the sheet."""

    at: int  # the pool index
    code: str
    difficulty: str


def _entry(pool: Pool, index: int) -> Entry:
    record = orjson.loads(pool.body(index))
    return Entry(index, str(record["canonical_id"]), str(record.get("difficulty") or ""))


def choose(pool: Pool, params: dict[str, str]) -> list[Entry]:
    """The puzzles the query asks for: the codes of ``ids`` in their order, or ``count`` random ones
    (default 6) of ``difficulty`` (any case; absent or empty for any). Raises :class:`PrintError`."""
    ids = params.get("ids")
    if ids is not None:
        if "difficulty" in params or "count" in params:
            raise PrintError("give either ids, or difficulty and count, not both")
        codes = [code.strip() for code in ids.split(",")]
        if not all(codes):
            raise PrintError("ids must be puzzle codes separated by commas, with none empty")
        if len(codes) > MAX_PUZZLES:
            raise PrintError(f"at most {MAX_PUZZLES} puzzles fit a print sheet, got {len(codes)}")
        found = [(code, pool.find(code)) for code in codes]
        unknown = [code for code, index in found if index is None]
        if unknown:
            listed = ", ".join(unknown[:MAX_PUZZLES])
            raise PrintError(f"no puzzle has the code{'s' if len(unknown) > 1 else ''} {listed}", 404)
        return [_entry(pool, index) for _, index in found if index is not None]
    count = DEFAULT_COUNT
    raw_count = params.get("count")
    if raw_count is not None:
        if not (raw_count.isascii() and raw_count.isdigit() and len(raw_count) <= 2):
            raise PrintError(f"count must be a whole number from 1 to {MAX_PUZZLES}")
        count = int(raw_count)
        if not 1 <= count <= MAX_PUZZLES:
            raise PrintError(f"count must be a whole number from 1 to {MAX_PUZZLES}")
    difficulty = None
    raw_difficulty = params.get("difficulty")
    if raw_difficulty:
        difficulty = DIFFICULTY_BY_FILTER.get(raw_difficulty.lower())
        if difficulty is None:
            raise PrintError("difficulty must be one of easy, medium, hard, expert (or empty for any)")
    chosen: dict[int, None] = {}
    for _ in range(count * _PICK_TRIES):
        index = pool.pick(difficulty)
        if index is None:
            raise PrintError(f"no {difficulty} puzzle in the pool" if difficulty else "the pool has no puzzle", 404)
        chosen[index] = None
        if len(chosen) == count:
            break
    return [_entry(pool, index) for index in chosen]


def _sheets(
    title: str, entries: list[Entry], pictures: list[bytes], *, answers: bool, first_number: int = 1
) -> list[str]:
    total = (len(entries) + PER_SHEET - 1) // PER_SHEET
    out = []
    for start in range(0, len(entries), PER_SHEET):
        page = start // PER_SHEET + 1
        count = f" ({page} of {total})" if total > 1 else ""
        figures = []
        for offset, (entry, svg) in enumerate(
            zip(entries[start : start + PER_SHEET], pictures[start : start + PER_SHEET], strict=True)
        ):
            number = first_number + start + offset
            caption = f'<span class="number">{number}</span> <span class="code">{html.escape(entry.code)}</span>' + (
                f' <span class="difficulty">{html.escape(entry.difficulty)}</span>' if entry.difficulty else ""
            )
            figures.append(f"<figure>{svg.decode()}<figcaption>{caption}</figcaption></figure>")
        kind = "answers" if answers else "puzzles"
        grids = "".join(figures)
        out.append(f'<section class="sheet {kind}"><h2>{title}{count}</h2><div class="grids">{grids}</div></section>')
    return out


def page(entries: list[Entry], puzzles: list[bytes], solutions: list[bytes], version: str) -> bytes:
    """The sheet's HTML: instructions for the screen, the puzzle sheets, then the answer sheets."""
    n = len(entries)
    codes = ", ".join(e.code for e in entries)
    head = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Sudoku: {n} puzzle{'s' if n != 1 else ''} to print ({html.escape(codes)})</title>"
        f'<link rel="stylesheet" href="/static/print.css{VERSION_MARK.replace("dev", version)}"></head><body>'
        '<header class="screen-only"><h1>Sudoku puzzles to print</h1>'
        "<p>Print this page, or save it as a PDF, with your browser's Print command (Ctrl+P, or ⌘P on a Mac). "
        f"It holds {n} puzzle{'s' if n != 1 else ''}, six to a page, then their answers; "
        "A4 and US Letter paper both fit.</p></header><main>"
    )
    body = _sheets("Sudoku puzzles", entries, puzzles, answers=False) + _sheets(
        "Answers", entries, solutions, answers=True
    )
    return (head + "".join(body) + "</main></body></html>").encode()


def _quality(accept: str, media: str) -> float:
    """The q-value ``accept`` gives ``media`` (``type/subtype``): its own range's, else ``type/*``'s, else
    ``*/*``'s, else 0 (RFC 9110, 12.5.1)."""
    kind = media.split("/")[0]
    found: dict[str, float] = {}
    for element in accept.split(","):
        name, *params = (part.strip() for part in element.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        found.setdefault(name.lower(), q)
    for name in (media, f"{kind}/*", "*/*"):
        if name in found:
            return found[name]
    return 0.0


def prefers_html(accept: str) -> bool:
    """Whether a request with this ``Accept`` (every line joined) would rather have HTML than JSON: a browser
    names ``text/html``; a client that takes anything (``*/*``, curl's) or asks for JSON gets JSON."""
    return _quality(accept, "text/html") > _quality(accept, "application/json")


def error_page(message: str, version: str) -> bytes:
    """The small HTML page a browser gets for bad ``/print`` input: what is wrong, and where to go instead."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>Sudoku: no print sheet</title>"
        f'<link rel="stylesheet" href="/static/print.css{VERSION_MARK.replace("dev", version)}"></head><body>'
        '<main class="screen-only"><h1>No print sheet</h1>'
        f"<p>{html.escape(message[:1].upper() + message[1:])}.</p>"
        '<p><a href="/print">Print six random puzzles</a> or <a href="/">play a puzzle</a>.</p>'
        "</main></body></html>"
    ).encode()


class PrintSheet:
    """The ``/print`` endpoint over the app's runtime (its pool and render cache)."""

    def __init__(self, runtime: Runtime, version: str) -> None:
        self.runtime = runtime
        self.version = version

    async def picture(self, pool: Pool, index: int, variant: Variant) -> bytes:
        puzzle, solution = pool.puzzle(index), pool.solution(index)
        # The image endpoint's key: a sheet and an SVG request share one cached render.
        key = (pool.info.export_key, pool.info.loaded_at, index, variant, "svg", DEFAULT_SIZE)
        return await self.runtime.images.get(key, partial(render, "svg", puzzle, solution, variant, DEFAULT_SIZE))

    async def respond(self, request: Request) -> Response:
        params = dict(request.query_params)
        pool = self.runtime.current()
        try:
            entries = choose(pool, params)
        except PrintError as exc:
            # The answer depends on Accept: a cache must keep the two forms apart.
            if prefers_html(", ".join(request.headers.getlist("accept"))):
                return Response(
                    error_page(exc.message, self.version),
                    status_code=exc.status,
                    media_type="text/html; charset=utf-8",
                    headers={**PAGE_HEADERS, "cache-control": "no-store", "vary": "Accept"},
                )
            body = error_body(exc.message)
            headers = {k.decode(): v.decode() for k, v in error_headers(body, {"vary": "Accept"})}
            return Response(body, status_code=exc.status, headers=headers)
        puzzles = [await self.picture(pool, e.at, "puzzle") for e in entries]
        solutions = [await self.picture(pool, e.at, "solution") for e in entries]
        # Chosen codes print the same every time; a random sheet is new on every visit.
        cache = "no-store" if "ids" not in params else f"public, max-age={self.runtime.settings.cache_max_age}"
        return Response(
            page(entries, puzzles, solutions, self.version),
            media_type="text/html; charset=utf-8",
            headers={**PAGE_HEADERS, "cache-control": cache},
        )


def print_routes(runtime: Runtime, version: str) -> list[Route]:
    """``/print``; ``version`` is the static files' version (``site.asset_version``) for the stylesheet link."""
    return [Route("/print", PrintSheet(runtime, version).respond, methods=["GET"])]
