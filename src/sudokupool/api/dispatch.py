"""The router of ``/api/v2``, ``/api/v1`` and the unversioned ``/api``; what each serves is ``routes.py``'s table.

:class:`ApiRouter` is a small pure-ASGI router: a dict lookup for fixed paths and one split for the
``/puzzles/{id}...`` paths, then the handler's :class:`~sudokupool.api.endpoints.Reply` goes out with
prepared header bytes. Every failure, including unknown paths, other methods and unexpected
exceptions, is answered with the one ``{"error": ...}`` body. It replaces Starlette's router on these
paths because the general router's per-request objects cost more than the rest of the request.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from time import perf_counter
from typing import Any, Final, cast

from starlette.types import Receive, Scope, Send

from sudokupool.api.computed import CHARGE, RECEIVE
from sudokupool.api.downloads import Streamed
from sudokupool.api.endpoints import NO_PUZZLE, AsyncHandler, Handler
from sudokupool.api.errors import ApiError, send_error
from sudokupool.api.limiter import RateLimiter, Refusal, Refused
from sudokupool.api.tally import UNMATCHED, RequestTally, Route

logger = logging.getLogger("sudokupool")

ALLOW: Final = {"Allow": "GET, HEAD"}
_METHODS: Final = frozenset({"GET", "HEAD"})
SURFACES: Final = {"/api/v2": "v2", "/api/v1": "v1", "/api": "unversioned"}

#: What a request costs of the rate limit, from its scope (1 for a route without one).
Cost = Callable[[Scope], int]
#: A route: its handler, whether that is a coroutine function, its metrics labels and its cost.
Entry = tuple[Handler | AsyncHandler, bool, Route, Cost | None]
#: Paths with a parameter that are not a puzzle's (``/pool-exports/{key}``): their fixed start, up to the parameter.
_KEYED: Final = "{key}"
# An int: `37 in raw` took 60 ns where `b"%" in raw` took 650 ns (CPython 3.11, timeit).
_PERCENT: Final = ord("%")


def _encoded_slash(raw_path: bytes) -> bool:
    """Whether the request's raw path holds a ``%2F``, which the decoded path shows as a ``/``."""
    # raw_path has no query string per the ASGI spec; some servers have sent one all the same.
    return b"%2f" in raw_path.partition(b"?")[0].lower()


