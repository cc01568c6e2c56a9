"""A bench-only variant of the service whose ``/api/v2`` limiter counts nothing and always answers the
same three ``X-RateLimit-*`` headers: what the spec's headers cost the server, apart from the counting.

    uvicorn --factory fixed_headers_app:create_app --app-dir bench ...

bench/cpu_per_request.py serves it beside the real service, so v1 random, this and v2 random compare
the route without a limiter, with the headers only, and with the whole limiter. ``BENCH_SPIN_US=2.5``
makes it busy-wait that many microseconds per request instead of counting: what any work of that size
costs the server (docs/benchmarks.md, "Server CPU is not additive here"). Never part of the service.
"""

from __future__ import annotations

import os
import time

from starlette.types import Scope

from sudokupool.api.gate import Refusal
from sudokupool.app import SudokuPool
from sudokupool.app import create_app as create_service

SPIN = float(os.environ.get("BENCH_SPIN_US", "0")) / 1e6

HEADERS = [
    (b"x-ratelimit-limit", b"1000000000"),
    (b"x-ratelimit-remaining", b"999999999"),
    (b"x-ratelimit-reset", b"42"),
]


class FixedHeaders:
    """Stands in for :class:`~sudokupool.api.gate.RateLimiter`: admits everything, counts nothing."""

    synchronous = True

    def __init__(self, exempt_paths: frozenset[str]) -> None:
        self.exempt_paths = exempt_paths

    def admit_now(self, scope: Scope) -> list[tuple[bytes, bytes]] | Refusal:
        if SPIN:
            end = time.perf_counter() + SPIN
            while time.perf_counter() < end:
                pass
        return list(HEADERS)


def create_app() -> SudokuPool:
    service = create_service()
    v2 = service.http.v2  # type: ignore[attr-defined]  # the /api/v2 router (see create_app)
    v2.limiter = FixedHeaders(v2.limiter.exempt_paths)
    return service
