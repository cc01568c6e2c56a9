"""The local directory of packs (``SUDOKUPOOL_CACHE_DIR``): one lock per export, whole files only.

Packs downloaded from object storage, and packs made by parsing an export that had none, are kept here
for the next boot. Workers of one machine share the directory: the first to take an export's lock
downloads or writes its pack, the others wait and then map that same file, so the pool sits once in
the page cache for all of them. A pack is written beside its final name and renamed to it when whole,
so whoever maps a name finds a whole pack. What a load's checks found about a copy is recorded beside it
(:class:`~sudokupool.pool.checked.Copy`), so that the next load of the same file need not check it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import shutil
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO

from sudokupool.pool import checked
from sudokupool.storage.base import ExportStore, StorageError
from sudokupool.storage.naming import is_pack_name

logger = logging.getLogger("sudokupool.loader")

#: Packs the directory keeps, the newest by name (so by export time) and always the one just loaded:
#: older ones are removed after each load, so the directory does not grow with every export synced.
KEEP = 3
#: A file is downloaded in ranges of this many bytes, :data:`PARALLEL` of them at a time (see :func:`download`).
PART_SIZE = 128 << 20
PARALLEL = 8


@contextlib.asynccontextmanager
async def lock(pack: Path | None) -> AsyncIterator[None]:
    """Hold the cache directory's lock for the pack ``pack`` (``flock``): none without a pack, or where the
    pack cannot be kept either (logged where it is written)."""
    handle = None
    if pack is not None:
        with contextlib.suppress(OSError):
            await asyncio.to_thread(pack.parent.mkdir, parents=True, exist_ok=True)
            handle = await asyncio.to_thread(open, pack.with_name(f".{pack.name}.lock"), "ab")
    with handle or contextlib.nullcontext():  # closing it releases the lock
        if handle is not None:
            await asyncio.to_thread(fcntl.flock, handle.fileno(), fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def new_file(keep: Path | None) -> Iterator[IO[bytes]]:
    """A file to write a pack into, closed at the end of the block: beside ``keep``, and renamed to it
    (readable by all) when the block ends without an error, else removed; without ``keep`` (or when
    its directory cannot be written), an anonymous temporary file."""
    written: Path | None = None
    if keep is not None:
        try:
            # Closed (then renamed or removed) below, as is the temporary file.
            file: IO[bytes] = tempfile.NamedTemporaryFile(dir=keep.parent, prefix=f".{keep.name}.", delete=False)  # noqa: SIM115
            written = Path(file.name)
        except OSError as exc:
            logger.warning("cannot write a pack into %s (%s); keeping it in a temporary file", keep.parent, exc)
    if written is None:
        file = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        with file:
            yield file
        if written is not None and keep is not None:
            written.chmod(0o644)
            os.replace(written, keep)
            written = None
    finally:
        if written is not None:
            written.unlink(missing_ok=True)


def own_directory(path: Path) -> Path | None:
    """``path`` (``SUDOKUPOOL_CACHE_DIR``; made ``0700`` when missing) when it is a directory of this user's that
    no other user may write, else None, logged: packs then go where they would without a cache directory.

    Another user who could write there (a directory they made first, a shared ``1777`` one) could put a pack
    of theirs under the service, or truncate its copy while it is mapped, which faults the worker (SIGBUS)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        problem = checked.not_own(os.stat(path), "directory")
    except OSError as exc:
        problem = exc.strerror or str(exc)
    if problem is None:
        return path
    logger.warning("not using the cache directory %s: %s; packs go to temporary files", path, problem)
    return None


def open_own(path: Path) -> tuple[int, os.stat_result]:
    """A descriptor of the pack copy ``path`` and its status, when it is a regular file of this user's that no
    other user may write; no symbolic link is followed. OSError otherwise (its ``strerror`` says why)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NOCTTY)
    try:
        st = os.fstat(fd)
        problem = checked.not_own(st, "file")
        if problem is not None:
            raise PermissionError(errno.EPERM, problem)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def private_dir(source: Path) -> Path | None:
    """A directory of this user's own for the copies of the packs of the local directory ``source``, when no
    cache directory is set: ``<temp>/sudokupool-<uid>/<hash of source>/``, made readable by this user only.
    The workers of one machine then copy a pack once and map one file, which the page cache holds once
    (a copy per worker is private memory of each, 308 MB a worker for the 100k bench pool). None when it
    cannot be made, or is not a directory of this user's that only this user may write (another user
    could otherwise place a file under the service): a temporary file per process then. The directories of
    sources that no living process uses any more (stopped services', other sources') are removed then."""
    base = Path(tempfile.gettempdir()) / f"sudokupool-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        try:
            os.mkdir(base, 0o700)
        except OSError:
            if not base.is_dir():
                return None
    try:
        made = os.lstat(base)
        if not stat.S_ISDIR(made.st_mode) or made.st_uid != os.getuid() or made.st_mode & 0o077:
            logger.warning("not copying packs into %s: not a directory of this user's alone", base)
            return None
        directory = base / hashlib.sha256(str(source.resolve()).encode()).hexdigest()[:16]
        directory.mkdir(mode=0o700, exist_ok=True)
        _hold(directory)
    except OSError:
        return None
    _sweep(base, directory)
    return directory


#: The private directories this process uses, each with the descriptor of its ``.in-use`` file, on which the
#: process holds a shared lock for as long as it lives (the lock goes with the process, however it ends).
_HELD: dict[Path, int] = {}


def _in_use(directory: str | Path) -> int:
    """A descriptor of ``directory``'s ``.in-use`` file (made when missing), to lock."""
    return os.open(os.path.join(directory, ".in-use"), os.O_RDONLY | os.O_CREAT, 0o600)


