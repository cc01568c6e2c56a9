"""The ASGI middleware that applies keys and limits to the app it wraps (``/api/v2``).

Per request: find the key (the ``X-API-Key`` header wins over the ``api_key`` query parameter
when both are sent; the parameter is then ignored even if it is wrong), resolve it to a tier,
count the request against its identity (the key's digest, or the client address without a key),
then answer 429 or 401 itself or pass the request on and add the three ``X-RateLimit-*`` headers
to whatever response comes back: 200, 304, 404, 500 alike, as long as the error middleware sits
inside this one.

An unknown key (also an empty one: a key that is sent must resolve) is answered 401 and counted
against the client address's anonymous window, so guessing keys costs the same budget as
anonymous use, and the guess after the limit is a 429.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sudokupool.clientip import client_id
from sudokupool.config import Settings
from sudokupool.errors import error_body, error_headers
from sudokupool.keys import Keyring, Tier
from sudokupool.ratelimit.store import LimiterStore, LimiterUnavailable
from sudokupool.ratelimit.window import WINDOW_SECONDS, Decision, seconds_to_reset, wall_clock

#: The scope key under which the limit headers travel to an inner app with ``adds_limit_headers``.
LIMIT_HEADERS = "sudokupool.limit_headers"

_LIMIT = b"x-ratelimit-limit"
_REMAINING = b"x-ratelimit-remaining"
_RESET = b"x-ratelimit-reset"

# Reset and Retry-After are always 1..60 seconds: their values and the 429 bodies are prepared once.
_SECONDS = tuple(str(n).encode() for n in range(WINDOW_SECONDS + 1))
_TOO_MANY = tuple(
    orjson.dumps({"error": "rate limit exceeded", "retry_after_seconds": n}) for n in range(WINDOW_SECONDS + 1)
)
_UNKNOWN_KEY = error_body("unknown API key")
_UNAVAILABLE = error_body("rate limiter unavailable")


@dataclass(frozen=True)
class Limits:
    """Requests per window for each tier."""

    anonymous: int = 60
    keyed: int = 600
    pro: int = 6000

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(settings.limit_anonymous, settings.limit_keyed, settings.limit_pro)

    def of(self, tier: Tier) -> int:
        if tier is Tier.PRO:
            return self.pro
        if tier is Tier.KEYED:
            return self.keyed
        return self.anonymous


def presented_key(scope: Scope) -> bytes | None:
    """The key a request carries: the first ``X-API-Key`` header, else the first ``api_key`` parameter.

    None when neither is present; an empty value is returned as ``b""`` (and will not resolve).
    """
    for name, value in scope["headers"]:
        if name == b"x-api-key":
            return bytes(value)
    query: bytes = scope["query_string"]
    # Most requests carry no key: skip splitting the query string unless the name occurs in it.
    if b"api_key" in query:
        for part in query.split(b"&"):
            name, _, value = part.partition(b"=")
            if name == b"api_key":
                return unquote_to_bytes(value.replace(b"+", b" "))
    return None


class RateLimitMiddleware:
    """Keys, tiers and fixed-window limits for the wrapped app.

    ``exempt_paths`` are full request paths (``scope["path"]``, e.g. ``/api/v2/openapi.json``) that
    pass through with no key check, no count and no headers.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        store: LimiterStore,
        keyring: Keyring,
        limits: Limits = Limits(),
        exempt_paths: Collection[str] = (),
    ) -> None:
        self.app = app
        self.store = store
        self.keyring = keyring
        self.limits = limits
        self.exempt_paths = frozenset(exempt_paths)
        self._limit_values = {n: str(n).encode() for n in (limits.anonymous, limits.keyed, limits.pro)}
        # An inner app that reads LIMIT_HEADERS from the scope adds the headers to every response itself.
        self.inner_adds_headers = bool(getattr(app, "adds_limit_headers", False))
        # The process-local store counts synchronously: no coroutine per request.
        self.hit_now: Callable[[str, int], Decision] | None = getattr(store, "hit_now", None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.exempt_paths:
            await self.app(scope, receive, send)
            return
        key = presented_key(scope)
        known = True
        if key is None:
            identity = "ip:" + client_id(scope)
            limit = self.limits.anonymous
        else:
            key_digest = hashlib.sha256(key).hexdigest()
            tier = self.keyring.lookup_digest(key_digest)
            if tier is None:
                known = False
                identity = "ip:" + client_id(scope)
                limit = self.limits.anonymous
            else:
                identity = "key:" + key_digest
                limit = self.limits.of(tier)
        try:
            if self.hit_now is not None:
                decision = self.hit_now(identity, limit)
            else:
                decision = await self.store.hit(identity, limit)
        except LimiterUnavailable:
            reset = _SECONDS[seconds_to_reset(wall_clock())]
            headers = [(_LIMIT, self._limit_bytes(limit)), (_REMAINING, b"0"), (_RESET, reset)]
            await _respond(send, 503, _UNAVAILABLE, headers)
            return
        headers = self._headers(decision)
        if not decision.allowed:
            retry = decision.retry_after
            await _respond(send, 429, _TOO_MANY[retry], [(b"retry-after", _SECONDS[retry]), *headers])
            return
        if not known:
            await _respond(send, 401, _UNKNOWN_KEY, headers)
            return

        if self.inner_adds_headers:
            # The inner app adds them itself: no wrapper around send on the hot path.
            scope[LIMIT_HEADERS] = headers
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                # A new message: the inner app may reuse its own (prepared responses).
                message = {**message, "headers": [*message.get("headers", ()), *headers]}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _limit_bytes(self, limit: int) -> bytes:
        value = self._limit_values.get(limit)
        return value if value is not None else str(limit).encode()

    def _headers(self, decision: Decision) -> list[tuple[bytes, bytes]]:
        return [
            (_LIMIT, self._limit_bytes(decision.limit)),
            (_REMAINING, str(decision.remaining).encode()),
            (_RESET, _SECONDS[decision.reset_seconds]),
        ]


async def _respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": error_headers(body) + headers})
    await send({"type": "http.response.body", "body": body})
