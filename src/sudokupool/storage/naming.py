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


def _stamp_time(stamp: str) -> datetime | None:
    """The UTC time ``YYYYMMDDTHHMMSSZ`` spells, or None when it spells none (month 13, 30 February...).
    Built from its fields rather than by ``strptime``, which takes ten times as long: a listing reads
    every name in a directory or prefix."""
    try:
        return datetime(
            int(stamp[0:4]), int(stamp[4:6]), int(stamp[6:8]), int(stamp[9:11]), int(stamp[11:13]),
            int(stamp[13:15]), tzinfo=UTC,
        )  # fmt: skip
    except ValueError:
        return None


def _dated(pattern: re.Pattern[str], key: str) -> datetime | None:
    match = pattern.search(key)
    return None if match is None else _stamp_time(match.group(1))


def is_export_name(key: str) -> bool:
    """Whether ``key`` names an export: the pattern, with a time that exists (see :func:`is_misdated`)."""
    return _dated(EXPORT_NAME, key) is not None


def is_pack_name(key: str) -> bool:
    return _dated(PACK_NAME, key) is not None


def is_misdated(key: str) -> bool:
    """Whether ``key`` has an export's or a pack's pattern but no real UTC time in it
    (``pool-20261399T000000Z.ndjson``): it is neither, and a listing says so once."""
    match = EXPORT_NAME.search(key) or PACK_NAME.search(key)
    return match is not None and _stamp_time(match.group(1)) is None


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
    when = _dated(EXPORT_NAME, key)
    if when is None:
        raise ValueError(f"{key!r} is not an export name")
    return when


def export_order(key: str) -> tuple[datetime, bool, str] | None:
    """Sort key of the export named ``key``: newest name first wins; at equal times the gzip file wins.
    None for other names (a misdated one too)."""
    when = _dated(EXPORT_NAME, key)
    return None if when is None else (when, key.endswith(".gz"), key)
