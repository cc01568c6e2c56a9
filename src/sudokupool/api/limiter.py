"""The HTTP gate of ``/api/v2``: :class:`RateLimiter`, which the API router asks before each handler.

Per request: find the key (the ``X-API-Key`` header wins over the ``api_key`` query parameter
when both are sent; the parameter is then ignored even if it is wrong), resolve it to a tier,
count the request against its identity (the key's digest, or the client address without a key),
then refuse it (429 or 401) or let it through with the three ``X-RateLimit-*`` headers, which the
router adds to whatever response it sends: 200, 304, 404, 500 alike.

An unknown key (also an empty one: a key that is sent must resolve) is answered 401 and counted
against the client address's anonymous window, so guessing keys costs the same budget as
anonymous use, and the guess after the limit is a 429.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from typing import NamedTuple
from urllib.parse import unquote_to_bytes

import orjson
from starlette.types import Scope

from sudokupool.api.clientip import client_id
from sudokupool.api.errors import error_body, error_headers
from sudokupool.ratelimit.keys import Keyring, Tier
from sudokupool.ratelimit.limits import Limits
from sudokupool.ratelimit.store import LimiterStore, LimiterUnavailable
from sudokupool.ratelimit.window import WINDOW_SECONDS, Decision, seconds_to_reset, wall_clock

Header = tuple[bytes, bytes]

_LIMIT = b"x-ratelimit-limit"
_REMAINING = b"x-ratelimit-remaining"
_RESET = b"x-ratelimit-reset"

# Reset and Retry-After are always 1..60 seconds: their values and the 429 bodies are prepared once.
_SECONDS = tuple(str(n).encode() for n in range(WINDOW_SECONDS + 1))
_RESET_HEADERS = tuple((_RESET, value) for value in _SECONDS)
_TOO_MANY = tuple(
    orjson.dumps({"error": "rate limit exceeded", "retry_after_seconds": n}) for n in range(WINDOW_SECONDS + 1)
)
_UNKNOWN_KEY = error_body("unknown API key")

#: The tier :meth:`RateLimiter.classify` gives a key that is not an issued one (counted as anonymous).
UNKNOWN_KEY = "unknown key"
_ANONYMOUS = Tier.ANONYMOUS.value
_TIER_OF = {UNKNOWN_KEY: _ANONYMOUS}
#: What the limiter decided: let through, 429, 401 (a key that is not an issued one), 503 (Redis down, closed mode).
OUTCOMES = ("admitted", "limited", "unknown_key", "unavailable")
_UNAVAILABLE = error_body("rate limiter unavailable")
_BLANKS = b" \t"


def presented_key(scope: Scope) -> bytes | None:
    """The key a request carries: the first ``X-API-Key`` header, else the first ``api_key`` parameter,
    without leading or trailing spaces and tabs (a key pasted with a space is still the key; no issued
    key has one, as ``sudokupool keys new`` makes them).

    None when neither is present; an empty value is returned as ``b""`` (and will not resolve).
    """
    for name, value in scope["headers"]:
        if name == b"x-api-key":
            # Servers differ: httptools drops the spaces before a header's value but keeps those after it.
            return bytes(value).strip(_BLANKS)
    query: bytes = scope["query_string"]
    # Most requests carry no key: skip splitting the query string unless the name occurs in it.
    if b"api_key" in query:
        for part in query.split(b"&"):
            name, _, value = part.partition(b"=")
            if name == b"api_key":
                return unquote_to_bytes(value.replace(b"+", b" ")).strip(_BLANKS)
    return None


class Refusal(NamedTuple):
    """A request the limiter answers itself (429, 401 or 503): status, body and headers."""

    status: int
    body: bytes
    headers: list[Header]


class Refused(Exception):
    """Raised by a handler whose computed work the limiter refused (:meth:`RateLimiter.charge`): the router
    sends ``refusal`` as the answer."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.status)
        self.refusal = refusal


