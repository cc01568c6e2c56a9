"""Exports in a local directory, or one local export file."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from sudokupool.naming import EXPORT_NAME, PACK_NAME, is_export_name, is_misdated, is_pack_name, pack_key
from sudokupool.storage.base import CHUNK, ExportListing, ExportObject, Misdated, StorageError


class LocalStore:
    """A directory of ``pool-*.ndjson[.gz]`` files, or a single export file of any name."""

    def __init__(self, path: str | Path, *, name: str | None = None) -> None:
        self.path = Path(path)
        # What logs and health call it: the path, unless a name is given (the bundled demo pool's).
        self.name = name
        self.misdated = Misdated(str(self.path))

    @property
    def description(self) -> str:
        return self.name or str(self.path)

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
        """The ``limit`` newest exports of the directory, with their packs. Names are read without a stat
        (a directory entry's type is in the listing on Linux) and ordered by their time as text (it sorts
        as the time does); only the exports returned, and their packs, are stat'ed, and only names that
        come that far are checked for a real date. 200k entries took 5-6 s when every one was stat'ed."""
        candidates: list[tuple[str, bool, str]] = []
        packs: set[str] = set()
        with os.scandir(self.path) as entries:
            for entry in entries:
                name = entry.name
                if not name.startswith("pool-"):
                    continue
                if (match := EXPORT_NAME.search(name)) is not None:
                    if entry.is_file():
                        candidates.append((match.group(1), name.endswith(".gz"), name))
                elif PACK_NAME.search(name) is not None and entry.is_file():
                    packs.add(name)
        candidates.sort(reverse=True)
        chosen: list[ExportObject] = []
        truncated = False
        for _, _, name in candidates:
            if is_misdated(name):
                self.misdated.note(name)
                continue
            if len(chosen) == limit:
                truncated = True
                break
            try:
                export = self._object(self.path / name)
            except FileNotFoundError:  # removed since the directory was read
                continue
            pack = pack_key(name)
            if pack in packs:
                with contextlib.suppress(FileNotFoundError):
                    export = replace(export, pack=self._object(self.path / pack))
            chosen.append(export)
        return ExportListing(tuple(chosen), truncated=truncated)

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

    async def close(self) -> None:
        return None
