"""``sudokupool pack EXPORT|DIR``: write the pack beside an export (``pool-<ts>.pack``), for fast loads; given a
directory, beside its newest export, as ``check`` reads one."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from sudokupool.commands.check import add_bad_lines_option, limits_from
from sudokupool.config import SettingsError
from sudokupool.loading.loader import LoadError, LoadLimits, LoadReport, parse_export
from sudokupool.naming import pack_key
from sudokupool.storage.base import StorageError
from sudokupool.storage.local import LocalStore, export_name_problem


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "pack",
        help="write the pack beside an export (pool-<ts>.pack)",
        description=(
            "Parse an export as the service loads it (within its SUDOKUPOOL_MAX_* bounds) and write its pack "
            "beside it, pool-<timestamp>.pack, which a service maps instead of parsing the export. Given a "
            "directory, the pack of its newest export."
        ),
    )
    parser.add_argument(
        "export", type=Path, help="an export, pool-YYYYMMDDTHHMMSSZ.ndjson[.gz], or a directory: its newest export"
    )
    add_bad_lines_option(parser)
    parser.set_defaults(func=run)


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


def run(args: argparse.Namespace) -> int:
    """Within the service's bounds (``SUDOKUPOOL_MAX_*`` from the environment), as ``check`` does."""
    try:
        limits = limits_from(args)
    except SettingsError as exc:
        print(f"sudokupool pack: {exc}", file=sys.stderr)
        return 2
    try:
        written, report = asyncio.run(write_pack(args.export, limits))
    except LoadError as exc:
        print(f"sudokupool pack: {exc}", file=sys.stderr)
        return 1
    print(report.summary())
    print(f"wrote {written} ({written.stat().st_size} bytes)")
    return 0
