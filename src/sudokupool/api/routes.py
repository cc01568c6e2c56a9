"""Every route of the API, each declared once with its OpenAPI operation: the routers and the document are
built from :data:`ROUTES`.

A new endpoint is a method of :class:`~sudokupool.api.endpoints.Endpoints` and a row here (its body's schema,
if new, goes in ``schemas.py``). Of the operations: the image is listed under each format's media type and
also under ``application/octet-stream``, the one binary type openapi-python-client reads without a config
file (the bytes and the ``Content-Type`` header of the format asked are the same either way), and the
difficulty filter accepts the record's own ``Difficulty`` enum besides the lower-case names.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import cache
from types import MethodType
from typing import Any, Final, NamedTuple, cast

import orjson
from starlette.types import Scope

from sudokupool.api import engine
from sudokupool.api.archive import MAX_DAYS, daily_archive
from sudokupool.api.downloads import Streamed, export_download
from sudokupool.api.endpoints import AsyncHandler, Endpoints, Handler, Reply
from sudokupool.api.openapi import (
    CACHE_HEADERS,
    ENCODING_HEADERS,
    ID_PARAM,
    IF_NONE_MATCH,
    JSON,
    METHODS_NOTE,
    build_document,
    json_response,
    operation,
    query_param,
    rate_headers,
)
from sudokupool.api.query import MAX_SEED
from sudokupool.api.redirects import daily_image, random_image
from sudokupool.api.schemas import ref
from sudokupool.api.sets import DEFAULT_COUNT, MAX_COUNT, MAX_OFFSET, PUZZLES_PER_REQUEST, puzzle_set, set_cost
from sudokupool.images.render import DEFAULT_SIZE, FORMATS, MAX_SIZE, MEDIA_TYPES, MIN_SIZE, VARIANTS
from sudokupool.sudoku.symmetry import SYMMETRIES

#: Where the versioned API is served; ``/api/v1`` is its alias.
V2: Final = "/api/v2"


class ApiRoute(NamedTuple):
    """One path of the API: the method of :class:`Endpoints` that answers it and its OpenAPI path item."""

    #: Relative to ``/api/v2`` (and ``/api/v1``).
    path: str
    handler: Callable[[Endpoints, Scope, str | None], Reply | Streamed | Awaitable[Reply | Streamed]]
    operation: dict[str, Any]
    #: Also served under the unversioned ``/api`` (the puzzle paths, for the web page).
    unversioned: bool = False
    #: Counted and checked by the limiter under ``/api/v2``; the document lists no 401 or 429 for one that is not.
    limited: bool = True
    #: What a request costs of the rate limit, from its scope (None: one request).
    cost: Callable[[Scope], int] | None = None


#: A score bound: an integer of at most 15 digits.
_SCORE_BOUND: Final = {"type": "integer", "minimum": -(10**15 - 1), "maximum": 10**15 - 1}

_DIFFICULTY = query_param(
    "difficulty",
    "Only puzzles of this difficulty, in any case: a record's `difficulty` can be passed back.",
    {"anyOf": [ref("Difficulty"), ref("DifficultyFilter")]},
)
_FILTERS = [
    query_param(
        "technique",
        (
            "Only puzzles whose solve path uses this technique, a name as `techniques` lists it (the server "
            "takes it in any case; `listTechniques` says how many puzzles use each). Another name is a 400."
        ),
        ref("TechniqueName"),
        example="X-Wing",
    ),
    query_param(
        "stars",
        "Only puzzles with this many stars.",
        {"type": "integer", "minimum": 1, "maximum": 5},
    ),
    query_param(
        "min_score",
        "Only puzzles whose score is at least this (inclusive; a puzzle with no score never does).",
        _SCORE_BOUND,
    ),
    query_param(
        "max_score",
        "Only puzzles whose score is at most this (inclusive; not below `min_score`: a 400).",
        _SCORE_BOUND,
    ),
]
_CLUE_FILTERS = [
    query_param(
        "min_clues",
        "Only puzzles with at least this many givens (inclusive).",
        {"type": "integer", "minimum": 0, "maximum": 81},
    ),
    query_param(
        "max_clues",
        "Only puzzles with at most this many givens (inclusive; not below `min_clues`: a 400).",
        {"type": "integer", "minimum": 0, "maximum": 81},
    ),
    query_param(
        "symmetry",
        "Only puzzles whose clue pattern has this symmetry (a record's `symmetry`; any case).",
        {"type": "string", "enum": list(SYMMETRIES)},
    ),
]
_FILTERS += _CLUE_FILTERS
_SEED = query_param(
    "seed",
    (
        "Fixes the order the matching puzzles are taken in: the same seed and filters give the same puzzles on "
        "every instance serving the same export."
    ),
    {"type": "integer", "minimum": 0, "maximum": MAX_SEED},
    example=42,
)
_TZ = query_param(
    "tz",
    (
        "An IANA time zone (such as `America/New_York`): today is that zone's date, and the answer may be cached "
        "until its midnight there. A date is the same puzzle in every zone. An unknown or empty name is a 400."
    ),
    {"type": "string", "minLength": 1},
    example="Europe/Paris",
)
_DAY = query_param(
    "date",
    (
        "The UTC day, default today. Days up to one after today (UTC) are served (a later one is a 404); a date "
        "that does not exist is a 400."
    ),
    {"type": "string", "format": "date"},
    example="2026-11-26",
)
_VARIANT = query_param(
    "variant",
    "Draw the puzzle or the solved grid (in any case).",
    {"type": "string", "enum": list(VARIANTS), "default": "puzzle"},
)
_IMAGE_FORMAT = query_param(
    "format",
    (
        "The image format, in any case: png (image/png, a palette PNG), webp (image/webp, lossless) or svg "
        "(image/svg+xml: a vector drawing with each digit a <text> element in row order)."
    ),
    {"type": "string", "enum": list(FORMATS), "default": "png"},
)
_IMAGE_SIZE = query_param(
    "size",
    "The edge in pixels: a PNG or WebP is exactly size x size; an SVG declares it as its width and height.",
    {"type": "integer", "minimum": MIN_SIZE, "maximum": MAX_SIZE, "default": DEFAULT_SIZE},
)
_IMAGE_PARAMS = [_VARIANT, _IMAGE_FORMAT, _IMAGE_SIZE]
_BINARY = {"schema": {"type": "string", "format": "binary"}}
_CHECKSUM_HEADERS = {
    "X-Checksum-SHA256": {"description": "The file's SHA-256, hex.", "schema": {"type": "string"}},
    "Repr-Digest": {"description": "The same SHA-256 as RFC 9530 writes it.", "schema": {"type": "string"}},
}
_IMAGE = {
    "description": (
        "The grid in the format asked: image/png (the default), image/webp or image/svg+xml. Each "
        "representation (variant, format, size) has its own ETag. It is also listed as "
        "application/octet-stream, the binary type some client generators read without configuration; "
        "the bytes are the same."
    ),
    "headers": {**rate_headers(), **CACHE_HEADERS},
    "content": {**{MEDIA_TYPES[fmt]: _BINARY for fmt in FORMATS}, "application/octet-stream": _BINARY},
}


_GRID_PARAM = {
    "name": "grid",
    "in": "path",
    "required": True,
    "description": "81 cells in row-major order: 1-9 for a given, '.' or '0' for an empty cell.",
    "schema": {"type": "string", "pattern": "^[0-9.]{81}$"},
    "example": "......8...174....3..697.....69.5.....4..6..2.....9.47.....193..8....726...2......",
}
_BOARD = {
    **query_param(
        "board",
        (
            "The player's board: the puzzle's givens and the player's entries, 81 cells as for a grid. A board that "
            "does not hold every given is a 400."
        ),
        {"type": "string", "pattern": "^[0-9.]{81}$"},
    ),
    "required": True,
}
_CANDIDATES = query_param(
    "candidates",
    (
        "The player's pencil marks: 81 comma-separated fields in row-major order, each the digits marked in that "
        "cell (`,,27,...`); an empty field marks nothing there. Marks narrow the candidates the hint is found from; "
        "marks that leave out the digit a cell needs are a 422 naming the cell."
    ),
    {"type": "string", "maxLength": 809},
)
_GRID_ERRORS = {
    400: json_response("GridError", "A malformed grid or board, or givens that clash (`cells` names them)."),
    422: json_response(
        "GridError", "The grid has no solution or several, or the pencil marks erase a needed digit (`cells`)."
    ),
}
_COMPUTED = (
    "Computed in a bounded pool of work apart from lookups: under /api/v2 an answer the server has not cached "
    "counts as several requests of the rate limit (SUDOKUPOOL_COST_GRADE, 10, for a grade; SUDOKUPOOL_COST_HINT, "
    "5, for a hint); when that pool is full, or the work takes longer than the server allows, the answer is a 503 "
    "with Retry-After. The same question always gives the same bytes, with an ETag and a long public Cache-Control."
)
_HINT = json_response("Hint", "What to fix, that the board is finished, or the next step.", **CACHE_HEADERS)


def _computed(
    op_id: str, tag: str, summary: str, ok: dict[str, Any], *errors: int, params: list[Any], description: str
) -> Any:
    """An operation whose answer the engine computes from a grid (a live grade, a hint): conditional
    (``If-None-Match``, 304), with the grid's 400 and 422, the engine's 503, any other ``errors``, and
    ``_COMPUTED`` after ``description``."""
    return operation(
        op_id,
        tag,
        summary,
        ok,
        304,
        400,
        *errors,
        422,
        503,
        params=[*params, IF_NONE_MATCH],
        unavailable="EngineUnavailable",
        bodies=_GRID_ERRORS,
        description=f"{description} {_COMPUTED}",
    )


def _redirect(op: dict[str, Any], description: str, cached: bool) -> dict[str, Any]:
    """``op`` answering with a redirect (302, ``Location``) in place of its 200."""
    responses = op["get"]["responses"]
    del responses["200"]
    headers = {**rate_headers(), "Location": {"description": "Where the image is.", "schema": {"type": "string"}}}
    if cached:
        headers["Cache-Control"] = {"$ref": "#/components/headers/Cache-Control"}
    responses["302"] = {"description": description, "headers": headers}
    op["get"]["responses"] = dict(sorted(responses.items()))
    return op


ROUTES: Final[tuple[ApiRoute, ...]] = (
    ApiRoute(
        "/health",
        Endpoints.health,
        operation(
            "health", "service", "Service health and the loaded export", json_response("Health", "The service is up.")
        ),
    ),
    ApiRoute(
        "/stats",
        Endpoints.stats,
        operation("stats", "stats", "Pool-wide counts", json_response("GlobalStats", "Counts of the pool.")),
    ),
    ApiRoute(
        "/stats/activity",
        Endpoints.activity,
        operation(
            "activity",
            "stats",
            "Aggregate play and download counters",
            json_response("ActivityStats", "Activity counters."),
        ),
    ),
    ApiRoute(
        "/puzzles/random",
        Endpoints.random,
        operation(
            "randomPuzzle",
            "puzzles",
            "A random puzzle, optionally filtered",
            json_response("PuzzlePublicRecord", "A puzzle (never cached).", **ENCODING_HEADERS),
            400,
            404,
            params=[_DIFFICULTY, *_FILTERS, _SEED],
            description=(
                "Uniformly at random among the puzzles that match every filter given (all of them when none is). "
                "With `seed`, the first puzzle of that seed's order (`listPuzzles`' first). Nothing matching is a "
                "404 whose error names the filters."
            ),
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/puzzles",
        puzzle_set,
        operation(
            "listPuzzles",
            "puzzles",
            "A set of distinct puzzles, optionally filtered, in a seeded order that pages without repeats",
            json_response("PuzzleSet", "The set (cacheable only when a seed was given).", **ENCODING_HEADERS),
            400,
            404,
            params=[
                query_param(
                    "count",
                    "How many puzzles (fewer at the end of the matches).",
                    {"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "default": DEFAULT_COUNT},
                ),
                _SEED,
                query_param(
                    "offset",
                    "Where in the seed's order to start (needs `seed`): the last answer's `next_offset`.",
                    {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "default": 0},
                ),
                _DIFFICULTY,
                *_FILTERS,
            ],
            description=(
                "`count` distinct puzzles matching every filter given (those of `randomPuzzle`): positions `offset` "
                "to `offset + count - 1` of one order of the matches fixed by `seed`, the same on every instance "
                "serving the export. Paging on with `next_offset` gives every match exactly once. Without a seed "
                "one is drawn, and named in the body. It counts as ceil(count / "
                f"{PUZZLES_PER_REQUEST}) requests against the rate limit (1 for up to {PUZZLES_PER_REQUEST}, "
                f"{-(-MAX_COUNT // PUZZLES_PER_REQUEST)} for {MAX_COUNT}). Nothing matching is a 404."
            ),
        ),
        unversioned=True,
        cost=set_cost,
    ),
    ApiRoute(
        "/puzzles/random/image",
        random_image,
        _redirect(
            operation(
                "randomPuzzleImage",
                "puzzles",
                "A redirect to the image of a random puzzle",
                {},
                400,
                404,
                params=[_DIFFICULTY, *_FILTERS, _SEED, *_IMAGE_PARAMS],
                description=(
                    "Picks as `randomPuzzle` does and redirects to that puzzle's `getPuzzleImage` with the image "
                    "parameters given: one URL for an `<img src>`. Not cacheable (`no-store`)."
                ),
            ),
            "Found: the image of the puzzle picked (Location).",
            cached=False,
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/puzzles/daily/image",
        daily_image,
        _redirect(
            operation(
                "dailyPuzzleImage",
                "puzzles",
                "A redirect to the image of the puzzle of the day",
                {},
                400,
                404,
                params=[_DIFFICULTY, *_CLUE_FILTERS, _DAY, _TZ, *_IMAGE_PARAMS],
                description=(
                    "Redirects to the `getPuzzleImage` of the puzzle `dailyPuzzle` gives for the same query, with "
                    "the image parameters given; cacheable until that day ends (in `tz` when given)."
                ),
            ),
            "Found: the image of the day's puzzle (Location).",
            cached=True,
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/puzzles/daily/archive",
        daily_archive,
        operation(
            "dailyArchive",
            "puzzles",
            f"The puzzles of the day of up to {MAX_DAYS} past days",
            json_response("DailyArchive", "The days, newest first.", **CACHE_HEADERS),
            304,
            400,
            params=[
                query_param(
                    "from",
                    f"The first day (default: {MAX_DAYS - 1} days before `to`).",
                    {"type": "string", "format": "date"},
                    example="2026-11-01",
                ),
                query_param(
                    "to",
                    "The last day, today (UTC) or earlier (default: today).",
                    {"type": "string", "format": "date"},
                    example="2026-11-26",
                ),
                _DIFFICULTY,
                IF_NONE_MATCH,
            ],
            description=(
                f"Each day from `from` to `to` (at most {MAX_DAYS} days; a longer span, or `to` after today, is a "
                "400) with its puzzle's share code, difficulty and stars, as `dailyPuzzle` gives them (of that "
                "difficulty, when given). Cacheable: until today ends when it lists today, else for a day."
            ),
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/puzzles/daily",
        Endpoints.daily,
        operation(
            "dailyPuzzle",
            "puzzles",
            "The puzzle of the day, the same for everyone",
            json_response("PuzzlePublicRecord", "The day's puzzle.", **CACHE_HEADERS, **ENCODING_HEADERS),
            304,
            400,
            404,
            params=[_DIFFICULTY, *_CLUE_FILTERS, _DAY, _TZ, IF_NONE_MATCH],
            description=(
                "The puzzle whose `used_at` falls earliest on that day (of that difficulty, clue range and "
                "symmetry, when given); on a day the export schedules none, a pick keyed by the export and the "
                "day, the same on every instance. Today (UTC, or in `tz`) and later days are cacheable until the "
                "end of their day (in `tz`), an earlier day's for a day."
            ),
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/puzzles/{id}",
        Endpoints.puzzle,
        operation(
            "getPuzzle",
            "puzzles",
            "A puzzle by its canonical_id (share code)",
            json_response("PuzzlePublicRecord", "The puzzle.", **CACHE_HEADERS, **ENCODING_HEADERS),
            304,
            404,
            params=[ID_PARAM, IF_NONE_MATCH],
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/puzzles/{id}/solution",
        Endpoints.solution,
        operation(
            "getSolution",
            "puzzles",
            "The solution of a puzzle",
            json_response("SolutionResponse", "The solution.", **CACHE_HEADERS),
            304,
            404,
            params=[ID_PARAM, IF_NONE_MATCH],
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/puzzles/{id}/image",
        Endpoints.image,
        operation(
            "getPuzzleImage",
            "puzzles",
            "A PNG, WebP or SVG picture of the puzzle or its solution",
            _IMAGE,
            304,
            400,
            404,
            503,
            params=[ID_PARAM, _VARIANT, _IMAGE_FORMAT, _IMAGE_SIZE, IF_NONE_MATCH],
            unavailable="WorkUnavailable",
            description=(
                "A picture the server has not cached yet is drawn on request, in a bounded pool of work apart from "
                "lookups: under /api/v2 it counts as several requests of the rate limit (5 by default; the "
                "X-RateLimit-Remaining header shows it), and when that pool is full the answer is a 503 with "
                "Retry-After. A cached picture counts as one request."
            ),
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/puzzles/{id}/hint",
        engine.puzzle_hint,
        _computed(
            "getPuzzleHint",
            "puzzles",
            "A hint for a player's board in a puzzle of the pool",
            _HINT,
            404,
            params=[ID_PARAM, _BOARD, _CANDIDATES],
            description=(
                "Entries that differ from the solution, and entries that clash, come first: the hint is to fix them. "
                "Otherwise the next step from the board: the easiest technique that applies to the board's "
                "candidates (narrowed by the pencil marks), as a solve-path step."
            ),
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/grids/{grid}",
        engine.grid,
        _computed(
            "getGrid",
            "grids",
            "Any grid: its record in the layout sent when the pool holds it, else a live grade",
            json_response("GridAnswer", "The record moved to the grid's layout, or the live grade.", **CACHE_HEADERS),
            params=[_GRID_PARAM],
            description=(
                "A grid the pool holds in any equivalent layout (rotated, mirrored, transposed, rows, columns, bands "
                "or stacks swapped, digits relabelled) is a lookup: never queued, it counts as one request. Any other "
                "grid is graded live."
            ),
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/grids/{grid}/hint",
        engine.grid_hint,
        _computed(
            "getGridHint",
            "grids",
            "A hint for a player's board in any grid",
            _HINT,
            params=[_GRID_PARAM, _BOARD, _CANDIDATES],
            description="As getPuzzleHint, for any grid with one solution.",
        ),
        unversioned=True,
    ),
    ApiRoute(
        "/techniques",
        Endpoints.techniques,
        operation(
            "listTechniques",
            "puzzles",
            "The techniques the grader knows, and how many puzzles use each",
            json_response("TechniqueCatalogue", "The catalogue (changes with the export).", **CACHE_HEADERS),
            304,
            params=[IF_NONE_MATCH],
        ),
    ),
    ApiRoute(
        "/pool-exports",
        Endpoints.pool_exports,
        operation(
            "poolExports",
            "exports",
            "Bulk NDJSON export snapshots in object storage",
            json_response("PoolExportsResponse", "Exports, newest first."),
            503,
        ),
    ),
    ApiRoute(
        "/pool-exports/{key}",
        export_download,
        operation(
            "downloadPoolExport",
            "exports",
            "Download one export (an NDJSON file, gzip-compressed when its name ends in .gz)",
            {
                "description": (
                    "The file (from a local directory), with Content-Length and its SHA-256 (the listing's `sha256`)."
                ),
                "headers": {**rate_headers(), **_CHECKSUM_HEADERS},
                "content": {
                    "application/gzip": _BINARY,
                    "application/x-ndjson": _BINARY,
                    "application/octet-stream": _BINARY,
                },
            },
            404,
            503,
            params=[
                {
                    "name": "key",
                    "in": "path",
                    "required": True,
                    "description": "An export's file name, as `poolExports` lists it (without any prefix).",
                    "schema": {"type": "string"},
                }
            ],
            description=(
                "From object storage, a redirect (302) to a presigned URL valid for at most an hour "
                "(`SUDOKUPOOL_EXPORT_URL_SECONDS`). A name that is not one of the exports' (a pack, a path) is "
                "a 404."
            ),
        ),
    ),
    ApiRoute(
        "/openapi.json",
        Endpoints.openapi,
        {
            "description": METHODS_NOTE,
            "get": {
                "tags": ["service"],
                "operationId": "openapi",
                # No `security: [{}]` of its own, although no key is checked here: openapi-python-client makes
                # any operation with a security list demand its AuthenticatedClient. The document-wide
                # list (a key is optional) holds here too.
                "summary": "This document (not rate-limited, no key needed)",
                "responses": {
                    "200": {
                        "description": "The OpenAPI 3.0.3 document.",
                        "headers": ENCODING_HEADERS,
                        "content": {JSON: {"schema": ref("OpenApiDocument")}},
                    }
                },
            },
        },
        limited=False,
    ),
)

#: The full paths under ``/api/v2`` that the limiter lets through uncounted.
UNLIMITED_PATHS: Final = frozenset(V2 + route.path for route in ROUTES if not route.limited)


def _bound(route: ApiRoute, endpoints: Endpoints) -> Handler | AsyncHandler:
    """The route's handler as ``endpoints``' bound method (what ``endpoints.<name>`` gives)."""
    return cast(Handler | AsyncHandler, MethodType(route.handler, endpoints))


def api_costs() -> dict[str, Callable[[Scope], int]]:
    """The paths that cost more than one request of the rate limit, with what they cost."""
    return {route.path: route.cost for route in ROUTES if route.cost is not None}


def api_routes(endpoints: Endpoints) -> dict[str, Handler | AsyncHandler]:
    """Every path of the versioned API (``/api/v2`` and its alias ``/api/v1``), with its handler."""
    return {route.path: _bound(route, endpoints) for route in ROUTES}


def puzzle_routes(endpoints: Endpoints) -> dict[str, Handler | AsyncHandler]:
    """The puzzle paths (``{id}`` is the share code): also served unversioned, for the web page."""
    return {route.path: _bound(route, endpoints) for route in ROUTES if route.unversioned}


@cache
def document() -> dict[str, Any]:
    """The OpenAPI document as a dict: a path item per route."""
    return build_document({V2 + route.path: route.operation for route in ROUTES})


def openapi_body() -> bytes:
    """The document, serialized once."""
    return orjson.dumps(document())
