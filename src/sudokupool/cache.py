"""The local directory of packs (``SUDOKUPOOL_CACHE_DIR``): one lock per export, whole files only.

Packs downloaded from object storage, and packs made by parsing an export that had none, are kept here
for the next boot. Workers of one machine share the directory: the first to take an export's lock
downloads or writes its pack, the others wait and then map that same file, so the pool sits once in
the page cache for all of them. A pack is written beside its final name and renamed to it when whole,
so whoever maps a name finds a whole pack.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import mmap
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO

from sudokupool.pack import map_file

logger = logging.getLogger("sudokupool.loader")


@contextlib.asynccontextmanager
async def lock(directory: str | Path | None, pack_key: str) -> AsyncIterator[None]:
    """Hold ``directory``'s lock for the pack ``pack_key`` (``flock``; nothing without a directory)."""
    if not directory:
        yield
        return
    path = Path(directory)
    try:
        await asyncio.to_thread(path.mkdir, parents=True, exist_ok=True)
        handle = await asyncio.to_thread(open, path / f".{pack_key.rsplit('/', 1)[-1]}.lock", "ab")
    except OSError:
        yield  # the pack cannot be kept there either (logged where it is written)
        return
    try:
        await asyncio.to_thread(fcntl.flock, handle.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        handle.close()  # releases the lock


def new_file(keep: Path | None) -> tuple[IO[bytes], Path | None]:
    """A file to write a pack into, and its path: beside ``keep`` (to be renamed to it with :func:`keep`
    when whole), else an anonymous temporary file (no path)."""
    if keep is not None:
        try:
            keep.parent.mkdir(parents=True, exist_ok=True)
            # Closed by the caller, once the pack is written (and mapped).
            handle = tempfile.NamedTemporaryFile(dir=keep.parent, prefix=f".{keep.name}.", delete=False)  # noqa: SIM115
            return handle, Path(handle.name)
        except OSError as exc:
            logger.warning("cannot write a pack into %s (%s); keeping it in a temporary file", keep.parent, exc)
    return tempfile.TemporaryFile(), None


def keep(written: Path, final: Path) -> None:
    """Make the whole pack ``written`` readable by all and rename it to ``final``."""
    written.chmod(0o644)
    os.replace(written, final)


async def download(stream: AsyncIterator[bytes], cached: Path | None) -> mmap.mmap:
    """Write ``stream`` to ``cached`` (or to a temporary file) and map it."""
    handle, written = new_file(cached)
    try:
        with handle:
            async for chunk in stream:
                await asyncio.to_thread(handle.write, chunk)
            handle.flush()
            data = map_file(handle.fileno())
        if written is not None and cached is not None:
            keep(written, cached)
            written = None
        return data
    finally:
        if written is not None:
            written.unlink(missing_ok=True)