def _hold(directory: Path) -> None:
    if directory not in _HELD:
        fd = _in_use(directory)
        fcntl.flock(fd, fcntl.LOCK_SH)
        _HELD[directory] = fd


def _sweep(base: Path, kept: Path) -> None:
    """Remove the private directories under ``base`` that no living process uses (nobody holds a lock on their
    ``.in-use``): the copies of sources no service on this machine serves any more, a pack's size each."""
    with contextlib.suppress(OSError), os.scandir(base) as entries:
        for entry in entries:
            if entry.name == kept.name or len(entry.name) != 16 or not entry.is_dir(follow_symlinks=False):
                continue
            with contextlib.suppress(OSError):
                fd = _in_use(entry.path)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises while a process uses it
                    shutil.rmtree(entry.path)
                    logger.info("removed %s: the pack copies of a source no running service uses", entry.path)
                finally:
                    os.close(fd)


def prune(directory: Path, loaded: str, keep: int = KEEP) -> None:
    """Remove all but the ``keep`` newest packs in ``directory`` (never ``loaded``), and their locks;
    and the partial file of a download or write that a killed process left (a pack's worth of disk),
    once nobody holds that pack's lock. A worker still serving a removed pack keeps its mapping (the file
    goes with the last one)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        # .pool-<ts>.pack.<random>, beside .pool-<ts>.pack.lock and .pool-<ts>.pack.checked
        pack, _, suffix = name[1:].rpartition(".")
        if name.startswith(".") and is_pack_name(pack) and suffix not in ("lock", "checked"):
            with contextlib.suppress(OSError), open(directory / f".{pack}.lock", "ab") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises while it is being written
                (directory / name).unlink()
                logger.info("removed %s from the cache directory (a partial pack left by a stopped process)", name)
    packs = sorted((name for name in names if is_pack_name(name)), reverse=True)
    for name in packs[keep:]:
        if name != loaded:
            with contextlib.suppress(OSError):
                (directory / name).unlink()
                (directory / f".{name}.lock").unlink(missing_ok=True)
                (directory / f".{name}.checked").unlink(missing_ok=True)
                logger.info("removed %s from the cache directory (it keeps the newest %d packs)", name, keep)


class Received:
    """Bytes this process received from storage in downloads, for the metrics."""

    bytes = 0


async def download(store: ExportStore, key: str, size: int, fd: int, *, rate: int) -> None:
    """Write the object ``key`` of ``size`` bytes from ``store`` into the file ``fd``. The file is
    preallocated and filled by :data:`PARALLEL` ranged reads of :data:`PART_SIZE` bytes at
    a time, each written in place: one stream from S3 was the bottleneck of a boot. With a ``rate``
    (bytes a second; a live sync, beside requests) one range is read at a time, no faster than that:
    receiving a pack at full speed took enough of the serving loop's time to raise the p99 of requests
    3-7x. A read that fails or comes back short or long raises :class:`StorageError`.
    """
    if size:
        await asyncio.to_thread(os.posix_fallocate, fd, 0, size)
    parts = iter(range(0, size, PART_SIZE))
    began, received = time.monotonic(), 0

    async def part() -> None:
        nonlocal received
        for start in parts:  # shared: each task takes the next part
            at, end = start, min(start + PART_SIZE, size)
            async with contextlib.aclosing(store.open(key, start, end)) as stream:
                async for chunk in stream:
                    if at + len(chunk) > end:
                        raise StorageError(f"{key}: bytes {start}-{end - 1} came back longer")
                    await asyncio.to_thread(_write_at, fd, chunk, at)
                    at += len(chunk)
                    Received.bytes += len(chunk)
                    if rate:
                        received += len(chunk)
                        await asyncio.sleep(max(0.0, received / rate - (time.monotonic() - began)))
            if at != end:
                raise StorageError(f"{key}: bytes {start}-{end - 1} came back as {at - start} bytes")

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(1 if rate else min(PARALLEL, -(-size // PART_SIZE))):
                group.create_task(part())
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None


#: ``ioctl(FICLONE)``: share the source's blocks (btrfs, XFS, bcachefs...) instead of copying them.
_FICLONE = 0x40049409


def copy(source: int, target: int) -> int:
    """Copy the file ``source`` (a descriptor, from its start to its end as it is now) into the empty file
    ``target``; return the bytes copied. A clone where the filesystem shares blocks between files, else
    ``copy_file_range`` (in the kernel, no pass through Python), else reads and writes.

    The service maps only files it made: a file another process writes in place (``cp`` over it,
    ``rsync --inplace``, ``truncate``) faults the process that maps it (SIGBUS) as soon as it reads a page
    that is no longer there. A copy that raced such a write is refused by the pack's checksum."""
    with contextlib.suppress(OSError):
        fcntl.ioctl(target, _FICLONE, source)
        return os.fstat(target).st_size
    done = 0
    try:
        while copied := os.copy_file_range(source, target, 1 << 30, done, done):
            done += copied
        return done
    except OSError:  # not supported between these files
        pass
    os.lseek(source, done, os.SEEK_SET)
    os.lseek(target, done, os.SEEK_SET)
    while chunk := os.read(source, 1 << 20):
        _write_at(target, chunk, done)
        done += len(chunk)
    return done


def _write_at(fd: int, data: bytes, at: int) -> None:
    """Write all of ``data`` at offset ``at`` of ``fd`` (``pwrite`` may write less than it is given)."""
    done = 0
    while done < len(data):
        done += os.pwrite(fd, data[done:] if done else data, at + done)
