"""A bench-only variant of the service whose ``/api/v2`` limiter counts nothing and always answers the
same three ``X-RateLimit-*`` headers: what the spec's headers cost the server, apart from the counting.

    uvicorn --factory fixed_headers_app:create_app --app-dir bench ...

bench/cpu_per_request.py serves it beside the real service, so v1 random, this and v2 random compare
the route without a limiter, with the headers only, and with the whole limiter. Never part of the service.
"""

from __future__ import annotations

from starlette.types import Scope

from sudokupool.app import SudokuPool
from sudokupool.app import create_app as create_service
from sudokupool.ratelimit.limiter import Refusal

HEADERS = [
    (b"x-ratelimit-limit", b"1000000000"),
    (b"x-ratelimit-remaining", b"999999999"),
    (b"x-ratelimit-reset", b"42"),
]


class FixedHeaders:
    """Stands in for :class:`~sudokupool.ratelimit.limiter.RateLimiter`: admits everything, counts nothing."""

    synchronous = True

    def __init__(self, exempt_paths: frozenset[str]) -> None:
        self.exempt_paths = exempt_paths

    def admit_now(self, scope: Scope) -> list[tuple[bytes, bytes]] | Refusal:
        return list(HEADERS)


def create_app() -> SudokuPool:
    service = create_service()
    v2 = service.http.v2  # type: ignore[attr-defined]  # the /api/v2 router (see create_app)
    v2.limiter = FixedHeaders(v2.limiter.exempt_paths)
    return service
