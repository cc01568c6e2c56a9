"""The OpenAPI 3.0.3 description of ``/api/v2``, built once and served as prepared bytes."""

from __future__ import annotations

from functools import cache
from typing import Any

import orjson

from sudokupool import __version__
from sudokupool.export import DIFFICULTIES
from sudokupool.sudoku.symmetry import SYMMETRIES

JSON = "application/json"
RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "nullable": True, **extra}


def _rate_headers() -> dict[str, Any]:
    return {name: {"$ref": f"#/components/headers/{name}"} for name in RATE_HEADERS}


def _json(status_schema: str, description: str, **headers: Any) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {**_rate_headers(), **headers},
        "content": {JSON: {"schema": _ref(status_schema)}},
    }


def _errors(*statuses: int) -> dict[str, Any]:
    texts = {
        304: "Not modified: the client's copy (If-None-Match) is current.",
        400: "Invalid parameter value.",
        404: "Not found.",
        503: "Storage is unreachable or slow to answer; try again after Retry-After seconds.",
    }
    out: dict[str, Any] = {}
    for status in statuses:
        if status == 304:
            out["304"] = {
                "description": texts[304],
                "headers": {**_rate_headers(), "ETag": {"$ref": "#/components/headers/ETag"}},
            }
        elif status == 503:
            out["503"] = _json("Error", texts[503], **{"Retry-After": {"$ref": "#/components/headers/Retry-After"}})
        else:
            out[str(status)] = _json("Error", texts[status])
    out["401"] = {"$ref": "#/components/responses/Unauthorized"}
    out["429"] = {"$ref": "#/components/responses/TooManyRequests"}
    out["500"] = {"$ref": "#/components/responses/ServerError"}
    return out


def _operation(op_id: str, summary: str, ok: dict[str, Any], *errors: int, params: list[Any] | None = None) -> Any:
    return {
        "get": {
            "operationId": op_id,
            "summary": summary,
            "parameters": params or [],
            "responses": {"200": ok, **_errors(*errors)},
        }
    }


_ID_PARAM = {"$ref": "#/components/parameters/PuzzleId"}
_CACHE_HEADERS = {"ETag": {"$ref": "#/components/headers/ETag"}, "Cache-Control": {"schema": {"type": "string"}}}

_PUZZLE = {
    "type": "object",
    "description": "A puzzle without its answer. Formats: docs/export-format.md.",
    "required": [
        "canonical_id",
        "puzzle_id",
        "puzzle",
        "canonical",
        "difficulty",
        "difficulty_level",
        "clue_count",
        "symmetric",
        "symmetry",
        "seed",
        "created_at",
        "tags",
        "score",
        "tier",
        "stars",
        "hardest_technique",
        "techniques",
        "solve_path",
        "source",
        "volume",
        "used_at",
        "synced_at",
    ],
    "additionalProperties": False,
    "properties": {
        "canonical_id": {"type": "string", "pattern": "^[0-9A-HJKMNP-TV-Z]{13}$", "example": "7XQ2M9KD4HB1C"},
        "puzzle_id": {"type": "string", "pattern": "^[0-9A-HJKMNP-TV-Z]{13}$"},
        "puzzle": {"type": "string", "pattern": "^[.1-9]{81}$", "description": "Row-major, '.' for empty."},
        "canonical": {"type": "string", "pattern": "^[.1-9]{81}$", "description": "Minlex canonical form."},
        "difficulty": {"type": "string", "enum": list(DIFFICULTIES)},
        "difficulty_level": {"type": "integer", "minimum": 1, "maximum": 4},
        "clue_count": {"type": "integer", "minimum": 17, "maximum": 81},
        "symmetric": {"type": "boolean"},
        "symmetry": {"type": "string", "enum": list(SYMMETRIES)},
        "seed": _nullable("integer"),
        "created_at": {"type": "integer", "description": "Seconds since the Unix epoch, UTC."},
        "tags": {"type": "array", "items": {"type": "string"}},
        "score": _nullable("number"),
        "tier": _nullable("string"),
        "stars": _nullable("integer", minimum=1, maximum=5),
        "hardest_technique": _nullable("string"),
        "techniques": {"type": "array", "items": {"type": "string"}},
        "solve_path": {"type": "array", "nullable": True, "items": _ref("SolveStep")},
        "source": {"type": "string"},
        "volume": _nullable("string"),
        "used_at": _nullable("integer", description="Seconds since the Unix epoch, UTC."),
        "synced_at": {"type": "integer", "description": "When this instance loaded the puzzle (epoch seconds)."},
    },
}

