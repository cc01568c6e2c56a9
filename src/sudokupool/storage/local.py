"""Exports in a local directory, or one local export file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from sudokupool.naming import is_export_name, is_pack_name, pack_key
from sudokupool.storage.base import CHUNK, ExportListing, ExportObject, StorageError, newest_first


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
            exports: list[ExportObject] = []
            packs: dict[str, ExportObject] = {}
            for path in self.path.iterdir():
                if is_export_name(path.name) and path.is_file():
                    exports.append(self._object(path))
                elif is_pack_name(path.name) and path.is_file():
                    packs[path.name] = self._object(path)
        except OSError as exc:
            raise StorageError(f"{self.path}: {exc.strerror or exc}") from None
        return newest_first(exports, packs, limit)

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
