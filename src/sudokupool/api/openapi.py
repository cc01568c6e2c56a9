"""The OpenAPI 3.0.3 description of ``/api/v2``, built once and served as prepared bytes.

It is a client contract: generated clients (openapi-python-client, openapi-typescript,
datamodel-code-generator) must work from it without configuration or casts, and
``tests/api/test_openapi_clients.py`` generates them and calls every operation against a real server.
The bodies' schemas are in ``schemas.py``. Here, the operations: the image is listed under each
format's media type and also under ``application/octet-stream``, the one binary type
openapi-python-client reads without a config file (the bytes and the ``Content-Type`` header of the
format asked are the same either way), and the difficulty
filter accepts the record's own ``Difficulty`` enum besides the lower-case names."""

from __future__ import annotations

from functools import cache
from typing import Any, Final

import orjson

from sudokupool import __version__
from sudokupool.api.schemas import SCHEMAS, ref
from sudokupool.images.render import DEFAULT_SIZE, FORMATS, MAX_SIZE, MEDIA_TYPES, MIN_SIZE, VARIANTS

JSON: Final = "application/json"
RATE_HEADERS: Final = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")

# Said on every path: OpenAPI lists responses per operation, and these methods have none of their own.
METHODS_NOTE: Final = (
    "HEAD is answered like GET, without the body. Any other method is answered 405 "
    '`{"error": "method not allowed"}` with `Allow: GET, HEAD` (a CORS preflight is answered by the CORS layer).'
)


def _rate_headers() -> dict[str, Any]:
    return {name: {"$ref": f"#/components/headers/{name}"} for name in RATE_HEADERS}


def _json(schema: str, description: str, **headers: Any) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {**_rate_headers(), **headers},
        "content": {JSON: {"schema": ref(schema)}},
    }


