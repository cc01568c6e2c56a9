"""Where exports live: a local directory or file, or S3-compatible object storage.

Both backends implement :class:`sudokupool.storage.base.ExportStore`; :func:`open_store` picks one
from the ``SUDOKUPOOL_EXPORTS`` setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sudokupool.storage.base import ExportListing, ExportObject, ExportStore, StorageError
from sudokupool.storage.local import LocalStore

if TYPE_CHECKING:
    from sudokupool.config import Settings

__all__ = ["ExportListing", "ExportObject", "ExportStore", "LocalStore", "StorageError", "open_store"]


def open_store(source: str, settings: Settings) -> ExportStore:
    """The store for ``source``: ``s3://bucket/prefix/`` or a local directory or file.

    The bundled demo pool is named ``snapshots`` (in logs and health), not by its path on this machine.
    """
    if source.startswith("s3://"):
        from sudokupool.storage.s3 import S3Store

        return S3Store.from_url(source, settings)
    from sudokupool.config import BUNDLED_SNAPSHOTS

    if Path(source) == BUNDLED_SNAPSHOTS:
        return LocalStore(source, name=BUNDLED_SNAPSHOTS.name)
    return LocalStore(source)
