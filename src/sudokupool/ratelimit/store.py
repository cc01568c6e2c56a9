"""The seam between the limiter middleware and where counts live (process memory or Redis)."""

from __future__ import annotations

from typing import Protocol

from sudokupool.ratelimit.window import Decision


class LimiterUnavailable(Exception):
    """The shared store failed and ``SUDOKUPOOL_REDIS_FAILURE_MODE=closed``: answer 503."""


class LimiterStore(Protocol):
    """Counts requests per identity in the current window.

    ``hit`` counts one request of ``identity`` as ``cost`` requests and decides it against ``limit``. It is atomic with
    respect to other ``hit`` calls for the same identity (also across processes for a shared store),
    which is what makes 200 concurrent requests at a limit of 60 admit exactly 60.
    """

    async def hit(self, identity: str, limit: int, cost: int = 1) -> Decision: ...

    async def aclose(self) -> None: ...
