"""CORS for a public, read-only API: any origin, no credentials.

Because the allowed origin is always ``*``, responses do not vary by origin, so this middleware only
adds ``Access-Control-Allow-Origin`` and ``Access-Control-Expose-Headers`` when the request carries an
``Origin`` header, and requests without one (most API clients) pass through untouched. Preflight
requests are answered here, before anything counts them against a rate limit. Starlette's
``CORSMiddleware`` does the general case; this one is the few lines the hot path needs.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class CORSMiddleware:
    """Allow every origin to read responses and the ``expose`` headers; answer preflights."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        expose: Iterable[str],
        allow_headers: Iterable[str],
        allow_methods: Iterable[str] = ("GET", "HEAD", "OPTIONS"),
        max_age: int = 86400,
    ) -> None:
        self.app = app
        self.extra = [
            (b"access-control-allow-origin", b"*"),
            (b"access-control-expose-headers", ", ".join(expose).encode()),
        ]
        self.allow_headers = frozenset(name.lower() for name in allow_headers)
        self.allow_methods = ", ".join(allow_methods).encode()
        self.max_age = str(max_age).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        origin = requested = None
        for name, value in scope["headers"]:
            if name == b"origin":
                origin = value
            elif name == b"access-control-request-method":
                requested = value
        if origin is None:
            await self.app(scope, receive, send)
        elif scope["method"] == "OPTIONS" and requested is not None:
            await self.preflight(scope, send)
        else:
            extra = self.extra

            async def send_with_cors(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message = {**message, "headers": [*message.get("headers", ()), *extra]}
                await send(message)

            await self.app(scope, receive, send_with_cors)

    async def preflight(self, scope: Scope, send: Send) -> None:
        asked = b""
        for name, value in scope["headers"]:
            if name == b"access-control-request-headers":
                asked = value
        names = {part.strip().lower() for part in asked.decode("latin-1").split(",") if part.strip()}
        ok = names <= self.allow_headers
        headers = [
            (b"access-control-allow-origin", b"*"),
            (b"access-control-allow-methods", self.allow_methods),
            (b"access-control-allow-headers", asked if ok else b""),
            (b"access-control-max-age", self.max_age),
            (b"content-length", b"0"),
        ]
        await send({"type": "http.response.start", "status": 204 if ok else 400, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
