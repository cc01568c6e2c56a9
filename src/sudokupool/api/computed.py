"""Computed work as the HTTP surface sees it: its cost in the client's rate limit, the client's departure, and
the work pool's refusals as JSON errors.

The API router puts two things in an async handler's scope: :data:`RECEIVE` (the ASGI ``receive``, whose
``http.disconnect`` tells that the client has left) and, on ``/api/v2``, :data:`CHARGE` (the limiter and the
response's limit headers). A handler about to submit work calls :func:`charge` with the work's cost, then
:func:`submit` (or passes :func:`client_left` to the pool itself).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final, TypeVar

from starlette.types import Receive, Scope

from sudokupool.api.errors import ApiError
from sudokupool.api.limiter import Refused
from sudokupool.work import WorkBudgetExceeded, WorkDropped, WorkError, WorkPool, WorkQueueFull

T = TypeVar("T")

#: Scope keys the router sets for async handlers.
RECEIVE: Final = "sudokupool.receive"
CHARGE: Final = "sudokupool.charge"

BUSY: Final = "the server is busy drawing other pictures and sheets; retry after the seconds in Retry-After"
TOO_LONG: Final = "this took longer than the server allows for one picture or sheet; retry later"
#: The status recorded for a request whose client left before its work started (nobody reads the answer).
CLIENT_LEFT: Final = 499


async def client_left(receive: Receive) -> None:
    """Return once the request's client has disconnected (``http.disconnect``); for a GET whose body was read.

    A server whose ``receive`` does not wait for the disconnect once the body is in (it answers ``http.request``
    again at once) is never seen leaving: this then waits for good rather than spinning.
    """
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        if not message.get("more_body", False):
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            await asyncio.Future()  # never done: this server does not tell


def left_of(scope: Scope) -> Callable[[], Awaitable[None]] | None:
    """The ``left`` argument of :meth:`WorkPool.submit` for this request (None outside the API router)."""
    receive = scope.get(RECEIVE)
    return None if receive is None else partial(client_left, receive)


async def charge(scope: Scope, cost: int) -> None:
    """Count this request as ``cost`` requests in its client's ``/api/v2`` limit (it counted as one already);
    raise :class:`~sudokupool.api.limiter.Refused` (a 429) when that is past the limit. No-op off ``/api/v2``."""
    entry = scope.get(CHARGE)
    if entry is None or cost <= 1:
        return
    limiter, headers = entry
    refusal = await limiter.charge(scope, cost - 1, headers)
    if refusal is not None:
        raise Refused(refusal)


def work_error(exc: WorkError) -> ApiError:
    """The JSON error for a refusal of the work pool: 503 with ``Retry-After`` for a full queue or a job past its
    budget, :data:`CLIENT_LEFT` for a job dropped because its client left. A crash is not a client error: re-raise.

    A refusal's traceback is dropped: a refusal is an answer, not a fault, and its traceback's frames (the
    handler's, the cache's, the pool's) hold the futures that hold the refusal, a reference cycle that only a pass
    of the garbage collector frees, holding up the event loop while it runs.
    """
    if isinstance(exc, (WorkQueueFull, WorkBudgetExceeded, WorkDropped)):
        exc.__traceback__ = None
    if isinstance(exc, WorkQueueFull):
        return ApiError(BUSY, status=503, headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, WorkBudgetExceeded):
        return ApiError(TOO_LONG, status=503, headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, WorkDropped):
        return ApiError("the client left before the work started", status=CLIENT_LEFT)
    raise exc


async def submit(scope: Scope, work: WorkPool, kind: str, function: Callable[..., T], *args: Any) -> T:
    """``work.submit`` for this request (dropped if its client leaves), the pool's refusals as :class:`ApiError`."""
    try:
        return await work.submit(function, *args, kind=kind, left=left_of(scope))
    except (WorkQueueFull, WorkBudgetExceeded, WorkDropped) as exc:
        raise work_error(exc) from None
