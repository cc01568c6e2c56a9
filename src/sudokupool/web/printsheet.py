"""The print sheet: ``/print?ids=A,B,...`` or ``/print?difficulty=&count=N&seed=S``, puzzles to print, then their
answers.

One HTML page laid out for paper (``static/print.css``): sheets of up to six grids, two across and three
down, each grid with its number, code and difficulty, and after them the answer sheets in the same order.
The grids are the image endpoint's SVGs, inline (vector in a PDF), sized in
millimetres so six fit the printable area of A4 and of US Letter alike; a sheet ends with a page break and
no grid is split across pages. Screen readers get each grid as a table of its digits instead of the
picture (shown on screen to them only, never printed). The page loads its stylesheet and nothing else, and
runs no script.

Puzzles by difficulty are the first ``count`` of the order ``seed`` gives them (as ``/api/v2/puzzles`` takes
them): the same seed prints the same sheet again. Without a seed one is drawn, and the sheet shows the link
that prints it again.

Bad input is a 400 (or 404 for unknown codes) naming what is allowed, and a busy work pool a 503 with
``Retry-After``: a small HTML page for a browser (a request whose ``Accept`` prefers ``text/html``), else the API's
JSON error body.

A sheet is computed work: the puzzles are chosen on the event loop (lookups), then the records are read, the
grids drawn and the page written by one job of the work pool (:func:`make_sheet`), and the sheet counts as
``SUDOKUPOOL_COST_PRINT`` requests in the client's ``/api/v2`` rate limit.
"""

from __future__ import annotations

import html
import secrets
from functools import partial
from typing import Final, NamedTuple
from urllib.parse import urlencode

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sudokupool.api.computed import client_left, work_error
from sudokupool.api.errors import ApiError, error_body, error_headers
from sudokupool.api.limiter import RateLimiter, Refusal
from sudokupool.api.query import MAX_SEED
from sudokupool.images.render import DEFAULT_SIZE, render_svg
from sudokupool.pool.choose import Filters
from sudokupool.pool.pool import Pool
from sudokupool.state import Runtime
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.web.site import PAGE_HEADERS, VERSION_MARK
from sudokupool.work import WorkBudgetExceeded, WorkDropped, WorkQueueFull

MAX_PUZZLES: Final = 12
DEFAULT_COUNT: Final = 6
PER_SHEET: Final = 6
DIFFICULTY_BY_FILTER: Final = {name.lower(): name for name in DIFFICULTIES}
SEED_ERROR: Final = f"seed must be a whole number from 0 to {MAX_SEED}"


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


def _entry(index: int, body: bytes) -> Entry:
    record = orjson.loads(body)
    return Entry(index, str(record["canonical_id"]), str(record.get("difficulty") or ""))


def choose(pool: Pool, params: dict[str, str]) -> list[int]:
    """The pool indexes of the puzzles the query asks for: the codes of ``ids`` in their order, or the first
    ``count`` (default 6) of ``difficulty`` (any case; absent or empty for any) in the order of ``seed`` (drawn
    when absent: see :func:`seed_of`). Raises :class:`PrintError`."""
    ids = params.get("ids")
    if ids is not None:
        if "difficulty" in params or "count" in params or "seed" in params:
            raise PrintError("give either ids, or difficulty, count and seed, not both")
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
        return [index for _, index in found if index is not None]
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
    level = None if difficulty is None else DIFFICULTIES.index(difficulty) + 1
    chosen, _ = pool.deal(Filters(level), seed_of(params), 0, count)
    if not chosen:
        raise PrintError(f"no {difficulty} puzzle in the pool" if difficulty else "the pool has no puzzle", 404)
    return chosen


def grid_table(number: int, grid: str, *, answer: bool) -> str:
    """The digits of ``grid`` (81 characters, ``.`` or ``0`` for an empty cell) as a table for screen readers,
    a row of the grid to a table row, headed by row and column numbers."""
    what = "Answer" if answer else "Puzzle"
    head = "".join(f'<th scope="col">Column {c}</th>' for c in range(1, 10))
    rows = []
    for r in range(9):
        cells = "".join(f"<td>{d if d in '123456789' else 'empty'}</td>" for d in grid[r * 9 : r * 9 + 9])
        rows.append(f'<tr><th scope="row">Row {r + 1}</th>{cells}</tr>')
    # The table sits in a box that hides it: a table itself grows to its content whatever its width.
    return (
        f'<div class="sr-only"><table><caption>{what} {number}, row by row</caption>'
        f"<thead><tr><td></td>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def seed_of(params: dict[str, str]) -> int:
    """The sheet's ``seed``: the one asked for, else one drawn and put in ``params`` (for the reprint link)."""
    raw = params.get("seed")
    if raw is None:
        seed = secrets.randbelow(MAX_SEED + 1)
        params["seed"] = str(seed)
        return seed
    if not (0 < len(raw) <= 16 and raw.isascii() and raw.isdigit()) or int(raw) > MAX_SEED:
        raise PrintError(SEED_ERROR)
    return int(raw)


def _sheets(
    title: str,
    entries: list[Entry],
    pictures: list[bytes],
    grids: list[str],
    *,
    answers: bool,
    first_number: int = 1,
) -> list[str]:
    total = (len(entries) + PER_SHEET - 1) // PER_SHEET
    out = []
    for start in range(0, len(entries), PER_SHEET):
        page = start // PER_SHEET + 1
        count = f" ({page} of {total})" if total > 1 else ""
        figures = []
        chunk = slice(start, start + PER_SHEET)
        for offset, (entry, svg, grid) in enumerate(zip(entries[chunk], pictures[chunk], grids[chunk], strict=True)):
            number = first_number + start + offset
            caption = f'<span class="number">{number}</span> <span class="code">{html.escape(entry.code)}</span>' + (
                f' <span class="difficulty">{html.escape(entry.difficulty)}</span>' if entry.difficulty else ""
            )
            figures.append(
                f'<figure><div class="picture" aria-hidden="true">{svg.decode()}</div>'
                f"{grid_table(number, grid, answer=answers)}<figcaption>{caption}</figcaption></figure>"
            )
        kind = "answers" if answers else "puzzles"
        shown = "".join(figures)
        out.append(f'<section class="sheet {kind}"><h2>{title}{count}</h2><div class="grids">{shown}</div></section>')
    return out


def page(
    entries: list[Entry],
    puzzles: list[bytes],
    solutions: list[bytes],
    version: str,
    grids: tuple[list[str], list[str]],
    again: str | None = None,
) -> bytes:
    """The sheet's HTML: instructions for the screen (with ``again``, the link that prints the same sheet), the
    puzzle sheets, then the answer sheets; ``grids`` holds the puzzles' and the solutions' digits (81 characters
    each), for the tables screen readers read."""
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
        "A4 and US Letter paper both fit.</p>"
        + (f'<p>The same sheet again: <a href="{html.escape(again)}">{html.escape(again)}</a></p>' if again else "")
        + "</header><main>"
    )
    body = _sheets("Sudoku puzzles", entries, puzzles, grids[0], answers=False) + _sheets(
        "Answers", entries, solutions, grids[1], answers=True
    )
    return (head + "".join(body) + "</main></body></html>").encode()