_CELL_DIGIT = {
    "type": "object",
    "required": ["cell", "digit"],
    "properties": {
        "cell": {"type": "string", "pattern": "^r[1-9]c[1-9]$"},
        "digit": {"type": "integer", "minimum": 1, "maximum": 9},
    },
}

_STEP = {
    "type": "object",
    "description": "One solving step (docs/export-format.md).",
    "required": ["technique", "placements", "eliminations", "explanation"],
    "properties": {
        "technique": {"type": "string"},
        "score": {"type": "integer"},
        "placements": {"type": "array", "items": _CELL_DIGIT},
        "eliminations": {"type": "array", "items": _CELL_DIGIT},
        "cells": {"type": "array", "items": {"type": "string"}},
        "houses": {"type": "array", "items": {"type": "string"}},
        "digits": {"type": "array", "items": {"type": "integer"}},
        "explanation": {"type": "string"},
    },
}

_COUNTS = {"type": "object", "additionalProperties": {"type": "integer"}}


@cache
def document() -> dict[str, Any]:
    """The OpenAPI document as a dict."""
    difficulty = {
        "name": "difficulty",
        "in": "query",
        "required": False,
        "description": "Only puzzles of this difficulty (case-insensitive).",
        "schema": {"type": "string", "enum": ["easy", "medium", "hard", "expert"]},
    }
    variant = {
        "name": "variant",
        "in": "query",
        "required": False,
        "description": "Draw the puzzle or the solved grid.",
        "schema": {"type": "string", "enum": ["puzzle", "solution"], "default": "puzzle"},
    }
    png = {
        "description": "The grid as a PNG image.",
        "headers": {**_rate_headers(), **_CACHE_HEADERS},
        "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}},
    }
    paths = {
        "/api/v2/health": _operation(
            "health", "Service health and the loaded export", _json("Health", "The service is up.")
        ),
        "/api/v2/stats": _operation("stats", "Pool-wide counts", _json("GlobalStats", "Counts of the pool.")),
        "/api/v2/stats/activity": _operation(
            "activity", "Aggregate play and download counters", _json("ActivityStats", "Activity counters.")
        ),
        "/api/v2/puzzles/random": _operation(
            "randomPuzzle",
            "A random puzzle, optionally of one difficulty",
            _json("PuzzlePublicRecord", "A puzzle (never cached)."),
            400,
            404,
            params=[difficulty],
        ),
        "/api/v2/puzzles/{id}": _operation(
            "getPuzzle",
            "A puzzle by its canonical_id (share code)",
            _json("PuzzlePublicRecord", "The puzzle.", **_CACHE_HEADERS),
            304,
            404,
            params=[_ID_PARAM],
        ),
        "/api/v2/puzzles/{id}/solution": _operation(
            "getSolution",
            "The solution of a puzzle",
            _json("SolutionResponse", "The solution.", **_CACHE_HEADERS),
            304,
            404,
            params=[_ID_PARAM],
        ),
        "/api/v2/puzzles/{id}/image": _operation(
            "getPuzzleImage", "A PNG of the puzzle or its solution", png, 304, 400, 404, params=[_ID_PARAM, variant]
        ),
        "/api/v2/pool-exports": _operation(
            "poolExports",
            "Bulk NDJSON export snapshots in object storage",
            _json("PoolExportsResponse", "Exports."),
            503,
        ),
        "/api/v2/openapi.json": {
            "get": {
                "operationId": "openapi",
                "summary": "This document (not rate-limited, no key needed)",
                "security": [{}],
                "responses": {
                    "200": {"description": "OpenAPI 3.0.3 document.", "content": {JSON: {"schema": {"type": "object"}}}}
                },
            }
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
                "6000/min). /api/v1/* is a permanent, unlimited alias of these paths."
            ),
        },
        "servers": [{"url": "/"}],
        "security": [{}, {"ApiKeyHeader": []}, {"ApiKeyQuery": []}],
        "paths": paths,
        "components": {
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
                }
            },
            "headers": {
                "X-RateLimit-Limit": {"description": "Requests allowed per window.", "schema": {"type": "integer"}},
                "X-RateLimit-Remaining": {"description": "Requests left in the window.", "schema": {"type": "integer"}},
                "X-RateLimit-Reset": {"description": "Seconds until the window resets.", "schema": {"type": "integer"}},
                "Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}},
                "ETag": {"description": "Weak validator for If-None-Match.", "schema": {"type": "string"}},
            },
            "responses": {
                "Unauthorized": _json("Error", "The API key is not an issued key."),
                "TooManyRequests": {
                    "description": "Rate limit exceeded.",
                    "headers": {**_rate_headers(), "Retry-After": {"$ref": "#/components/headers/Retry-After"}},
                    "content": {JSON: {"schema": _ref("RateLimitError")}},
                },
                "ServerError": _json("Error", "Unexpected server error."),
            },
            "schemas": {
                "PuzzlePublicRecord": _PUZZLE,
                "SolveStep": _STEP,
                "SolutionResponse": {
                    "type": "object",
                    "required": ["canonical_id", "solution"],
                    "properties": {
                        "canonical_id": {"type": "string"},
                        "solution": {"type": "string", "pattern": "^[1-9]{81}$"},
                    },
                },
                "GlobalStats": {
                    "type": "object",
                    "required": ["total", "by_difficulty", "last_synced_at"],
                    "properties": {
                        "total": {"type": "integer"},
                        "by_difficulty": _COUNTS,
                        "last_synced_at": _nullable("integer"),
                    },
                },
                "ActivityStats": {
                    "type": "object",
                    "description": "Aggregate counters, no personal data. `scope` says what they cover.",
                    "required": ["scope", "covers", "since", "plays", "downloads"],
                    "properties": {
                        "scope": {"type": "string", "enum": ["instance", "cluster"]},
                        "covers": {"type": "string"},
                        "since": _nullable("integer"),
                        "plays": _COUNTS,
                        "downloads": _COUNTS,
                    },
                },
                "Health": {
                    "type": "object",
                    "required": ["ok"],
                    "properties": {
                        "ok": {"type": "boolean"},
                        "puzzles": {"type": "integer"},
                        "export": {"type": "object"},
                        "sync": {"type": "object"},
                    },
                },
                "PoolExportsResponse": {
                    "type": "object",
                    "required": ["objects", "truncated"],
                    "properties": {
                        "objects": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["key", "size", "uploaded"],
                                "properties": {
                                    "key": {"type": "string"},
                                    "size": {"type": "integer"},
                                    "uploaded": {"type": "string", "format": "date-time"},
                                },
                            },
                        },
                        "truncated": {"type": "boolean"},
                    },
                },
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
                "RateLimitError": {
                    "type": "object",
                    "required": ["error", "retry_after_seconds"],
                    "properties": {
                        "error": {"type": "string", "example": "rate limit exceeded"},
                        "retry_after_seconds": {"type": "integer"},
                    },
                },
            },
        },
    }


def openapi_body() -> bytes:
    """The document, serialized once."""
    return orjson.dumps(document())
