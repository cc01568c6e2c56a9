"""Exports in a local directory, or one local export file."""

from __future__ import annotations

import asyncio
import heapq
import os
import re
from collections.abc import AsyncGenerator, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from stat import S_ISREG
from typing import Final

from sudokupool.storage.base import (
    CHUNK,
    Download,
    ExportListing,
    ExportObject,
    Misdated,
    StorageError,
    file_sha256,
)
from sudokupool.storage.naming import is_export_name, is_misdated, is_pack_name, pack_key

#: An export's name in a directory (``naming.EXPORT_NAME`` without a prefix).
_LOCAL_EXPORT: Final = re.compile(r"pool-\d{8}T\d{6}Z\.ndjson(?:\.gz)?")


#: Checksums kept, by file, size and modification time: about 200 bytes each.
_CHECKSUMS_KEPT: Final = 4096

#: Names past ``limit`` a listing takes in its first look.
_SPARE: Final = 16


def _newest_first(names: list[str], newest: list[str]) -> Iterator[str]:
    """``names`` newest first, ``newest`` (the first of them, already in order) before the rest is sorted."""
    yield from newest
    yield from sorted(names, reverse=True)[len(newest) :]


def export_name_problem(path: Path) -> str | None:
    """Why the file ``path`` is not an export by its name (docs/export-format.md, Files), or None.

    One rule for every command that takes a file as an export where it lies (``serve``, ``pack``): its
    name's time orders it among exports and ties it to its pack, so a file of another name is refused
    rather than served or packed under a time it does not have."""
    if is_export_name(path.name):
        return None
    return (
        f"{path}: not an export name; name it pool-YYYYMMDDTHHMMSSZ.ndjson[.gz] (the UTC time it was made), "
        "or upload it with `sudokupool publish`, which names it"
    )


