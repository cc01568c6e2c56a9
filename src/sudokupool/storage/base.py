"""The seam between the service and wherever exports are stored."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Final, Protocol

from sudokupool.storage.naming import export_order, export_timestamp, pack_key

logger = logging.getLogger("sudokupool.storage")

#: Bytes per chunk a store hands out: what a download (of a pack, or of an export to parse) writes at a
#: time.
CHUNK = 256 << 10
#: The object metadata (``x-amz-meta-sha256``) ``publish`` stores an upload's SHA-256 in, as hex.
SHA256_METADATA: Final = "sha256"


def file_sha256(path: Path) -> str:
    """The SHA-256 of the file ``path``, as hex (read in chunks; hashlib lets go of the GIL as it hashes)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class StorageError(Exception):
    """Storage could not be listed or read (unreachable, missing, denied). The message says which.
    ``permanent``: a mistake in the configuration (no such bucket, credentials refused) that waiting for
    storage to come back does not mend."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


@dataclass(frozen=True)
class ExportObject:
    """One export file: its key (file name or object key), size in bytes and upload time (UTC); and the
    pack stored beside it, if any (never listed as an export of its own)."""

    key: str
    size: int
    uploaded: datetime
    pack: ExportObject | None = None

    @property
    def timestamp(self) -> datetime:
        """The UTC time in the export's name; used to order exports."""
        return export_timestamp(self.key)

    @property
    def order(self) -> tuple[datetime, bool, str]:
        """Sort key: newest name first wins; at equal times the gzip file wins."""
        order = export_order(self.key)
        if order is None:
            raise ValueError(f"{self.key!r} is not an export name")
        return order


def newest_first(exports: list[ExportObject], packs: dict[str, ExportObject], limit: int) -> ExportListing:
    """The listing of ``exports``, newest first, each with its pack from ``packs`` (by key) attached."""
    exports.sort(key=lambda o: o.order, reverse=True)
    chosen = tuple(replace(e, pack=packs.get(pack_key(e.key))) for e in exports[:limit])
    return ExportListing(chosen, truncated=len(exports) > limit)


class Misdated:
    """Names a store lists that have an export's or a pack's pattern but no real time in them
    (``pool-20260230T000000Z.ndjson``): each is logged once, as what it is not, and then ignored. At most
    :data:`REMEMBERED` names are remembered, so a flood of such names costs a bounded set and one last line."""

    REMEMBERED: Final = 1000

    def __init__(self, where: str) -> None:
        self.where = where
        self._seen: set[str] = set()
        self._full = False

    def note(self, key: str) -> None:
        if key in self._seen or self._full:
            return
        if len(self._seen) == self.REMEMBERED:
            self._full = True
            logger.warning(
                "%s: more misdated names than the %d logged; no more are logged", self.where, len(self._seen)
            )
            return
        self._seen.add(key)
        logger.warning("%s: ignoring %s: its name holds no real UTC time, so it is not an export", self.where, key)


@dataclass(frozen=True)
class ExportListing:
    """Exports newest first, and whether the store had more than were returned."""

    objects: tuple[ExportObject, ...]
    truncated: bool

    @property
    def latest(self) -> ExportObject | None:
        return self.objects[0] if self.objects else None


@dataclass(frozen=True)
class Download:
    """How a client gets one export: its file name, size in bytes and SHA-256 (hex; None when storage does not
    know it), and either the local file to stream (``path``) or a URL to send the client to (``url``)."""

    name: str
    size: int
    sha256: str | None
    path: Path | None = None
    url: str | None = None


class ExportStore(Protocol):
    """A place that holds exports. Implementations: ``local.LocalStore``, ``s3.S3Store``."""

    @property
    def description(self) -> str:
        """Where the store points, for logs and errors (e.g. ``s3://bucket/prefix/``)."""
        ...

    async def list_exports(self, limit: int) -> ExportListing:
        """Export objects sorted newest first (by the time in their name), at most ``limit`` of them.

        Raise :class:`StorageError` when the store cannot be listed.
        """
        ...

    def open(self, key: str, start: int = 0, end: int | None = None) -> AsyncGenerator[bytes, None]:
        """Stream the raw (possibly gzip-compressed) bytes of one object in chunks: all of it, or the
        bytes from ``start`` up to ``end`` (exclusive), as a pack's parallel download asks for them.

        Raise :class:`StorageError` when the object cannot be read; a stream cut short raises too.
        """
        ...

    async def checksum(self, export: ExportObject) -> str | None:
        """The SHA-256 (hex) of the listed ``export``, or None when the store does not know it."""
        ...

    async def download(self, name: str, *, expires: int) -> Download | None:
        """How to download the export named ``name`` (a file name, no prefix): None when the store holds no
        export of that name; a URL, if any, is valid for ``expires`` seconds. Raise :class:`StorageError`
        when the store cannot be asked."""
        ...

    async def close(self) -> None:
        """Release clients and connections."""
        ...
