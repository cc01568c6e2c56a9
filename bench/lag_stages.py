"""Cut-down live reloads for ``bench/loop_lag.py --stage``: which part of a reload makes the serving loop late.

- ``receive``: the load process works and sends every prepared part as a reload does; the serving side
  receives and unpickles each one, then drops it (nothing is indexed).
- ``work``: the load process inflates, splits and parses the export as a reload does, but sends back
  only ``None`` for each part (nothing crosses the pipe but the stored chunks going in).

The full reload (``--stage full``, the default) is ``load_latest(background=True)`` itself.
"""

from __future__ import annotations

import contextlib
from multiprocessing.connection import Connection
from typing import Any

from sudokupool import loader
from sudokupool.storage.base import ExportStore


class _PartsDropped:
    """The load process's end of the pipe, sending ``None`` where it would send a prepared part."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def recv_bytes(self) -> bytes:
        return self.conn.recv_bytes()

    def send(self, message: tuple[str, Any]) -> None:
        self.conn.send(("part", None) if message[0] == "part" else message)


def child_work_only(
    conn: Connection, key: str, stamp: int, workers: int, niceness: int, limits: loader.LoadLimits, give_up: int
) -> None:
    """``loader._child_main`` itself, whose parts are dropped at the pipe: all of the work, none of the transfer."""
    loader._child_main(_PartsDropped(conn), key, stamp, workers, niceness, limits, give_up)  # type: ignore[arg-type]


async def reload_stage(store: ExportStore, stage: str, niceness: int) -> None:
    """Run the ``stage`` of a background reload of the newest export in ``store``, with as many workers as
    the reload itself would have."""
    listing = await store.list_exports(limit=1)
    assert listing.latest is not None
    workers = loader._worker_count(listing.latest, None, background=True)
    child_main = loader._child_main
    if stage == "work":
        # Spawned by reference: the load process imports this module (bench/ is on sys.path) and runs it.
        loader._child_main = child_work_only  # type: ignore[assignment]
    try:
        limits = loader.LoadLimits()
        give_up = limits.give_up(listing.latest)
        prepared = loader._prepare_in_child(store, listing.latest.key, 0, workers, niceness, limits, give_up)
        async with contextlib.aclosing(prepared):
            async for _ in prepared:
                pass  # received and dropped: nothing is indexed
    finally:
        loader._child_main = child_main