def _response(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/responses/{name}"}


def _operation(
    op_id: str,
    tag: str,
    summary: str,
    ok: dict[str, Any],
    *errors: int,
    params: list[Any] | None = None,
    description: str | None = None,
) -> Any:
    """A rate-limited GET path: its 200, the given ``errors`` (304, 400, 404, 503) and the limiter's 401, 429, 503."""
    texts = {400: "Invalid parameter value (the error names the allowed values).", 404: "Not found."}
    responses: dict[str, Any] = {"200": ok}
    for status in errors:
        if status == 304:
            responses["304"] = _response("NotModified")
        elif status == 503:
            responses["503"] = _response("ExportsUnavailable")
        else:
            responses[str(status)] = _json("Error", texts[status])
    responses["401"] = _response("Unauthorized")
    responses["429"] = _response("TooManyRequests")
    responses["500"] = _response("ServerError")
    responses.setdefault("503", _response("LimiterUnavailable"))
    get = {"tags": [tag], "operationId": op_id, "summary": summary}
    if description:
        get["description"] = description
    return {
        "description": METHODS_NOTE,
        "get": {**get, "parameters": params or [], "responses": dict(sorted(responses.items()))},
    }


_PARAM = "#/components/parameters/"
_ID_PARAM = {"$ref": _PARAM + "PuzzleId"}
_IF_NONE_MATCH = {"$ref": _PARAM + "IfNoneMatch"}
_CACHE_HEADERS = {
    "ETag": {"$ref": "#/components/headers/ETag"},
    "Cache-Control": {"$ref": "#/components/headers/Cache-Control"},
}

#: By-id, random and this document are sent gzip-coded to clients that accept it (docs/api.md).
_ENCODING_HEADERS = {
    "Content-Encoding": {"$ref": "#/components/headers/Content-Encoding"},
    "Vary": {"$ref": "#/components/headers/Vary"},
}

#: A score bound: an integer of at most 15 digits.
_SCORE_BOUND: Final = {"type": "integer", "minimum": -(10**15 - 1), "maximum": 10**15 - 1}

_TAGS = [
    {
        "name": "puzzles",
        "description": (
            "Puzzles: a random one (filtered by difficulty, technique, stars or score), the puzzle of the day, one "
            "by its share code, its solution, its image; the technique catalogue."
        ),
    },
    {"name": "stats", "description": "Counts of the pool and of its use."},
    {"name": "exports", "description": "The bulk NDJSON export snapshots in object storage."},
    {"name": "service", "description": "Health and this document."},
]


def _components() -> dict[str, Any]:
    return {
        "securitySchemes": {
            "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "ApiKeyQuery": {"type": "apiKey", "in": "query", "name": "api_key"},
        },
        "parameters": {
            "PuzzleId": {
                "name": "id",
                "in": "path",
                "required": True,
                "description": "The puzzle's canonical_id (case-insensitive).",
                "schema": {"type": "string"},
            },
            "IfNoneMatch": {
                "name": "If-None-Match",
                "in": "header",
                "required": False,
                "description": "An ETag from an earlier response: 304 with no body when it still matches.",
                "schema": {"type": "string"},
            },
        },
        "headers": {
            "X-RateLimit-Limit": {"description": "Requests allowed per window.", "schema": {"type": "integer"}},
            "X-RateLimit-Remaining": {"description": "Requests left in the window.", "schema": {"type": "integer"}},
            "X-RateLimit-Reset": {"description": "Seconds until the window resets.", "schema": {"type": "integer"}},
            "Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}},
            "ETag": {"description": "Weak validator for If-None-Match.", "schema": {"type": "string"}},
            "Cache-Control": {"description": "How long caches may keep the response.", "schema": {"type": "string"}},
            "Content-Encoding": {
                "description": "`gzip` when the request's Accept-Encoding takes gzip; absent otherwise.",
                "schema": {"type": "string", "enum": ["gzip"]},
            },
            "Vary": {"description": "Always `Accept-Encoding`.", "schema": {"type": "string"}},
        },
        "responses": {
            "NotModified": {
                "description": "Not modified: the client's copy (If-None-Match) is current. No body.",
                "headers": {**_rate_headers(), **_CACHE_HEADERS},
            },
            "Unauthorized": _json("Error", "The API key is not an issued key."),
            "TooManyRequests": {
                "description": "Rate limit exceeded.",
                "headers": {**_rate_headers(), "Retry-After": {"$ref": "#/components/headers/Retry-After"}},
                "content": {JSON: {"schema": ref("RateLimitError")}},
            },
            "ServerError": _json("Error", "Unexpected server error."),
            "LimiterUnavailable": _json(
                "Error", "The shared rate limiter (Redis) failed and the service is set to refuse meanwhile."
            ),
            "ExportsUnavailable": _json(
                "Error",
                "Object storage cannot be listed right now (a failed listing is remembered for 5 s) or is slow "
                "to give a first listing, with Retry-After; or the shared rate limiter failed (see "
                "LimiterUnavailable).",
                **{"Retry-After": {"$ref": "#/components/headers/Retry-After"}},
            ),
        },
        "schemas": SCHEMAS,
    }


@cache
def document() -> dict[str, Any]:
    """The OpenAPI document as a dict."""
    difficulty = {
        "name": "difficulty",
        "in": "query",
        "required": False,
        "description": "Only puzzles of this difficulty, in any case: a record's `difficulty` can be passed back.",
        "schema": {"anyOf": [ref("Difficulty"), ref("DifficultyFilter")]},
    }
    filters = [
        {
            "name": "technique",
            "in": "query",
            "required": False,
            "description": (
                "Only puzzles whose solve path uses this technique, a name as `techniques` lists it (the server "
                "takes it in any case; `listTechniques` says how many puzzles use each). Another name is a 400."
            ),
            "schema": ref("TechniqueName"),
            "example": "X-Wing",
        },
        {
            "name": "stars",
            "in": "query",
            "required": False,
            "description": "Only puzzles with this many stars.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 5},
        },
        {
            "name": "min_score",
            "in": "query",
            "required": False,
            "description": "Only puzzles whose score is at least this (inclusive; a puzzle with no score never does).",
            "schema": _SCORE_BOUND,
        },
        {
            "name": "max_score",
            "in": "query",
            "required": False,
            "description": "Only puzzles whose score is at most this (inclusive; not below `min_score`: a 400).",
            "schema": _SCORE_BOUND,
        },
    ]
    day = {
        "name": "date",
        "in": "query",
        "required": False,
        "description": (
            "The UTC day, default today. Days up to one after today (UTC) are served (a later one is a 404); a date "
            "that does not exist is a 400."
        ),
        "schema": {"type": "string", "format": "date"},
        "example": "2026-11-26",
    }
    variant = {
        "name": "variant",
        "in": "query",
        "required": False,
        "description": "Draw the puzzle or the solved grid (in any case).",
        "schema": {"type": "string", "enum": list(VARIANTS), "default": "puzzle"},
    }
    image_format = {
        "name": "format",
        "in": "query",
        "required": False,
        "description": (
            "The image format, in any case: png (image/png, a palette PNG), webp (image/webp, lossless) or svg "
            "(image/svg+xml: a vector drawing with each digit a <text> element in row order)."
        ),
        "schema": {"type": "string", "enum": list(FORMATS), "default": "png"},
    }
    image_size = {
        "name": "size",
        "in": "query",
        "required": False,
        "description": (
            "The edge in pixels: a PNG or WebP is exactly size x size; an SVG declares it as its width and height."
        ),
        "schema": {"type": "integer", "minimum": MIN_SIZE, "maximum": MAX_SIZE, "default": DEFAULT_SIZE},
    }
    binary = {"schema": {"type": "string", "format": "binary"}}
    png = {
        "description": (
            "The grid in the format asked: image/png (the default), image/webp or image/svg+xml. Each "
            "representation (variant, format, size) has its own ETag. It is also listed as "
            "application/octet-stream, the binary type some client generators read without configuration; "
            "the bytes are the same."
        ),
        "headers": {**_rate_headers(), **_CACHE_HEADERS},
        "content": {**{MEDIA_TYPES[fmt]: binary for fmt in FORMATS}, "application/octet-stream": binary},
    }
    paths = {
        "/api/v2/health": _operation(
            "health", "service", "Service health and the loaded export", _json("Health", "The service is up.")
        ),
        "/api/v2/stats": _operation("stats", "stats", "Pool-wide counts", _json("GlobalStats", "Counts of the pool.")),
        "/api/v2/stats/activity": _operation(
            "activity", "stats", "Aggregate play and download counters", _json("ActivityStats", "Activity counters.")
        ),
        "/api/v2/puzzles/random": _operation(
            "randomPuzzle",
            "puzzles",
            "A random puzzle, optionally filtered",
            _json("PuzzlePublicRecord", "A puzzle (never cached).", **_ENCODING_HEADERS),
            400,
            404,
            params=[difficulty, *filters],
            description=(
                "Uniformly at random among the puzzles that match every filter given (all of them when none is). "
                "Nothing matching is a 404 whose error names the filters."
            ),
        ),
        "/api/v2/puzzles/daily": _operation(
            "dailyPuzzle",
            "puzzles",
            "The puzzle of the day, the same for everyone",
            _json("PuzzlePublicRecord", "The day's puzzle.", **_CACHE_HEADERS, **_ENCODING_HEADERS),
            304,
            400,
            404,
            params=[difficulty, day, _IF_NONE_MATCH],
            description=(
                "The puzzle whose `used_at` falls earliest on that UTC day (of that difficulty, when given); on a "
                "day the export schedules none, a pick keyed by the export and the day, the same on every "
                "instance. Today's and tomorrow's are cacheable until the end of their day, an earlier day's for "
                "a day."
            ),
        ),
        "/api/v2/puzzles/{id}": _operation(
            "getPuzzle",
            "puzzles",
            "A puzzle by its canonical_id (share code)",
            _json("PuzzlePublicRecord", "The puzzle.", **_CACHE_HEADERS, **_ENCODING_HEADERS),
            304,
            404,
            params=[_ID_PARAM, _IF_NONE_MATCH],
        ),
        "/api/v2/puzzles/{id}/solution": _operation(
            "getSolution",
            "puzzles",
            "The solution of a puzzle",
            _json("SolutionResponse", "The solution.", **_CACHE_HEADERS),
            304,
            404,
            params=[_ID_PARAM, _IF_NONE_MATCH],
        ),
        "/api/v2/puzzles/{id}/image": _operation(
            "getPuzzleImage",
            "puzzles",
            "A PNG, WebP or SVG picture of the puzzle or its solution",
            png,
            304,
            400,
            404,
            params=[_ID_PARAM, variant, image_format, image_size, _IF_NONE_MATCH],
        ),
        "/api/v2/techniques": _operation(
            "listTechniques",
            "puzzles",
            "The techniques the grader knows, and how many puzzles use each",
            _json("TechniqueCatalogue", "The catalogue (changes with the export).", **_CACHE_HEADERS),
            304,
            params=[_IF_NONE_MATCH],
        ),
        "/api/v2/pool-exports": _operation(
            "poolExports",
            "exports",
            "Bulk NDJSON export snapshots in object storage",
            _json("PoolExportsResponse", "Exports, newest first."),
            503,
        ),
        "/api/v2/openapi.json": {
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
                        "headers": _ENCODING_HEADERS,
                        "content": {JSON: {"schema": ref("OpenApiDocument")}},
                    }
                },
            },
        },
    }
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "sudokupool: Sudoku puzzle pool API",
            "version": __version__,
            "description": (
                "A read-only pool of graded Sudoku puzzles. Every endpoint works without a key; a key only "
                "raises the rate limit (anonymous 60/min per client address, keyed 600/min per key, pro "
                "6000/min). /api/v1/* is a permanent, unlimited alias of these paths. " + METHODS_NOTE
            ),
            "license": {"name": "MIT", "url": "https://opensource.org/licenses/MIT"},
            "contact": {"name": "sudokupool maintainers"},
        },
        "servers": [{"url": "/"}],
        "security": [{}, {"ApiKeyHeader": []}, {"ApiKeyQuery": []}],
        "tags": _TAGS,
        "paths": paths,
        "components": _components(),
    }


def openapi_body() -> bytes:
    """The document, serialized once."""
    return orjson.dumps(document())
