"""Background tasks of the app (the sync loop, the metrics flush, a storage call in flight), and the startup
load stopped by a shutdown signal."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import TypeVar

T = TypeVar("T")


async def cancel(task: asyncio.Task[object] | None) -> None:
    """Cancel ``task`` (if any) and wait until it has ended."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class Interrupted(Exception):
    """A shutdown signal arrived while :func:`until_signalled` waited; the message names it."""


async def until_signalled(work: Awaitable[T]) -> T:
    """Await ``work``, cancelling it when SIGINT or SIGTERM arrives, and raise :class:`Interrupted` then.

    uvicorn starts looking at its shutdown flag only once startup is over, so a startup load (a parse of
    a large export, storage retried for ``SUDOKUPOOL_STORAGE_RETRY_SECONDS``) would otherwise hold a
    shutdown until it ends, past the grace period of a platform's SIGKILL. The server's own handler
    still runs (it records the signal and exits once startup has failed). Only a handler installed from
    Python is chained: where there is none (granian handles signals natively) nothing is changed.
    """
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    caught: list[int] = []
    chained: dict[signal.Signals, Callable[[int, FrameType | None], object]] = {}

    def stop(sig: int, frame: FrameType | None) -> None:
        caught.append(sig)
        loop.call_soon_threadsafe(task.cancel)  # wakes the loop from its select()
        chained[signal.Signals(sig)](sig, frame)

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(sig)
            if callable(handler) and handler is not signal.default_int_handler:
                chained[sig] = handler
                signal.signal(sig, stop)
    try:
        return await task
    except asyncio.CancelledError:
        if not caught:
            raise
        raise Interrupted(f"stopped by {signal.Signals(caught[0]).name}") from None
    finally:
        for sig, handler in chained.items():
            signal.signal(sig, handler)
