"""CORS for a public, read-only API: any origin, no credentials.

Because the allowed origin is always ``*``, responses do not vary by origin, so :class:`CORS` only
adds ``Access-Control-Allow-Origin`` and ``Access-Control-Expose-Headers`` when the request carries an
``Origin`` header, and requests without one (most API clients) pass untouched. Preflight
requests are answered here, before anything counts them against a rate limit. Starlette's
``CORSMiddleware`` does the general case; this is the few lines the hot path needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

from starlette.types import Message, Scope, Send

from sudokupool.api.errors import error_body, error_headers

#: What :meth:`CORS.inspect` finds: no ``Origin`` header, a cross-origin request, a preflight.
SAME_ORIGIN: Final = 0
CROSS_ORIGIN: Final = 1
PREFLIGHT: Final = 2


class CORS:
    """Allow every origin to read responses and the ``expose`` headers; answer preflights.

    Not a middleware layer: :class:`~sudokupool.app.Front` asks :meth:`inspect` on every request and
    only a request with an ``Origin`` header costs more than that one pass over the headers.
    """

    def __init__(
        self,
        *,
        expose: Iterable[str],
        allow_headers: Iterable[str],
        allow_methods: Iterable[str] = ("GET", "HEAD", "OPTIONS"),
        max_age: int = 86400,
    ) -> None:
        self.extra = [
            (b"access-control-allow-origin", b"*"),
            (b"access-control-expose-headers", ", ".join(expose).encode()),
        ]
        self.allow_headers = frozenset(name.lower() for name in allow_headers)
        self.allow_methods = ", ".join(allow_methods).encode()
        self.max_age = str(max_age).encode()

    @staticmethod
    def inspect(scope: Scope) -> Literal[0, 1, 2]:
        """:data:`SAME_ORIGIN` (no ``Origin`` header), :data:`CROSS_ORIGIN` or :data:`PREFLIGHT`."""
        origin = requested = False
        for name, _ in scope["headers"]:
            if name == b"origin":
                origin = True
            elif name == b"access-control-request-method":
                requested = True
        if not origin:
            return SAME_ORIGIN
        return PREFLIGHT if requested and scope["method"] == "OPTIONS" else CROSS_ORIGIN

    def wrap(self, send: Send) -> Send:
        """``send`` with the CORS headers added to the response (for a :data:`CROSS_ORIGIN` request)."""
        extra = self.extra

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        return send_with_cors

    async def preflight(self, scope: Scope, send: Send) -> None:
        """Answer a :data:`PREFLIGHT` request: 204 when every header it asks for is allowed, else 400."""
        asked = b""
        for name, value in scope["headers"]:
            if name == b"access-control-request-headers":
                asked = value
        names = {part.strip().lower() for part in asked.decode("latin-1").split(",") if part.strip()}
        refused = names - self.allow_headers
        headers = [
            (b"access-control-allow-origin", b"*"),
            (b"access-control-allow-methods", self.allow_methods),
            (b"access-control-allow-headers", b"" if refused else asked),
            (b"access-control-max-age", self.max_age),
        ]
        if not refused:
            await send({"type": "http.response.start", "status": 204, "headers": [*headers, (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        # Named in sorted order and cut short: the list is what the client wrote.
        shown = ", ".join(sorted(refused)[:5])[:200]
        allowed = ", ".join(sorted(self.allow_headers))
        message = f"CORS preflight refused: request header(s) {shown} not allowed (allowed: {allowed})"
        body = error_body(message)
        await send({"type": "http.response.start", "status": 400, "headers": [*headers, *error_headers(body)]})
        await send({"type": "http.response.body", "body": body})
