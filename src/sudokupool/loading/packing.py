"""Writing the pack of an export beside it (``pool-<ts>.pack``), from the export parsed as the service parses it:
what ``sudokupool pack`` and ``publish`` run."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from sudokupool.loading.loader import LoadError, LoadLimits, LoadReport, parse_export
from sudokupool.storage.base import StorageError
from sudokupool.storage.local import LocalStore, export_name_problem
from sudokupool.storage.naming import pack_key


async def write_pack(path: Path, limits: LoadLimits | None = None) -> tuple[Path, LoadReport]:
    """Parse the export at ``path`` as the service does (within ``limits``) and write its pack beside it
    (replacing any).

    Given a directory, the export is its newest. Raise :class:`LoadError` when the export cannot be used; the
    pack is then not written.
    """
    if await asyncio.to_thread(path.is_dir):
        path = await newest_export(path)
    packed = await asyncio.to_thread(_pack_path, path)
    store = LocalStore(path)
    try:
        listing = await store.list_exports(limit=1)
    except StorageError as exc:
        raise LoadError(str(exc)) from None
    export = listing.objects[0]
    _, report = await parse_export(store, export, log_lines=False, keep=packed, limits=limits)
    return packed, report


async def newest_export(directory: Path) -> Path:
    """The file of the newest export in ``directory`` (as the service and ``check`` choose it); :class:`LoadError`
    when it holds none."""
    store = LocalStore(directory)
    try:
        latest = (await store.list_exports(limit=1)).latest
    except StorageError as exc:
        raise LoadError(str(exc)) from None
    if latest is None:
        raise LoadError(f"{directory}: no export in it (pool-YYYYMMDDTHHMMSSZ.ndjson[.gz])")
    return store.path_of(latest.key)


def _pack_path(export: Path) -> Path:
    """Where the pack of the export file ``export`` goes; :class:`LoadError` when it is no export file, or
    the pack cannot be written there (found before the parse, which can take minutes)."""
    problem = export_name_problem(export)
    if problem is not None:
        raise LoadError(problem)
    if not export.is_file():
        raise LoadError(f"{export}: {'not a regular file' if export.exists() else 'no such file or directory'}")
    packed = export.with_name(pack_key(export.name))
    problem = write_problem(export.parent)
    if problem is not None:
        raise LoadError(f"cannot write {packed}: {problem}")
    return packed


def write_problem(directory: Path) -> str | None:
    """Why no file can be made in ``directory`` (its error's words), or None. Making one is the one sure
    test: permissions, a read-only mount, root's exemptions, /proc."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None
