"""Cut-down live reloads for ``bench/loop_lag.py --stage``: which part of a reload makes the serving loop late.

- ``receive``: the load process works and sends every prepared part as a reload does; the serving side
  receives and unpickles each one, then drops it (nothing is indexed).
- ``work``: the load process inflates, splits and parses the export as a reload does, but sends back
  only ``None`` for each part (nothing crosses the pipe but the stored chunks going in).

The full reload (``--stage full``, the default) is ``load_latest(background=True)`` itself.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

from sudokupool import loader
from sudokupool.export import LineReader
from sudokupool.storage.base import ExportStore


def child_work_only(conn: Connection, gzipped: bool, stamp: int, workers: int, niceness: int) -> None:
    """``loader._child_main`` less the parts: each prepared part is answered with a marker only."""
    loader._start_worker(niceness)
    reader = LineReader(gzipped=gzipped)
    context = multiprocessing.get_context("spawn")
    executor = ProcessPoolExecutor(workers, mp_context=context, initializer=loader._start_worker, initargs=(0,))
    pending: deque[Future[Any]] = deque()
    try:
        while True:
            chunk = conn.recv_bytes()
            lines = reader.feed(chunk) if chunk else reader.finish()
            if lines.data:
                pending.append(executor.submit(loader.prepare_lines, lines, stamp))
            while pending and (pending[0].done() or len(pending) > 2 * workers or not chunk):
                pending.popleft().result()
                conn.send(("part", None))  # the parent counts it and drops it
            if not chunk:
                break
        conn.send(("done", None))
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


async def reload_stage(store: ExportStore, stage: str, workers: int, niceness: int) -> int:
    """Run the ``stage`` of a background reload of the newest export in ``store``; the parts (or markers) seen."""
    listing = await store.list_exports(limit=1)
    assert listing.latest is not None
    child_main = loader._child_main
    if stage == "work":
        # Spawned by reference: the load process imports this module (bench/ is on sys.path) and runs it.
        loader._child_main = child_work_only  # type: ignore[assignment]
    try:
        seen = 0
        prepared = loader._prepare_in_child(store, listing.latest.key, 0, workers, niceness)
        async with contextlib.aclosing(prepared):
            async for _ in prepared:
                seen += 1
        return seen
    finally:
        loader._child_main = child_main
