"""CORS for a public, read-only API: any origin, no credentials.

Every answer carries ``Access-Control-Allow-Origin: *`` and ``Access-Control-Expose-Headers``, whether
or not the request had an ``Origin`` header. Answers are cached by shared caches (``Cache-Control:
public``): one stored from a request without ``Origin`` is handed to browsers too, and must let them
read it. The other way, the headers only for requests with ``Origin`` and ``Vary: Origin`` on
cacheable answers, would split every cached answer by the page that asked and make some CDNs not cache
at all (Akamai does not cache an answer that varies on anything but ``Accept-Encoding`` by default);
the allowed origin is always ``*``, so there is nothing to vary. Preflight requests are answered here,
before anything counts them against a rate limit. Starlette's ``CORSMiddleware`` does the general
case; this is the few lines the hot path needs.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import Message, Scope, Send

from sudokupool.api.errors import error_body, error_headers


class CORS:
    """Allow every origin to read responses and the ``expose`` headers; answer preflights.

    Not a middleware layer: :class:`~sudokupool.api.front.Front` asks :meth:`is_preflight` of an ``OPTIONS``
    request and :meth:`wrap` s the ``send`` of the others, except on the API's paths, whose routers add
    :attr:`headers` to their prepared ones (wrapping costs more: docs/benchmarks.md, "Figures the code's design
    rests on").
    """

    def __init__(
        self,
        *,
        expose: Iterable[str],
        allow_headers: Iterable[str],
        allow_methods: Iterable[str] = ("GET", "HEAD", "OPTIONS"),
        max_age: int = 86400,
    ) -> None:
        #: What every answer carries (the API routers add it themselves, see :meth:`wrap`).
        self.headers = [
            (b"access-control-allow-origin", b"*"),
            (b"access-control-expose-headers", ", ".join(expose).encode()),
        ]
        self.allow_headers = frozenset(name.lower() for name in allow_headers)
        self.allow_methods = ", ".join(allow_methods).encode()
        self.max_age = str(max_age).encode()

    @staticmethod
    def is_preflight(scope: Scope) -> bool:
        """Whether an ``OPTIONS`` request is a CORS preflight (it has ``Origin`` and
        ``Access-Control-Request-Method``)."""
        origin = requested = False
        for name, _ in scope["headers"]:
            if name == b"origin":
                origin = True
            elif name == b"access-control-request-method":
                requested = True
        return origin and requested

    def wrap(self, send: Send) -> Send:
        """``send`` with the CORS headers added to the response."""
        extra = self.headers

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
