"""Client errors with their status, and the one JSON error body every error path writes.

Every failure under ``/api`` answers ``{"error": "..."}``. Handlers raise :class:`ApiError` (or
Starlette's ``HTTPException``, as the router does for unknown paths and methods); :class:`ErrorMiddleware`
turns any of them, and any unexpected exception, into that body. It sits inside the rate limiter so the
limiter's headers reach error responses too.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import orjson
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("sudokupool")

_REASONS = {
    400: "bad request",
    401: "unauthorized",
    404: "not found",
    405: "method not allowed",
    429: "rate limit exceeded",
    500: "internal server error",
    503: "service unavailable",
}


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


async def send_error(send: Send, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
    """Send a complete ``{"error": ...}`` response."""
    body = error_body(message)
    await send({"type": "http.response.start", "status": status, "headers": error_headers(body, headers)})
    await send({"type": "http.response.body", "body": body})


class ErrorMiddleware:
    """Turns exceptions raised below it into the JSON error body; unexpected ones become a logged 500."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except ApiError as exc:
            if started:
                raise
            await send_error(send, exc.status, exc.message, exc.headers)
        except HTTPException as exc:
            if started:
                raise
            message = _REASONS.get(exc.status_code) or str(exc.detail)
            await send_error(send, exc.status_code, message, exc.headers)
        except Exception:
            logger.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            await send_error(send, 500, "internal server error")
