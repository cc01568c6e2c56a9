"""The process-local play and download counters, and the response shape both counters share.

The process-local counter covers this worker process since it started (each worker of an instance counts
apart), and says so in its response.
"""

from __future__ import annotations

import time
from typing import Any, Final, Literal

Event = Literal["random", "by_id", "daily", "solution", "image_puzzle", "image_solution", "exports_listing"]

PLAYS: Final = ("random", "by_id", "daily")
DOWNLOADS: Final = ("solution", "image_puzzle", "image_solution", "exports_listing")


class Activity:
    """Counters of this process. ``record`` is one dict update: cheap enough for every request."""

    scope = "instance"
    covers = "this worker process since it started; other workers and instances keep their own counts"

    def __init__(self, *, now: float | None = None) -> None:
        self.since = int(time.time() if now is None else now)
        self.counts: dict[str, int] = dict.fromkeys(PLAYS + DOWNLOADS, 0)

    def record(self, event: Event) -> None:
        self.counts[event] += 1

    def snapshot(self) -> dict[str, Any]:
        """The ``stats/activity`` response body (see the ActivityStats schema in the OpenAPI document)."""
        counts = dict(self.counts)
        return shape(self.scope, self.covers, self.since, counts)

    async def snapshot_async(self) -> dict[str, Any]:
        """What the endpoint serves; the Redis-backed counter reads the cluster totals here."""
        return self.snapshot()

    async def start(self) -> None:
        """Called at startup; the Redis-backed counter starts its flusher here."""

    async def aclose(self) -> None:
        """Called at shutdown; the Redis-backed counter flushes what it still holds here."""


def shape(scope: str, covers: str, since: int | None, counts: dict[str, int]) -> dict[str, Any]:
    plays = {name: counts.get(name, 0) for name in PLAYS}
    downloads = {name: counts.get(name, 0) for name in DOWNLOADS}
    return {
        "scope": scope,
        "covers": covers,
        "since": since,
        "plays": {**plays, "total": sum(plays.values())},
        "downloads": {**downloads, "total": sum(downloads.values())},
    }
