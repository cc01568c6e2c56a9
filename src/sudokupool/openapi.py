"""The OpenAPI 3.0.3 description of ``/api/v2``, built once and served as prepared bytes.

It is a client contract: generated clients (openapi-python-client, openapi-typescript,
datamodel-code-generator) must work from it without configuration or casts, and
``tests/test_openapi_clients.py`` generates them and calls every operation against a real server.
What that asks of the document: every object has typed properties and every item is a named
component; the PNG is also listed under ``application/octet-stream``, the one binary type openapi-python-client
reads without a config file (the bytes and the ``Content-Type: image/png`` header are the same either way);
the difficulty filter accepts the record's own ``Difficulty`` enum besides the lower-case names.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

import orjson

from sudokupool import __version__
from sudokupool.activity import DOWNLOADS, PLAYS
from sudokupool.export import DIFFICULTIES
from sudokupool.sudoku.symmetry import SYMMETRIES

JSON: Final = "application/json"
RATE_HEADERS: Final = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
CODE_PATTERN: Final = "^[0-9A-HJKMNP-TV-Z]{13}$"

# Said on every path: OpenAPI lists responses per operation, and these methods have none of their own.
METHODS_NOTE: Final = (
    "HEAD is answered like GET, without the body. Any other method is answered 405 "
    '`{"error": "method not allowed"}` with `Allow: GET, HEAD` (a CORS preflight is answered by the CORS layer).'
)


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "nullable": True, **extra}


def _object(properties: dict[str, Any], description: str | None = None, **extra: Any) -> dict[str, Any]:
    """An object schema whose properties are all required (every response field is always present)."""
    head = {"description": description} if description else {}
    return {**head, "type": "object", "required": list(properties), "properties": properties, **extra}


def _rate_headers() -> dict[str, Any]:
    return {name: {"$ref": f"#/components/headers/{name}"} for name in RATE_HEADERS}


def _json(schema: str, description: str, **headers: Any) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {**_rate_headers(), **headers},
        "content": {JSON: {"schema": _ref(schema)}},
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

_EPOCH = "Seconds since the Unix epoch, UTC."

_SCHEMAS: dict[str, Any] = {
    "Difficulty": {"type": "string", "enum": list(DIFFICULTIES), "description": "A puzzle's difficulty."},
    "DifficultyFilter": {
        "type": "string",
        "enum": [name.lower() for name in DIFFICULTIES],
        "description": "A difficulty in lower case (the filter ignores case; `Difficulty` values work too).",
    },
    "PuzzlePublicRecord": _object(
        {
            "canonical_id": {"type": "string", "pattern": CODE_PATTERN, "example": "7XQ2M9KD4HB1C"},
            "puzzle_id": {"type": "string", "pattern": CODE_PATTERN},
            "puzzle": {"type": "string", "pattern": "^[.1-9]{81}$", "description": "Row-major, '.' for empty."},
            "canonical": {"type": "string", "pattern": "^[.1-9]{81}$", "description": "Minlex canonical form."},
            "difficulty": _ref("Difficulty"),
            "difficulty_level": {"type": "integer", "minimum": 1, "maximum": 4},
            "clue_count": {"type": "integer", "minimum": 17, "maximum": 81},
            "symmetric": {"type": "boolean"},
            "symmetry": {"type": "string", "enum": list(SYMMETRIES)},
            "seed": _nullable("integer"),
            "created_at": {"type": "integer", "description": _EPOCH},
            "tags": {"type": "array", "items": {"type": "string"}},
            "score": _nullable("number"),
            "tier": _nullable("string"),
            "stars": _nullable("integer", minimum=1, maximum=5),
            "hardest_technique": _nullable("string"),
            "techniques": {"type": "array", "items": {"type": "string"}},
            "solve_path": {"type": "array", "nullable": True, "items": _ref("SolveStep")},
            "source": {"type": "string"},
            "volume": _nullable("string"),
            "used_at": _nullable("integer", description=_EPOCH),
            "synced_at": {"type": "integer", "description": "When this instance loaded the puzzle (epoch seconds)."},
        },
        "A puzzle without its answer. Formats: docs/export-format.md.",
        additionalProperties=False,
    ),
    "SolveStep": {
        "type": "object",
        "description": "One solving step (docs/export-format.md).",
        "required": ["technique", "placements", "eliminations", "explanation"],
        "properties": {
            "technique": {"type": "string"},
            "score": {"type": "integer"},
            "placements": {"type": "array", "items": _ref("CellDigit")},
            "eliminations": {"type": "array", "items": _ref("CellDigit")},
            "cells": {"type": "array", "items": {"type": "string"}},
            "houses": {"type": "array", "items": {"type": "string"}},
            "digits": {"type": "array", "items": {"type": "integer"}},
            "explanation": {"type": "string"},
        },
    },
    "CellDigit": _object(
        {
            "cell": {"type": "string", "pattern": "^r[1-9]c[1-9]$", "example": "r1c7"},
            "digit": {"type": "integer", "minimum": 1, "maximum": 9},
        },
        "A digit placed in, or eliminated from, a cell.",
    ),
    "SolutionResponse": _object(
        {
            "canonical_id": {"type": "string", "pattern": CODE_PATTERN},
            "solution": {"type": "string", "pattern": "^[1-9]{81}$"},
        }
    ),
    "GlobalStats": _object(
        {
            "total": {"type": "integer", "minimum": 0},
            "by_difficulty": _ref("DifficultyCounts"),
            "last_synced_at": _nullable("integer", description=_EPOCH),
        }
    ),
    "DifficultyCounts": _object(
        {name: {"type": "integer", "minimum": 0} for name in DIFFICULTIES}, "Puzzles of each difficulty."
    ),
    "ActivityStats": _object(
        {
            "scope": {"type": "string", "enum": ["instance", "cluster"]},
            "covers": {"type": "string", "description": "What the counts cover, in words."},
            "since": _nullable("integer", description=_EPOCH),
            "plays": _ref("PlayCounts"),
            "downloads": _ref("DownloadCounts"),
        },
        "Aggregate counters, no personal data. `scope` says what they cover.",
    ),
    "PlayCounts": _object(
        {name: {"type": "integer", "minimum": 0} for name in (*PLAYS, "total")}, "Puzzles served to play."
    ),
    "DownloadCounts": _object(
        {name: {"type": "integer", "minimum": 0} for name in (*DOWNLOADS, "total")},
        "Solutions, images and export listings served.",
    ),
    "Health": _object(
        {
            "ok": {"type": "boolean"},
            "puzzles": {"type": "integer", "minimum": 0},
            "export": _ref("LoadedExport"),
            "sync": _ref("SyncStatus"),
        }
    ),
    "LoadedExport": _object(
        {
            "source": {"type": "string", "description": "Where exports are read from."},
            "key": {
                "type": "string",
                "description": "The loaded export's name.",
                "example": "pool-20261122T100000Z.ndjson.gz",
            },
            "size": {"type": "integer", "minimum": 0, "description": "Its size in bytes."},
            "loaded_at": {"type": "integer", "description": _EPOCH},
            "age_seconds": {"type": "integer"},
            "exported_at": _nullable("integer", description="The time in the export's name; null without one."),
            "export_age_seconds": _nullable("integer"),
            "fallback": {"type": "boolean", "description": "Serving the fallback export (storage was unreachable)."},
        },
        "The export the pool was loaded from.",
    ),
    "SyncStatus": _object(
        {
            "interval_seconds": {"type": "number", "description": "0: live sync is off."},
            "last_attempt_at": _nullable("integer", description=_EPOCH),
            "last_success_at": _nullable("integer", description=_EPOCH),
            "last_error": _nullable("string", description="The most recent failure; it stays after later successes."),
            "last_error_at": _nullable("integer", description=_EPOCH),
        },
        "The last look for a newer export.",
    ),
    "PoolExportsResponse": _object(
        {"objects": {"type": "array", "items": _ref("PoolExport")}, "truncated": {"type": "boolean"}}
    ),
    "PoolExport": _object(
        {
            "key": {"type": "string", "example": "pool-20261122T100000Z.ndjson.gz"},
            "size": {"type": "integer", "minimum": 0},
            "uploaded": {"type": "string", "format": "date-time"},
        },
        "One export snapshot in object storage.",
    ),
    "Error": _object({"error": {"type": "string"}}),
    "RateLimitError": _object(
        {
            "error": {"type": "string", "example": "rate limit exceeded"},
            "retry_after_seconds": {"type": "integer", "minimum": 0},
        }
    ),
    "OpenApiDocument": {
        "type": "object",
        "description": "An OpenAPI 3.0.3 document (this one).",
        "required": ["openapi", "info", "paths"],
        "properties": {
            "openapi": {"type": "string", "example": "3.0.3"},
            "info": _ref("OpenApiInfo"),
            "paths": {"type": "object", "additionalProperties": {"type": "object"}},
            "components": {"type": "object", "additionalProperties": {"type": "object"}},
        },
    },
    "OpenApiInfo": {
        "type": "object",
        "required": ["title", "version"],
        "properties": {"title": {"type": "string"}, "version": {"type": "string"}, "description": {"type": "string"}},
    },
}

_TAGS = [
    {"name": "puzzles", "description": "Puzzles: a random one, one by its share code, its solution, its image."},
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
                "content": {JSON: {"schema": _ref("RateLimitError")}},
            },
            "ServerError": _json("Error", "Unexpected server error."),
            "LimiterUnavailable": _json(
                "Error", "The shared rate limiter (Redis) failed and the service is set to refuse meanwhile."
            ),
            "ExportsUnavailable": _json(
                "Error",
                "Object storage cannot be listed right now and no cached listing is left, or the shared rate "
                "limiter failed (see LimiterUnavailable).",
            ),
        },
        "schemas": _SCHEMAS,
    }


@cache
def document() -> dict[str, Any]:
    """The OpenAPI document as a dict."""
    difficulty = {
        "name": "difficulty",
        "in": "query",
        "required": False,
        "description": "Only puzzles of this difficulty, in any case: a record's `difficulty` can be passed back.",
        "schema": {"anyOf": [_ref("Difficulty"), _ref("DifficultyFilter")]},
    }
    variant = {
        "name": "variant",
        "in": "query",
        "required": False,
        "description": "Draw the puzzle or the solved grid.",
        "schema": {"type": "string", "enum": ["puzzle", "solution"], "default": "puzzle"},
    }
    binary = {"schema": {"type": "string", "format": "binary"}}
    png = {
        "description": (
            "The grid as a PNG image, sent as image/png. It is also listed as application/octet-stream, the "
            "binary type some client generators read without configuration; the bytes are the same."
        ),
        "headers": {**_rate_headers(), **_CACHE_HEADERS},
        "content": {"image/png": binary, "application/octet-stream": binary},
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
            "A random puzzle, optionally of one difficulty",
            _json("PuzzlePublicRecord", "A puzzle (never cached)."),
            400,
            404,
            params=[difficulty],
        ),
        "/api/v2/puzzles/{id}": _operation(
            "getPuzzle",
            "puzzles",
            "A puzzle by its canonical_id (share code)",
            _json("PuzzlePublicRecord", "The puzzle.", **_CACHE_HEADERS),
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
            "A PNG of the puzzle or its solution",
            png,
            304,
            400,
            404,
            params=[_ID_PARAM, variant, _IF_NONE_MATCH],
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
                        "content": {JSON: {"schema": _ref("OpenApiDocument")}},
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
