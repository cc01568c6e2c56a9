"""One storage listing for the live syncs of all the workers of one instance.

Each worker of ``sudokupool serve`` runs its own live sync; without this, each lists the export storage
every ``SUDOKUPOOL_SYNC_INTERVAL`` (W workers: W LIST calls an interval). With it, a worker whose turn
comes reads the listing another worker of the same launcher fetched less than ``max_age`` seconds ago from
a file in the temporary directory (named with the launcher's pid, see :mod:`sudokupool.serving.supervision`); only
when there is none does it list storage, holding the file's lock (``flock``, never waited on: a worker
that finds it taken polls for the other's result for a moment, then lists itself), and writes what it got.

A failed listing writes nothing: the next worker tries storage itself, and each logs the outage it meets.
The file is rewritten whole (write, then rename), so a reader never sees half of one.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import tempfile
import time
import zlib
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import orjson

from sudokupool.config import SettingsError, web_concurrency
from sudokupool.serving.supervision import LAUNCHER_PID
from sudokupool.storage.base import ExportListing, ExportObject

#: How long a worker that finds another listing waits for its result before listing itself.
WAIT_SECONDS: Final = 5.0
_POLL: Final = 0.05


class ListingFile:
    """A listing shared through ``path`` (and its lock, ``path`` + ``.lock``) for ``max_age`` seconds."""

    def __init__(self, path: Path, max_age: float, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self.max_age = max_age
        self._clock = clock

    @classmethod
    def for_instance(cls, environ: Mapping[str, str], source: str, max_age: float) -> ListingFile | None:
        """The listing the workers of this process's launcher share for ``source``, or None: not started by
        ``sudokupool serve``, or a single worker (nothing to share)."""
        launcher = environ.get(LAUNCHER_PID, "")
        try:
            workers = web_concurrency(environ)
        except SettingsError:
            return None  # the launcher refuses a bad value: no launcher started these workers
        if not launcher.isdigit() or workers <= 1 or max_age <= 0:
            return None
        # The launcher's pid in the name (its leftovers are swept like its other files, see
        # sudokupool.serving.supervision), and the store's, as the same number in every worker.
        name = f"sudokupool-listing-{launcher}-{zlib.crc32(source.encode()):08x}.json"
        return cls(Path(tempfile.gettempdir()) / name, max_age)

    async def list(self, fetch: Callable[[], Awaitable[ExportListing]]) -> ExportListing:
        """A listing at most ``max_age`` seconds old: another worker's, or ``fetch()``'s (then shared)."""
        cached = await asyncio.to_thread(self._read)
        if cached is not None:
            return cached
        waited = 0.0
        while True:
            fd = await asyncio.to_thread(self._try_lock)
            if fd is not None:
                break
            if waited >= WAIT_SECONDS:
                return await fetch()
            await asyncio.sleep(_POLL)
            waited += _POLL
            cached = await asyncio.to_thread(self._read)
            if cached is not None:
                return cached
        try:
            # Another worker may have written one between the first look and the lock.
            cached = await asyncio.to_thread(self._read)
            if cached is not None:
                return cached
            listing = await fetch()
            await asyncio.to_thread(self._write, listing)
            return listing
        finally:
            os.close(fd)  # releases the lock

    def _try_lock(self) -> int | None:
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        return fd

    def _read(self) -> ExportListing | None:
        try:
            data = orjson.loads(self.path.read_bytes())
            if not 0 <= self._clock() - float(data["at"]) < self.max_age:
                return None
            objects = tuple(_object(item) for item in data["objects"])
            return ExportListing(objects, truncated=bool(data["truncated"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _write(self, listing: ExportListing) -> None:
        body = {"at": self._clock(), "objects": [_json(o) for o in listing.objects], "truncated": listing.truncated}
        partial = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            partial.write_bytes(orjson.dumps(body))
            os.replace(partial, self.path)


def _json(item: ExportObject) -> dict[str, Any]:
    return {
        "key": item.key,
        "size": item.size,
        "uploaded": item.uploaded.isoformat(),
        "pack": None if item.pack is None else _json(item.pack),
    }


def _object(data: dict[str, Any]) -> ExportObject:
    pack = data.get("pack")
    return ExportObject(
        key=str(data["key"]),
        size=int(data["size"]),
        uploaded=datetime.fromisoformat(data["uploaded"]),
        pack=None if pack is None else _object(pack),
    )