class ApiRouter:
    """Serves ``routes`` (paths relative to ``prefix``) as a pure ASGI app.

    With a ``limiter`` (``/api/v2``), every request outside its exempt paths is admitted by it first:
    a refused one gets the limiter's 429, 401 or 503, and every other response, errors included,
    carries the limiter's headers. Every answer carries ``headers``. With a ``tally`` (metrics on),
    every request is counted by its route template, method and status, with the time it took from here
    to its last byte sent.
    """

    def __init__(
        self,
        prefix: str,
        routes: Mapping[str, Handler | AsyncHandler],
        *,
        limiter: RateLimiter | None = None,
        tally: RequestTally | None = None,
        headers: Sequence[tuple[bytes, bytes]] = (),
        costs: Mapping[str, Cost] | None = None,
    ) -> None:
        self.prefix = prefix
        # Added to every answer, the limiter's refusals and errors too (CORS's: cheaper here than
        # wrapping each request's send).
        self.headers = list(headers)
        self.cut = len(prefix)
        self.limiter = limiter
        self.tally = tally
        surface = SURFACES.get(prefix, prefix)
        self.unmatched: Route = (surface, UNMATCHED)
        #: Every path this router serves, prefix included, as the route table lists it.
        self.paths: tuple[str, ...] = tuple(prefix + path for path in routes)
        self.fixed: dict[str, Entry] = {}
        # Paths of the form /puzzles/{id}/<tail>: keyed by tail ("" for /puzzles/{id}).
        self.by_id: dict[str, Entry] = {}
        # Paths of the form /grids/{grid}/<tail>, the same way.
        self.by_grid: dict[str, Entry] = {}
        # Paths of the form <start>{key}, keyed by their start (which ends with a slash).
        self.keyed: dict[str, Entry] = {}
        costs = costs or {}
        for path, handler in routes.items():
            entry = (handler, inspect.iscoroutinefunction(handler), (surface, prefix + path), costs.get(path))
            if path.startswith("/puzzles/{id}"):
                self.by_id[path.removeprefix("/puzzles/{id}").removeprefix("/")] = entry
            elif path.startswith("/grids/{grid}"):
                self.by_grid[path.removeprefix("/grids/{grid}").removeprefix("/")] = entry
            elif path.endswith(_KEYED):
                self.keyed[path.removesuffix(_KEYED)] = entry
            else:
                self.fixed[path] = entry

    def route_of(self, path: str) -> Route:
        """The metrics labels (surface, route template) of a full request path under this router's prefix."""
        entry, _ = self.match(path[self.cut :])
        return self.unmatched if entry is None else entry[2]

    def match(self, path: str) -> tuple[Entry | None, str | None]:
        entry = self.fixed.get(path)
        if entry is not None:
            return entry, None
        if path.startswith("/puzzles/"):
            rest = path[9:]
            puzzle_id, slash, tail = rest.partition("/")
            if puzzle_id:
                if slash and not tail:
                    # ``/puzzles/ID/`` is no path of the API, as ``/puzzles/ID/solution/`` is not; the id is
                    # kept for ``/puzzles/ID%2F``, an id that ends with a slash.
                    return None, puzzle_id
                entry = self.by_id.get(tail)
                return entry, puzzle_id if entry is not None else None
        if path.startswith("/grids/"):
            grid, slash, tail = path[7:].partition("/")
            if grid and not (slash and not tail):
                entry = self.by_grid.get(tail)
                return entry, grid if entry is not None else None
        for start, entry in self.keyed.items():
            if path.startswith(start):
                # One path segment: a key with a slash (or an encoded one, decoded) is no key.
                key = path[len(start) :]
                return (entry, key) if key and "/" not in key else (None, None)
        return None, None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # With metrics off this costs a test and a try block; with them on, two clock reads and two counts.
        tally = self.tally
        if tally is not None:
            start = perf_counter()
            tally.started += 1
        else:
            start = 0.0
        status = 500
        route = self.unmatched
        try:
            path: str = scope["path"]
            entry, param = self.match(path[self.cut :])
            if entry is not None:
                route = entry[2]
            limiter = self.limiter
            if limiter is None or path in limiter.exempt_paths:
                extra: list[tuple[bytes, bytes]] = self.headers
                limited = False
            else:
                limited = True
                cost = 1 if entry is None or entry[3] is None else entry[3](scope)
                admitted = limiter.admit_now(scope, cost) if limiter.synchronous else await limiter.admit(scope, cost)
                if isinstance(admitted, Refusal):
                    status = admitted.status
                    headers = [*admitted.headers, *self.headers]
                    await send({"type": "http.response.start", "status": status, "headers": headers})
                    await send({"type": "http.response.body", "body": admitted.body})
                    return
                extra = admitted  # a list of this request's own
                extra += self.headers
            if entry is None:
                status = 404
                # ``/puzzles/ID%2F``: an id that ends with a slash (see below), not a trailing slash.
                encoded = param is not None and _encoded_slash(scope.get("raw_path") or b"")
                await send_error(send, 404, NO_PUZZLE if encoded else "not found", extra=extra)
                return
            if param is not None:
                raw: bytes | None = scope.get("raw_path")
                # Only a path with an escape can hide an encoded slash; most have none (the check costs ~0.1 us).
                if raw is not None and _PERCENT in raw and _encoded_slash(raw):
                    # `%2F` in an id is part of the id, not a separator: no id has a slash, so none matches.
                    status = 404
                    await send_error(
                        send, 404, NO_PUZZLE if path.startswith("/puzzles/", self.cut) else "not found", extra=extra
                    )
                    return
            if scope["method"] not in _METHODS:
                status = 405
                await send_error(send, 405, "method not allowed", ALLOW, extra=extra)
                return
            handler, is_async, _, _ = entry
            try:
                if is_async:
                    # What computed work needs: the client's disconnect (a waiting job is dropped when it
                    # leaves), and the limiter, to count the work's cost against the client's limit.
                    scope[RECEIVE] = receive
                    if limited:
                        scope[CHARGE] = (limiter, extra)
                    try:
                        reply = await cast(AsyncHandler, handler)(scope, param)
                    finally:
                        # Not kept past the handler: ``receive`` is a method of the server's request, which holds
                        # this scope, and the cycle would wait for the garbage collector (see BoundedFlowControl).
                        del scope[RECEIVE]
                        scope.pop(CHARGE, None)
                else:
                    reply = cast(Handler, handler)(scope, param)
                if isinstance(reply, Streamed):
                    status = reply.status
                    await self._stream(scope, send, reply, extra)
                    return
            except ApiError as exc:
                status = exc.status
                await send_error(send, exc.status, exc.message, exc.headers, extra=extra)
                return
            except Refused as exc:
                status = exc.refusal.status
                headers = [*exc.refusal.headers, *self.headers]
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": exc.refusal.body})
                return
            except Exception:
                logger.exception("unhandled error on %s %s", scope["method"], scope["path"])
                await send_error(send, 500, "internal server error", extra=extra)
                return
            status, headers, body = reply
            if status != 304:
                headers.append((b"content-length", str(len(body)).encode()))
            headers += extra
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        finally:
            if tally is not None:
                tally.observe(route, scope["method"], status, perf_counter() - start)

    @staticmethod
    async def _stream(scope: Scope, send: Send, reply: Streamed, extra: list[tuple[bytes, bytes]]) -> None:
        """Send ``reply``'s body as its chunks come (none for HEAD); the client's leaving ends the reading."""
        headers = [*reply.headers, (b"content-length", str(reply.length).encode()), *extra]
        chunks = reply.chunks
        try:
            await send({"type": "http.response.start", "status": reply.status, "headers": headers})
            if scope["method"] != "HEAD":
                async for chunk in chunks:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await cast(Any, chunks).aclose()
