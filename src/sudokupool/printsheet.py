"""The print sheet: ``/print?ids=A,B,...`` or ``/print?difficulty=&count=N&seed=S``, puzzles to print, then their
answers.

One HTML page laid out for paper (``static/print.css``): sheets of up to six grids, two across and three
down, each grid with its number, code and difficulty, and after them the answer sheets in the same order.
The grids are the image endpoint's SVGs, inline (vector in a PDF, from the same render cache), sized in
millimetres so six fit the printable area of A4 and of US Letter alike; a sheet ends with a page break and
no grid is split across pages. The page loads its stylesheet and nothing else, and runs no script.

Puzzles by difficulty are the first ``count`` of the order ``seed`` gives them (as ``/api/v2/puzzles`` takes
them): the same seed prints the same sheet again. Without a seed one is drawn, and the sheet shows the link
that prints it again.

Bad input is a JSON 400 (or 404 for unknown codes) naming what is allowed, as the API's errors are.
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

from sudokupool.api.endpoints import MAX_SEED
from sudokupool.api.errors import error_body, error_headers
from sudokupool.images.render import DEFAULT_SIZE, Variant, render
from sudokupool.loading.choose import Filters
from sudokupool.loading.pool import Pool
from sudokupool.site import PAGE_HEADERS, VERSION_MARK
from sudokupool.state import Runtime
from sudokupool.sudoku import DIFFICULTIES

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


def _entry(pool: Pool, index: int) -> Entry:
    record = orjson.loads(pool.body(index))
    return Entry(index, str(record["canonical_id"]), str(record.get("difficulty") or ""))


def choose(pool: Pool, params: dict[str, str]) -> list[Entry]:
    """The puzzles the query asks for: the codes of ``ids`` in their order, or the first ``count`` (default 6)
    of ``difficulty`` (any case; absent or empty for any) in the order of ``seed`` (drawn when absent: see
    :func:`seed_of`). Raises :class:`PrintError`."""
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
    level = None if difficulty is None else DIFFICULTIES.index(difficulty) + 1
    chosen, _ = pool.deal(Filters(level), seed_of(params), 0, count)
    if not chosen:
        raise PrintError(f"no {difficulty} puzzle in the pool" if difficulty else "the pool has no puzzle", 404)
    return [_entry(pool, index) for index in chosen]


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


def page(
    entries: list[Entry], puzzles: list[bytes], solutions: list[bytes], version: str, again: str | None = None
) -> bytes:
    """The sheet's HTML: instructions for the screen (with ``again``, the link that prints the same sheet), the
    puzzle sheets, then the answer sheets."""
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
    body = _sheets("Sudoku puzzles", entries, puzzles, answers=False) + _sheets(
        "Answers", entries, solutions, answers=True
    )
    return (head + "".join(body) + "</main></body></html>").encode()


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
            body = error_body(exc.message)
            headers = {k.decode(): v.decode() for k, v in error_headers(body)}
            return Response(body, status_code=exc.status, headers=headers)
        puzzles = [await self.picture(pool, e.at, "puzzle") for e in entries]
        solutions = [await self.picture(pool, e.at, "solution") for e in entries]
        # Chosen codes, or a seed asked for, print the same every time; a drawn seed is new on every visit.
        fixed = "ids" in params or "seed" in request.query_params
        cache = f"public, max-age={self.runtime.settings.cache_max_age}" if fixed else "no-store"
        again = None if "ids" in params else "/print?" + urlencode(params)
        return Response(
            page(entries, puzzles, solutions, self.version, again),
            media_type="text/html; charset=utf-8",
            headers={**PAGE_HEADERS, "cache-control": cache},
        )


def print_routes(runtime: Runtime, version: str) -> list[Route]:
    """``/print``; ``version`` is the static files' version (``site.asset_version``) for the stylesheet link."""
    return [Route("/print", PrintSheet(runtime, version).respond, methods=["GET"])]
