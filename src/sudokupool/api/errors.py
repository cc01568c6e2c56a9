"""Client errors with their status, and the one JSON error body every error path writes.

Every failure under ``/api`` answers ``{"error": "..."}``. Handlers raise :class:`ApiError`; the API
router (``dispatch.py``) turns it, an unknown path or method, and any unexpected exception into that
body with :func:`send_error`. The router asks the rate limiter before it matches a route, so the
limiter's headers reach error responses too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from http import HTTPStatus

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send


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


#: The longest plain-text error body of a wrapped app that becomes the message; longer ones give the status's phrase.
_MAX_MESSAGE = 200
#: Headers of a wrapped error response that still apply to the JSON one (416 says the file's size).
_KEPT = frozenset({b"content-range", b"allow", b"retry-after"})


class JsonErrors:
    """Makes every error response of ``app`` (status 400 and up) the one ``{"error": ...}`` body, but an HTML one.

    For apps whose errors are not ours to write: Starlette's static files answer a bad ``Range`` with
    plain text (400, 416). A short plain-text body becomes the message; otherwise the status's phrase.
    Responses below 400 pass untouched, and so do HTML error pages: only the site's own handlers write
    them, for a browser that asked for HTML (the print sheet's), as Starlette's own errors are plain text.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        error: Message | None = None
        text = bytearray()

        async def send_json_errors(message: Message) -> None:
            nonlocal error
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                ours = any(
                    k.lower() == b"content-type" and v.startswith((b"application/json", b"text/html"))
                    for k, v in headers
                )
                if message["status"] >= 400 and not ours:
                    error = message
                    return
            elif error is not None and message["type"] == "http.response.body":
                if len(text) <= _MAX_MESSAGE:
                    text.extend(message.get("body", b"")[: _MAX_MESSAGE + 1])
                if message.get("more_body", False):
                    return
                await _send_as_json(send, error, bytes(text))
                return
            await send(message)

        await self.app(scope, receive, send_json_errors)


async def _send_as_json(send: Send, start: Message, text: bytes) -> None:
    status: int = start["status"]
    headers = start.get("headers", [])
    plain = any(k.lower() == b"content-type" and v.startswith(b"text/plain") for k, v in headers)
    message = text.decode("utf-8", "replace").strip() if plain and 0 < len(text) <= _MAX_MESSAGE else ""
    if not message:
        try:
            message = HTTPStatus(status).phrase.lower()
        except ValueError:
            message = "error"
    kept = {k.lower().decode("latin-1"): v.decode("latin-1") for k, v in headers if k.lower() in _KEPT}
    await send_error(send, status, message, kept)
