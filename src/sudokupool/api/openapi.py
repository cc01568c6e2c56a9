"""The OpenAPI 3.0.3 description of ``/api/v2``: its frame, shared components and the parts operations are
made of. The operations themselves are in ``routes.py``, each with its route; the bodies' schemas in
``schemas.py``.

It is a client contract: generated clients (openapi-python-client, openapi-typescript,
datamodel-code-generator) must work from it without configuration or casts, and
``tests/api/test_openapi_clients.py`` generates them and calls every operation against a real server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from sudokupool.api.schemas import SCHEMAS, ref

#: The version of the API the document describes, as the API's specification states it; not the package's
#: (``sudokupool.__version__``), which changes with the grader while the API stays the same.
API_VERSION: Final = "2.0.0"
JSON: Final = "application/json"
RATE_HEADERS: Final = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")

# Said on every path: OpenAPI lists responses per operation, and these methods have none of their own.
METHODS_NOTE: Final = (
    "HEAD is answered like GET, without the body. Any other method is answered 405 "
    '`{"error": "method not allowed"}` with `Allow: GET, HEAD` (a CORS preflight is answered by the CORS layer).'
)


def rate_headers() -> dict[str, Any]:
    return {name: {"$ref": f"#/components/headers/{name}"} for name in RATE_HEADERS}


def json_response(schema: str, description: str, **headers: Any) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {**rate_headers(), **headers},
        "content": {JSON: {"schema": ref(schema)}},
    }


def response_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/responses/{name}"}


def operation(
    op_id: str,
    tag: str,
    summary: str,
    ok: dict[str, Any],
    *errors: int,
    params: list[Any] | None = None,
    description: str | None = None,
    unavailable: str = "ExportsUnavailable",
    bodies: Mapping[int, Any] | None = None,
) -> Any:
    """A rate-limited GET path: its 200, the given ``errors`` (304, 400, 404, 503: the response ``unavailable``;
    ``bodies``: the response of any other status, or another for one of these) and the limiter's 401, 429, 503."""
    texts = {400: "Invalid parameter value (the error names the allowed values).", 404: "Not found."}
    responses: dict[str, Any] = {"200": ok}
    for status in errors:
        if bodies is not None and status in bodies:
            responses[str(status)] = bodies[status]
        elif status == 304:
            responses["304"] = response_ref("NotModified")
        elif status == 503:
            responses["503"] = response_ref(unavailable)
        else:
            responses[str(status)] = json_response("Error", texts[status])
    responses["401"] = response_ref("Unauthorized")
    responses["429"] = response_ref("TooManyRequests")
    responses["500"] = response_ref("ServerError")
    responses.setdefault("503", response_ref("LimiterUnavailable"))
    get = {"tags": [tag], "operationId": op_id, "summary": summary}
    if description:
        get["description"] = description
    return {
        "description": METHODS_NOTE,
        "get": {**get, "parameters": params or [], "responses": dict(sorted(responses.items()))},
    }


_PARAM = "#/components/parameters/"


def query_param(name: str, description: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An optional query parameter of an operation (``extra``: more of its fields, such as ``example``)."""
    return {"name": name, "in": "query", "required": False, "description": description, "schema": schema, **extra}


ID_PARAM = {"$ref": _PARAM + "PuzzleId"}
IF_NONE_MATCH = {"$ref": _PARAM + "IfNoneMatch"}
CACHE_HEADERS = {
    "ETag": {"$ref": "#/components/headers/ETag"},
    "Cache-Control": {"$ref": "#/components/headers/Cache-Control"},
}

#: By-id, random and this document are sent gzip-coded to clients that accept it (docs/api.md).
ENCODING_HEADERS = {
    "Content-Encoding": {"$ref": "#/components/headers/Content-Encoding"},
    "Vary": {"$ref": "#/components/headers/Vary"},
}

_TAGS = [
    {
        "name": "puzzles",
        "description": (
            "Puzzles: a random one (filtered by difficulty, technique, stars or score), the puzzle of the day, one "
            "by its share code, its solution, its image; the technique catalogue."
        ),
    },
    {
        "name": "grids",
        "description": (
            "Any grid: its record when the pool holds it in any layout (moved to that layout), else a live grade; "
            "hints for a player's board."
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
                "headers": {**rate_headers(), **CACHE_HEADERS},
            },
            "Unauthorized": json_response("Error", "The API key is not an issued key."),
            "TooManyRequests": {
                "description": "Rate limit exceeded.",
                "headers": {**rate_headers(), "Retry-After": {"$ref": "#/components/headers/Retry-After"}},
                "content": {JSON: {"schema": ref("RateLimitError")}},
            },
            "ServerError": json_response("Error", "Unexpected server error."),
            "LimiterUnavailable": json_response(
                "Error", "The shared rate limiter (Redis) failed and the service is set to refuse meanwhile."
            ),
            "ExportsUnavailable": json_response(
                "Error",
                "Object storage cannot be listed right now (a failed listing is remembered for 5 s) or is slow "
                "to give a first listing, with Retry-After; or the shared rate limiter failed (see "
                "LimiterUnavailable).",
                **{"Retry-After": {"$ref": "#/components/headers/Retry-After"}},
            ),
            "EngineUnavailable": json_response(
                "Error",
                "The answer is not cached and the server cannot compute it now: the queue of computed work is full, "
                "or the grade or hint took longer than the server allows; with Retry-After. Or the shared rate "
                "limiter failed (see LimiterUnavailable).",
                **{"Retry-After": {"$ref": "#/components/headers/Retry-After"}},
            ),
            "WorkUnavailable": json_response(
                "Error",
                "The picture is not cached and the server cannot draw it now: the queue of computed work is full, "
                "or the drawing took longer than the server allows; with Retry-After. Or the shared rate limiter "
                "failed (see LimiterUnavailable).",
                **{"Retry-After": {"$ref": "#/components/headers/Retry-After"}},
            ),
        },
        "schemas": SCHEMAS,
    }


def build_document(paths: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAPI document with these path items (``routes.py`` has them, one per route)."""
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "sudokupool: Sudoku puzzle pool API",
            "version": API_VERSION,
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
        "paths": dict(paths),
        "components": _components(),
    }