class Grid(NamedTuple):
    """What a job needs of one chosen puzzle: its pool index, record body, puzzle and solution."""

    at: int
    body: bytes
    puzzle: str
    solution: str


def make_sheet(grids: list[Grid], version: str, again: str | None = None) -> bytes:
    """The sheet's HTML for ``grids`` (a job of the work pool: module-level, its arguments picklable)."""
    entries = [_entry(grid.at, grid.body) for grid in grids]
    puzzles = [render_svg(g.puzzle, g.solution, "puzzle", size=DEFAULT_SIZE) for g in grids]
    solutions = [render_svg(g.puzzle, g.solution, "solution", size=DEFAULT_SIZE) for g in grids]
    digits = ([g.puzzle for g in grids], [g.solution for g in grids])
    return page(entries, puzzles, solutions, version, digits, again)


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
    """The small HTML page a browser gets for bad ``/print`` input or a busy server: what is wrong, and where to go
    instead."""
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
    """The ``/print`` endpoint over the app's runtime (its pool and work pool) and the ``/api/v2`` limiter."""

    def __init__(self, runtime: Runtime, version: str, limiter: RateLimiter | None = None) -> None:
        self.runtime = runtime
        self.version = version
        self.limiter = limiter

    async def respond(self, request: Request) -> Response:
        limit_headers: list[tuple[bytes, bytes]] = []
        if self.limiter is not None:
            # The sheet counts in the client's /api/v2 limit, as that many requests.
            admitted = await self.limiter.admit(request.scope)
            if not isinstance(admitted, Refusal):
                limit_headers = admitted
                refusal = await self.limiter.charge(request.scope, self.runtime.settings.cost_print - 1, admitted)
                admitted = refusal if refusal is not None else admitted
            if isinstance(admitted, Refusal):
                return Response(admitted.body, status_code=admitted.status, headers=_text(admitted.headers))
        params = dict(request.query_params)
        pool = self.runtime.current()
        try:
            chosen = choose(pool, params)
            grids = [Grid(at, pool.body(at), pool.puzzle(at), pool.solution(at)) for at in chosen]
            again = None if "ids" in params else "/print?" + urlencode(params)
            # Not held while the sheet waits: a sync's swap lets the old pool go once no request holds it.
            del pool
            left = partial(client_left, request.receive)
            try:
                body = await self.runtime.work.submit(make_sheet, grids, self.version, again, kind="print", left=left)
            except (WorkQueueFull, WorkBudgetExceeded, WorkDropped) as exc:
                raise work_error(exc) from None
        except (PrintError, ApiError) as exc:
            # The answer depends on Accept: a cache must keep the two forms apart.
            if prefers_html(", ".join(request.headers.getlist("accept"))):
                return Response(
                    error_page(exc.message, self.version),
                    status_code=exc.status,
                    media_type="text/html; charset=utf-8",
                    headers={
                        **PAGE_HEADERS,
                        "cache-control": "no-store",
                        "vary": "Accept",
                        **getattr(exc, "headers", {}),
                        **_text(limit_headers),
                    },
                )
            error = error_body(exc.message)
            headers = {k.decode(): v.decode() for k, v in error_headers(error, {"vary": "Accept"})}
            headers.update(getattr(exc, "headers", {}))
            headers.update(_text(limit_headers))
            return Response(error, status_code=exc.status, headers=headers)
        # Chosen codes, or a seed asked for, print the same every time; a drawn seed is new on every visit.
        fixed = "ids" in params or "seed" in request.query_params
        cache = f"public, max-age={self.runtime.settings.cache_max_age}" if fixed else "no-store"
        return Response(
            body,
            media_type="text/html; charset=utf-8",
            headers={**PAGE_HEADERS, "cache-control": cache, **_text(limit_headers)},
        )


def _text(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in headers}


def print_routes(runtime: Runtime, version: str, limiter: RateLimiter | None = None) -> list[Route]:
    """``/print``; ``version`` is the static files' version (``site.asset_version``) for the stylesheet link;
    ``limiter``, the ``/api/v2`` one, counts each sheet as ``SUDOKUPOOL_COST_PRINT`` requests."""
    return [Route("/print", PrintSheet(runtime, version, limiter).respond, methods=["GET"])]
