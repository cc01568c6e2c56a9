"""How exports and their packs are named and ordered (docs/export-format.md); storage and the loader ask here."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

#: The UTC time in an export's name, ``YYYYMMDDTHHMMSSZ``.
STAMP_FORMAT: Final = "%Y%m%dT%H%M%SZ"
#: ``pool-YYYYMMDDTHHMMSSZ.ndjson`` or ``.ndjson.gz``, after any prefix.
EXPORT_NAME: Final = re.compile(r"(?:^|/)pool-(\d{8}T\d{6}Z)\.ndjson(\.gz)?$")
#: ``pool-YYYYMMDDTHHMMSSZ.pack``: the pack beside the export of that name.
PACK_NAME: Final = re.compile(r"(?:^|/)pool-(\d{8}T\d{6}Z)\.pack$")


def is_export_name(key: str) -> bool:
    return EXPORT_NAME.search(key) is not None


def is_pack_name(key: str) -> bool:
    return PACK_NAME.search(key) is not None


def pack_key(export_key: str) -> str:
    """The key of the pack beside the export ``export_key``: ``.../pool-<ts>.pack``."""
    if not is_export_name(export_key):
        raise ValueError(f"{export_key!r} is not an export name")
    return export_key.removesuffix(".gz").removesuffix(".ndjson") + ".pack"


def export_filename(when: datetime, *, gzip: bool = True) -> str:
    """``pool-YYYYMMDDTHHMMSSZ.ndjson.gz`` (or ``.ndjson``) for the UTC time ``when``."""
    stamp = when.astimezone(UTC).strftime(STAMP_FORMAT)
    return f"pool-{stamp}.ndjson{'.gz' if gzip else ''}"


def export_timestamp(key: str) -> datetime:
    """The UTC time in the export's name; used to order exports. ValueError for other names."""
    match = EXPORT_NAME.search(key)
    if match is None:
        raise ValueError(f"{key!r} is not an export name")
    return datetime.strptime(match.group(1), STAMP_FORMAT).replace(tzinfo=UTC)


def export_order(key: str) -> tuple[datetime, bool, str] | None:
    """Sort key of the export named ``key``: newest name first wins; at equal times the gzip file wins.
    None for other names."""
    if not is_export_name(key):
        return None
    return (export_timestamp(key), key.endswith(".gz"), key)
