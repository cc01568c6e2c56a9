"""Exports in a local directory, or one local export file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

from sudokupool.storage.base import CHUNK, ExportListing, ExportObject, StorageError, is_export_name


class LocalStore:
    """A directory of ``pool-*.ndjson[.gz]`` files, or a single export file of any name."""

    def __init__(self, path: str | Path, *, name: str | None = None) -> None:
        self.path = Path(path)
        # What logs and health call it: the path, unless a name is given (the bundled demo pool's).
        self.name = name

    @property
    def description(self) -> str:
        return self.name or str(self.path)

    def _object(self, path: Path) -> ExportObject:
        stat = path.stat()
        return ExportObject(key=path.name, size=stat.st_size, uploaded=datetime.fromtimestamp(stat.st_mtime, UTC))

    def _list(self, limit: int) -> ExportListing:
        try:
            if self.path.is_file():
                return ExportListing((self._object(self.path),), truncated=False)
            if not self.path.is_dir():
                raise StorageError(f"{self.path}: no such file or directory")
            objects = [self._object(p) for p in self.path.iterdir() if p.is_file() and is_export_name(p.name)]
        except OSError as exc:
            raise StorageError(f"{self.path}: {exc.strerror or exc}") from None
        objects.sort(key=lambda o: o.order, reverse=True)
        return ExportListing(tuple(objects[:limit]), truncated=len(objects) > limit)

    async def list_exports(self, limit: int) -> ExportListing:
        return await asyncio.to_thread(self._list, limit)

    def _file(self, key: str) -> Path:
        if self.path.is_file():
            return self.path
        return self.path / Path(key).name

    async def open(self, key: str) -> AsyncIterator[bytes]:
        path = self._file(key)
        try:
            handle = await asyncio.to_thread(path.open, "rb")
        except OSError as exc:
            raise StorageError(f"{path}: {exc.strerror or exc}") from None
        try:
            while chunk := await asyncio.to_thread(handle.read, CHUNK):
                yield chunk
        except OSError as exc:
            raise StorageError(f"{path}: {exc.strerror or exc}") from None
        finally:
            handle.close()

    async def close(self) -> None:
        return None
