"""Background tasks of the app (the sync loop, the metrics flush, a storage call in flight)."""

from __future__ import annotations

import asyncio
import contextlib


async def cancel(task: asyncio.Task[object] | None) -> None:
    """Cancel ``task`` (if any) and wait until it has ended."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
