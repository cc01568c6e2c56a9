"""Client errors with their status, and the one JSON error body every error path writes.

Every failure under ``/api`` answers ``{"error": "..."}``. Handlers raise :class:`ApiError`; the API
router (``routes.py``) turns it, an unknown path or method, and any unexpected exception into that
body with :func:`send_error`. The router asks the rate limiter before it matches a route, so the
limiter's headers reach error responses too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson
from starlette.types import Send


class ApiError(Exception):
    """A client error: the status and the message of the ``{"error": ...}`` body."""

    status = 400

    def __init__(self, message: str, *, status: int | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.headers = dict(headers or {})


class NotFound(ApiError):
    status = 404


class BadRequest(ApiError):
    status = 400


def error_body(message: str) -> bytes:
    """The one error body: ``{"error": message}``."""
    return orjson.dumps({"error": message})


def error_headers(body: bytes, extra: Mapping[str, str] | None = None) -> list[tuple[bytes, bytes]]:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if extra:
        headers.extend((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in extra.items())
    return headers


async def send_error(
    send: Send,
    status: int,
    message: str,
    headers: Mapping[str, str] | None = None,
    *,
    extra: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """Send a complete ``{"error": ...}`` response; ``extra`` are prepared header pairs to add."""
    body = error_body(message)
    await send({"type": "http.response.start", "status": status, "headers": [*error_headers(body, headers), *extra]})
    await send({"type": "http.response.body", "body": body})
