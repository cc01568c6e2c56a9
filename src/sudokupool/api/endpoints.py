"""The handlers. Puzzle paths serve bytes the pool prepared at load; nothing is JSON-encoded per request.

A record goes out as the gzip member the pool holds when the client's ``Accept-Encoding`` allows it,
and is inflated for the others; both carry ``Vary: Accept-Encoding`` and the record's one weak ETag.
Short bodies (solutions, stats) and error bodies are always identity.

A handler takes the ASGI scope and the path's id (or None) and returns a :class:`Reply`; the router in
``routes.py`` sends it. Client errors are raised as :class:`~sudokupool.api.errors.ApiError`. Handlers work
on the raw scope rather than Starlette's ``Request``/``Response`` objects: these are the hot paths, and
the objects cost more than the rest of the request.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Final, NamedTuple
from urllib.parse import unquote_plus

import orjson
from starlette.types import Scope

from sudokupool.api.compression import accepts_gzip, compress
from sudokupool.api.conditional import etag_matches
from sudokupool.api.errors import ApiError, BadRequest, NotFound
from sudokupool.api.listing import ListingUnavailable
from sudokupool.images.render import VARIANTS, render_png
from sudokupool.loading.pool import DamagedRecord, Pool
from sudokupool.naming import export_order
from sudokupool.state import Runtime
from sudokupool.sudoku import DIFFICULTIES

Header = tuple[bytes, bytes]
JSON: Final[Header] = (b"content-type", b"application/json")
PNG: Final[Header] = (b"content-type", b"image/png")
NO_STORE: Final[Header] = (b"cache-control", b"no-store")
GZIP: Final[Header] = (b"content-encoding", b"gzip")
#: On every response whose encoding was negotiated, identity ones too, so shared caches key by it.
VARY: Final[Header] = (b"vary", b"Accept-Encoding")
DIFFICULTY_BY_FILTER: Final = {name.lower(): name for name in DIFFICULTIES}
DIFFICULTY_ERROR: Final = "difficulty must be one of easy, medium, hard, expert"
VARIANT_ERROR: Final = "variant must be one of puzzle, solution"
NO_PUZZLE: Final = "no puzzle has that id"
DAMAGED: Final = "this puzzle's record is damaged in the served pack"


class Reply(NamedTuple):
    """A complete response: status, headers (without Content-Length) and body."""

    status: int
    headers: list[Header]
    body: bytes


Handler = Callable[[Scope, str | None], Reply]
AsyncHandler = Callable[[Scope, str | None], Awaitable[Reply]]


def header(scope: Scope, name: bytes) -> str | None:
    """Every request header line called ``name`` (lower case) as one list (joined with ", "), as latin-1.

    A list-valued field (``If-None-Match``, ``Accept-Encoding``) may come as several lines; RFC 9110
    (5.3) makes them one value joined by commas. None when there is no such line.
    """
    found: str | None = None
    for key, value in scope["headers"]:
        if key == name:
            text = bytes(value).decode("latin-1")
            found = text if found is None else f"{found}, {text}"
    return found


def gzip_accepted(scope: Scope) -> bool:
    """Whether the client takes a gzip-coded body (see :func:`~sudokupool.api.compression.accepts_gzip`)."""
    return accepts_gzip(header(scope, b"accept-encoding"))


def query(scope: Scope, name: str) -> str | None:
    """The first query parameter called ``name`` (what ``parse_qsl(..., keep_blank_values=True)`` gives).

    Split by hand: ``parse_qsl`` cost 1.1 us of a 7 us filtered pick; only parts with ``%`` or ``+``
    go through ``unquote_plus``.
    """
    raw: bytes = scope["query_string"]
    if not raw or name.encode() not in raw:
        return None
    for part in raw.decode("latin-1").split("&"):
        key, _, value = part.partition("=")
        if "%" in key or "+" in key:
            key = unquote_plus(key)
        if key == name:
            return unquote_plus(value) if "%" in value or "+" in value else value
    return None


def json(body: bytes) -> Reply:
    """An uncacheable JSON reply."""
    return Reply(200, [JSON, NO_STORE], body)


class Endpoints:
    """The API's handlers, bound to the app's :class:`Runtime`."""

    def __init__(self, runtime: Runtime, openapi_body: bytes) -> None:
        self.runtime = runtime
        self.openapi_body = openapi_body
        # One body of 16 KB (3 KB compressed): kept in both encodings, not inflated per request.
        self.openapi_gzip = compress(openapi_body)
        self.cache_control: Header = (b"cache-control", f"public, max-age={runtime.settings.cache_max_age}".encode())

    def cacheable(self, scope: Scope, body: bytes, etag: str, content_type: Header = JSON) -> Reply:
        """A reply that caches may keep, or 304 when the client already has it."""
        headers = [(b"etag", etag.encode()), self.cache_control]
        if_none_match = header(scope, b"if-none-match")
        if if_none_match is not None and etag_matches(if_none_match, etag):
            return Reply(304, headers, b"")
        return Reply(200, [content_type, *headers], body)

    def record(self, scope: Scope, pool: Pool, index: int) -> Reply:
        """Puzzle ``index``'s record, cacheable: gzip as held or inflated, one weak ETag for both.

        A 304 carries the ETag and Vary a 200 would, and costs no inflate.
        """
        etag = pool.etag(index)
        headers = [(b"etag", etag.encode()), self.cache_control, VARY]
        if_none_match = header(scope, b"if-none-match")
        if if_none_match is not None and etag_matches(if_none_match, etag):
            return Reply(304, headers, b"")
        try:
            if gzip_accepted(scope):
                return Reply(200, [JSON, GZIP, *headers], pool.gzip_body(index))
            return Reply(200, [JSON, *headers], pool.body(index))
        except DamagedRecord:  # logged once by the pool
            raise ApiError(DAMAGED, status=500) from None

    def find(self, param: str | None) -> tuple[Pool, int]:
        pool = self.runtime.current()
        index = pool.find(param or "")
        if index is None:
            raise NotFound(NO_PUZZLE)
        return pool, index

    def health(self, scope: Scope, param: str | None) -> Reply:
        runtime = self.runtime
        pool = runtime.current()
        now = int(time.time())
        sync = runtime.sync
        # When the export was made (the time in its name); a single local file may have another name.
        order = export_order(pool.info.export_key)
        exported_at = int(order[0].timestamp()) if order is not None else None
        body = {
            "ok": True,
            "puzzles": len(pool),
            "export": {
                "source": pool.info.source,
                "key": pool.info.export_key,
                "size": pool.info.export_size,
                "loaded_at": pool.info.loaded_at,
                "age_seconds": now - pool.info.loaded_at,
                "exported_at": exported_at,
                "export_age_seconds": None if exported_at is None else now - exported_at,
                # True while serving fallback_exports because the primary source was unreachable at startup.
                "fallback": sync.fallback,
            },
            "sync": {
                "interval_seconds": runtime.settings.sync_interval,
                "last_attempt_at": sync.last_attempt_at,
                "last_success_at": sync.last_success_at,
                "last_error": sync.last_error,
                "last_error_at": sync.last_error_at,
            },
        }
        return json(orjson.dumps(body))

    def stats(self, scope: Scope, param: str | None) -> Reply:
        return json(self.runtime.current().stats_body)

    async def activity(self, scope: Scope, param: str | None) -> Reply:
        return json(orjson.dumps(await self.runtime.activity.snapshot_async()))

    def random(self, scope: Scope, param: str | None) -> Reply:
        difficulty = None
        value = query(scope, "difficulty")
        if value is not None:
            difficulty = DIFFICULTY_BY_FILTER.get(value.lower())
            if difficulty is None:
                raise BadRequest(DIFFICULTY_ERROR)
        pool = self.runtime.current()
        index = pool.pick(difficulty)
        if index is None:
            raise NotFound(f"no {difficulty} puzzle in the pool" if difficulty else "the pool has no puzzle")
        self.runtime.activity.record("random")
        try:
            if gzip_accepted(scope):
                return Reply(200, [JSON, GZIP, VARY, NO_STORE], pool.gzip_body(index))
            return Reply(200, [JSON, VARY, NO_STORE], pool.body(index))
        except DamagedRecord:  # logged once by the pool
            raise ApiError(DAMAGED, status=500) from None

    def puzzle(self, scope: Scope, param: str | None) -> Reply:
        pool, index = self.find(param)
        self.runtime.activity.record("by_id")
        return self.record(scope, pool, index)

    def solution(self, scope: Scope, param: str | None) -> Reply:
        pool, index = self.find(param)
        self.runtime.activity.record("solution")
        return self.cacheable(scope, pool.solution_body(index), pool.etag(index, solution=True))

    async def image(self, scope: Scope, param: str | None) -> Reply:
        # Absent means the puzzle; present but empty is a mistake, as an empty `difficulty=` is.
        variant = query(scope, "variant")
        if variant is None:
            variant = "puzzle"
        if variant not in VARIANTS:
            raise BadRequest(VARIANT_ERROR)
        pool, index = self.find(param)
        self.runtime.activity.record("image_solution" if variant == "solution" else "image_puzzle")
        etag = f'{pool.etag(index)[:-1]}-{variant[0]}"'
        if_none_match = header(scope, b"if-none-match")
        if if_none_match is not None and etag_matches(if_none_match, etag):
            # Answered before rendering: a revalidation costs no render, even after a cache eviction.
            return self.cacheable(scope, b"", etag)
        puzzle, solution = pool.puzzle(index), pool.solution(index)
        key = (pool.info.export_key, pool.info.loaded_at, index, variant)
        png = await self.runtime.images.get(key, partial(render_png, puzzle, solution, variant))
        return self.cacheable(scope, png, etag, PNG)

    async def pool_exports(self, scope: Scope, param: str | None) -> Reply:
        try:
            body = await self.runtime.exports_body()
        except ListingUnavailable as exc:
            # Not logged here: the storage outage is logged once when it starts and once when it ends.
            raise ApiError(exc.message, status=503, headers={"Retry-After": str(exc.retry_after)}) from None
        self.runtime.activity.record("exports_listing")
        return json(body)

    def openapi(self, scope: Scope, param: str | None) -> Reply:
        if gzip_accepted(scope):
            return Reply(200, [JSON, GZIP, VARY], self.openapi_gzip)
        return Reply(200, [JSON, VARY], self.openapi_body)