class RateLimiter:
    """Keys, tiers and fixed-window limits, asked once per request by the router in front of the handler.

    :meth:`admit` (or :meth:`admit_now` when ``synchronous``: the process-local store) counts the request
    and returns either the three ``X-RateLimit-*`` headers for the response, or a :class:`Refusal` to
    send instead. ``exempt_paths`` are full request paths (``scope["path"]``, e.g.
    ``/api/v2/openapi.json``) that the router passes with no key check, no count and no headers.

    A gate the router calls rather than a middleware around it: a middleware, with its own coroutine and the
    headers handed to the router in the scope, costs more per request (docs/benchmarks.md, "Figures the code's
    design rests on").
    """

    def __init__(
        self,
        *,
        store: LimiterStore,
        keyring: Keyring,
        limits: Limits = Limits(),
        exempt_paths: Collection[str] = (),
    ) -> None:
        self.store = store
        self.keyring = keyring
        self.limits = limits
        self.exempt_paths = frozenset(exempt_paths)
        self._limit_headers = {n: (_LIMIT, str(n).encode()) for n in (limits.anonymous, limits.keyed, limits.pro)}
        # Issued keys this process has seen, with what classify answers for them, so that a keyed request is
        # not hashed again (docs/benchmarks.md, "Figures the code's design rests on"). Unknown keys are never
        # kept, so this holds at most one entry per issued key; the lookup compares a presented key with a kept
        # one only when their (randomised) hashes are equal, which tells a guesser nothing about how much of a
        # key was right.
        self._issued: dict[bytes, tuple[str, int, str]] = {}
        # The process-local store counts synchronously: no coroutine per request.
        self._hit_now: Callable[[str, int, int], Decision] | None = getattr(store, "hit_now", None)
        self.synchronous = self._hit_now is not None
        #: Requests decided so far, by outcome and then tier, while ``counting`` (metrics on):
        #: ``decisions["limited"]["pro"]``. Off, the request path does not even count.
        self.counting = False
        self.decisions: dict[str, dict[str, int]] = {outcome: {t.value: 0 for t in Tier} for outcome in OUTCOMES}

    def identify(self, scope: Scope) -> tuple[str, int, bool]:
        """``(identity, limit, known)``: whom the request counts against, at which limit, and whether the
        key it presented (if any) is an issued one."""
        identity, limit, tier = self.classify(scope)
        return identity, limit, tier is not UNKNOWN_KEY

    def classify(self, scope: Scope) -> tuple[str, int, str]:
        """``(identity, limit, tier)``; the tier of a key that is not an issued one is :data:`UNKNOWN_KEY`."""
        key = presented_key(scope)
        if key is None:
            return "ip:" + client_id(scope), self.limits.anonymous, _ANONYMOUS
        issued = self._issued.get(key)
        if issued is not None:
            return issued
        key_digest = hashlib.sha256(key).hexdigest()
        tier = self.keyring.lookup_digest(key_digest)
        if tier is None:
            return "ip:" + client_id(scope), self.limits.anonymous, UNKNOWN_KEY
        issued = ("key:" + key_digest, self.limits.of(tier), tier.value)
        # Only keys that resolved are kept, so at most one entry per issued key (see _issued).
        self._issued[key] = issued
        return issued

    def admit_now(self, scope: Scope, cost: int = 1) -> list[Header] | Refusal:
        """:meth:`admit` for a ``synchronous`` store, without a coroutine."""
        identity, limit, tier = self.classify(scope)
        assert self._hit_now is not None
        return self._outcome(self._hit_now(identity, limit, cost), tier)

    async def admit(self, scope: Scope, cost: int = 1) -> list[Header] | Refusal:
        """Count the request as ``cost`` requests (a set of many puzzles costs more than one); the limit
        headers for its response, or the response that refuses it."""
        identity, limit, tier = self.classify(scope)
        try:
            decision = await self.store.hit(identity, limit, cost)
        except LimiterUnavailable:
            if self.counting:
                self.decisions["unavailable"][_TIER_OF.get(tier, tier)] += 1
            reset = _SECONDS[seconds_to_reset(wall_clock())]
            headers = [self._limit_header(limit), (_REMAINING, b"0"), (_RESET, reset)]
            return Refusal(503, _UNAVAILABLE, error_headers(_UNAVAILABLE) + headers)
        return self._outcome(decision, tier)

    def _outcome(self, decision: Decision, tier: str) -> list[Header] | Refusal:
        allowed, limit, remaining, reset, retry = decision
        headers = [self._limit_header(limit), (_REMAINING, str(remaining).encode()), _RESET_HEADERS[reset]]
        if not allowed:
            if self.counting:
                self.decisions["limited"][_TIER_OF.get(tier, tier)] += 1
            body = _TOO_MANY[retry]
            return Refusal(429, body, [*error_headers(body), (b"retry-after", _SECONDS[retry]), *headers])
        if tier is UNKNOWN_KEY:
            if self.counting:
                self.decisions["unknown_key"][_ANONYMOUS] += 1
            return Refusal(401, _UNKNOWN_KEY, error_headers(_UNKNOWN_KEY) + headers)
        if self.counting:
            self.decisions["admitted"][tier] += 1
        return headers

    def _limit_header(self, limit: int) -> Header:
        header = self._limit_headers.get(limit)
        return header if header is not None else (_LIMIT, str(limit).encode())

    async def charge(self, scope: Scope, extra: int, headers: list[Header]) -> Refusal | None:
        """Count ``extra`` more requests of an admitted request's client, for work that costs more than a
        lookup (``SUDOKUPOOL_COST_*``): None, with ``headers`` (the limit headers :meth:`admit` gave it, in
        any list) updated to what remains, or the :class:`Refusal` (429, or 503 when the store fails) to send
        instead of doing the work. The counts stay spent either way, as a refused request's do."""
        if extra <= 0:
            return None
        identity, limit, tier = self.classify(scope)
        try:
            if self._hit_now is not None:
                decision = self._hit_now(identity, limit, extra)
            else:
                decision = await self.store.hit(identity, limit, extra)
        except LimiterUnavailable:
            reset = _SECONDS[seconds_to_reset(wall_clock())]
            limit_headers = [self._limit_header(limit), (_REMAINING, b"0"), (_RESET, reset)]
            return Refusal(503, _UNAVAILABLE, error_headers(_UNAVAILABLE) + limit_headers)
        allowed, limit, remaining, reset_seconds, retry = decision
        limit_headers = [
            self._limit_header(limit),
            (_REMAINING, str(remaining).encode()),
            _RESET_HEADERS[reset_seconds],
        ]
        if not allowed:
            if self.counting:
                self.decisions["limited"][_TIER_OF.get(tier, tier)] += 1
            body = _TOO_MANY[retry]
            return Refusal(429, body, [*error_headers(body), (b"retry-after", _SECONDS[retry]), *limit_headers])
        for at, (name, _) in enumerate(headers):
            if name == _REMAINING:
                headers[at] = limit_headers[1]
        return None