class LocalStore:
    """A directory of ``pool-*.ndjson[.gz]`` files, or a single export file.

    ``any_name``: a single file of any name is read as the only export (``check`` reads the records of a
    file before ``publish`` names it); otherwise a file must have an export's name."""

    def __init__(self, path: str | Path, *, name: str | None = None, any_name: bool = False) -> None:
        self.path = Path(path)
        # What logs and health call it: the path, unless a name is given (the bundled demo pool's).
        self.name = name
        self.any_name = any_name
        self.misdated = Misdated(str(self.path))
        self._checksums: dict[tuple[str, int, int], str] = {}

    @property
    def description(self) -> str:
        return self.name or str(self.path)

    @property
    def demo(self) -> bool:
        """Whether this is the demo pool bundled with the package (``snapshots/``)."""
        from sudokupool.config import BUNDLED_SNAPSHOTS

        return self.path == BUNDLED_SNAPSHOTS

    def _object(self, path: Path) -> ExportObject:
        stat = path.stat()
        return ExportObject(key=path.name, size=stat.st_size, uploaded=datetime.fromtimestamp(stat.st_mtime, UTC))

    def _list(self, limit: int) -> ExportListing:
        try:
            if self.path.is_file():
                if is_pack_name(self.path.name):
                    raise StorageError(
                        f"{self.path} is a pool pack, not an export: point at the export it was made from "
                        "(pool-<timestamp>.ndjson[.gz]) or at their directory"
                    )
                problem = None if self.any_name else export_name_problem(self.path)
                if problem is not None:
                    raise StorageError(problem)
                export = self._object(self.path)
                if is_export_name(self.path.name):
                    beside = self.path.with_name(pack_key(self.path.name))
                    if beside.is_file():
                        export = replace(export, pack=self._object(beside))
                return ExportListing((export,), truncated=False)
            if not self.path.is_dir():
                missing = "no such file or directory" if not self.path.exists() else "not a regular file or directory"
                raise StorageError(f"{self.path}: {missing}")
            return self._newest(limit)
        except OSError as exc:
            raise StorageError(f"{self.path}: {exc.strerror or exc}") from None

    def _newest(self, limit: int) -> ExportListing:
        """The ``limit`` newest exports of the directory, with their packs. Names are read without a stat and
        sorted as text, which is their order (the time, then ``.ndjson.gz`` after ``.ndjson`` of the same
        time); they are then taken from the newest until ``limit`` exports are found, and only those (and
        their packs) are stat'ed and checked for a real date. 200k entries took 5-6 s when every one was
        stat'ed and its date parsed (docs/benchmarks.md, "Many exports")."""
        names = [name for name in os.listdir(self.path) if name.startswith("pool-")]
        # The newest few by heapq (a loop in Python, so a sync's listing lets go of the GIL while it works,
        # where one sort of 100k names held it for tens of milliseconds); all of them only when too many of
        # those are not exports.
        newest = heapq.nlargest(limit + _SPARE, names)
        chosen: list[ExportObject] = []
        truncated = False
        for name in _newest_first(names, newest):
            if _LOCAL_EXPORT.fullmatch(name) is None:
                continue
            if is_misdated(name):
                self.misdated.note(name)
                continue
            export = self._regular(name)
            if export is None:
                continue
            if len(chosen) == limit:
                truncated = True
                break
            pack = self._regular(pack_key(name))
            chosen.append(export if pack is None else replace(export, pack=pack))
        return ExportListing(tuple(chosen), truncated=truncated)

    def _regular(self, name: str) -> ExportObject | None:
        """``name`` in the directory when it is a regular file (or a link to one), else None."""
        try:
            stat = os.stat(self.path / name)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not S_ISREG(stat.st_mode):
            return None
        return ExportObject(key=name, size=stat.st_size, uploaded=datetime.fromtimestamp(stat.st_mtime, UTC))

    async def list_exports(self, limit: int) -> ExportListing:
        return await asyncio.to_thread(self._list, limit)

    def _file(self, key: str) -> Path:
        if self.path.is_file():
            return self.path if key == self.path.name else self.path.with_name(Path(key).name)
        return self.path / Path(key).name

    def path_of(self, key: str) -> Path:
        """The local file of ``key`` (an export or a pack), to map rather than stream."""
        return self._file(key)

    async def open(self, key: str, start: int = 0, end: int | None = None) -> AsyncGenerator[bytes, None]:
        path = self._file(key)
        try:
            handle = await asyncio.to_thread(path.open, "rb")
        except OSError as exc:
            raise StorageError(f"{path}: {exc.strerror or exc}") from None
        try:
            handle.seek(start)
            left = float("inf") if end is None else end - start
            while left > 0 and (chunk := await asyncio.to_thread(handle.read, int(min(CHUNK, left)))):
                left -= len(chunk)
                yield chunk
        except OSError as exc:
            raise StorageError(f"{path}: {exc.strerror or exc}") from None
        finally:
            handle.close()

    async def _sha256(self, path: Path, stat: os.stat_result) -> str:
        """The file's SHA-256, hashed in a thread once per file, size and modification time."""
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        found = self._checksums.get(key)
        if found is None:
            found = await asyncio.to_thread(file_sha256, path)
            if len(self._checksums) >= _CHECKSUMS_KEPT:
                self._checksums.clear()
            self._checksums[key] = found
        return found

    def _export_file(self, name: str) -> tuple[Path, os.stat_result] | None:
        """The regular file of the export ``name`` (a file name of an export's form), or None."""
        if _LOCAL_EXPORT.fullmatch(name) is None or is_misdated(name):
            return None
        if self.path.is_file() and name != self.path.name:
            return None
        path = self.path if self.path.is_file() else self.path / name
        try:
            stat = os.stat(path)
        except OSError:
            return None
        return (path, stat) if S_ISREG(stat.st_mode) else None

    async def checksum(self, export: ExportObject) -> str | None:
        found = await asyncio.to_thread(self._export_file, Path(export.key).name)
        return None if found is None else await self._sha256(*found)

    async def download(self, name: str, *, expires: int) -> Download | None:
        # Only a name of an export's form is looked up (no separator, no ``..``), and only in the directory.
        found = await asyncio.to_thread(self._export_file, name)
        if found is None:
            return None
        path, stat = found
        try:
            checksum = await self._sha256(path, stat)
        except OSError as exc:
            raise StorageError(f"{path}: {exc.strerror or exc}") from None
        return Download(name, stat.st_size, checksum, path=path)

    async def close(self) -> None:
        return None
