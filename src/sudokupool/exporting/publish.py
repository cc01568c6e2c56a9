"""Publishing an export: upload it and its pack to object storage under a key named for the time it is published.

The key is ``prefix + pool-YYYYMMDDTHHMMSSZ.ndjson.gz`` for the current UTC time, so operators never
hand-name exports and the newest upload is the one the service loads. A plain ``.ndjson`` file is
gzip-compressed on the way (unless ``compress`` is false). The pack (``pool-YYYYMMDDTHHMMSSZ.pack``) is
made for the file as uploaded, under its new name, and goes up first: an instance that lists the new
export finds its pack beside it. The S3 client is configured exactly as the service's (``SUDOKUPOOL_S3_*``
settings, credentials from the standard AWS chain).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sudokupool.config import S3Location, Settings
from sudokupool.loading.loader import LoadError, LoadLimits
from sudokupool.loading.packing import write_pack
from sudokupool.loading.verify import pack_problem
from sudokupool.pool.pack import restamp
from sudokupool.storage.base import SHA256_METADATA, StorageError, file_sha256
from sudokupool.storage.naming import export_filename, pack_key

if TYPE_CHECKING:
    from types_aiobotocore_s3 import S3Client
    from types_aiobotocore_s3.type_defs import CompletedPartTypeDef

#: Files up to this size go up in one PutObject; larger ones as a multipart upload of parts this size,
#: so memory stays bounded whatever the export's size.
PART_SIZE = 64 << 20


class PublishError(Exception):
    """Publishing failed; the message says why (one line)."""


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _gzip_copy(source: Path, target: Path) -> None:
    with source.open("rb") as raw, gzip.open(target, "wb", compresslevel=6) as packed:
        shutil.copyfileobj(raw, packed, 1 << 20)


async def _upload(client: S3Client, bucket: str, key: str, path: Path) -> None:
    kind = "application/octet-stream" if key.endswith(".pack") else "application/x-ndjson"
    size = (await asyncio.to_thread(path.stat)).st_size
    # The SHA-256 the export's listing and download give (docs/api.md, "Exports"), kept as the object's metadata.
    metadata = {SHA256_METADATA: await asyncio.to_thread(file_sha256, path)}
    handle = await asyncio.to_thread(path.open, "rb")
    try:
        if size <= PART_SIZE:
            body = await asyncio.to_thread(handle.read)
            await client.put_object(Bucket=bucket, Key=key, Body=body, ContentType=kind, Metadata=metadata)
            return
        upload = await client.create_multipart_upload(Bucket=bucket, Key=key, ContentType=kind, Metadata=metadata)
        upload_id = upload["UploadId"]
        try:
            parts: list[CompletedPartTypeDef] = []
            number = 1
            while part := await asyncio.to_thread(handle.read, PART_SIZE):
                done = await client.upload_part(
                    Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=part
                )
                parts.append({"ETag": done["ETag"], "PartNumber": number})
                number += 1
            await client.complete_multipart_upload(
                Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}
            )
        except BaseException:
            # Leave no half-uploaded parts behind (they cost storage and never show up as an object).
            with contextlib.suppress(Exception):
                await client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
            raise
    finally:
        handle.close()


async def publish(
    path: Path,
    location: S3Location,
    settings: Settings,
    *,
    compress: bool = True,
    now: datetime | None = None,
    with_pack: bool = True,
    limits: LoadLimits | None = None,
    checked: Path | None = None,
) -> str:
    """Upload the (already checked) export ``path`` under ``location`` with a key for ``now``, after its
    pack unless ``with_pack`` is false; return the export's key. ``checked`` is the pack the check
    made of ``path`` (its records are the service's when the check skipped no line): it is renamed
    for the upload rather than made again.

    Raise :class:`PublishError` when storage cannot be reached, or an export as new as ``now`` is there
    already (the service would not prefer the new file, or it would be overwritten).
    """
    # Imported here: aiobotocore takes half a second to import, and every command (serve too) imports the publish
    # command to build its parser.
    from sudokupool.storage.s3 import S3Store, describe_failure

    when = (now or datetime.now(UTC)).replace(microsecond=0)
    gzipped = path.name.endswith(".gz") or compress
    key = location.prefix + export_filename(when, gzip=gzipped)
    async with S3Store(location, settings) as store:
        try:
            listing = await store.list_exports(limit=1)
        except StorageError as exc:
            raise PublishError(str(exc)) from None
        latest = listing.latest
        if latest is not None and latest.timestamp >= when:
            raise PublishError(
                f"s3://{location.bucket}/{latest.key} is not older than {when:%Y-%m-%dT%H:%M:%SZ}; "
                "a new upload would not be the latest (clock skew, or two publishes within one second)"
            )
        with tempfile.TemporaryDirectory(prefix="sudokupool-publish-") as scratch:
            # The export under its new name (a link, or a gzip copy), so its pack names it.
            upload = Path(scratch) / key.rsplit("/", 1)[-1]
            if gzipped and not path.name.endswith(".gz"):
                await asyncio.to_thread(_gzip_copy, path, upload)
            else:
                await asyncio.to_thread(_link_or_copy, path, upload)
            uploads = [(upload, key)]
            if with_pack and checked is not None:
                size = (await asyncio.to_thread(upload.stat)).st_size
                await asyncio.to_thread(restamp, checked, export_name=upload.name, export_size=size)
                uploads.insert(0, (checked, pack_key(key)))
            elif with_pack:
                try:
                    packed, _ = await write_pack(upload, limits)
                except LoadError as exc:
                    raise PublishError(f"cannot make the pack: {exc}") from None
                uploads.insert(0, (packed, pack_key(key)))
            # The service's own checks of a pack (checksum, the export it names, structure); its records are
            # the parse of this export (the check's, or write_pack's), so they are not compared again.
            if with_pack and (problem := await pack_problem(uploads[0][0], upload, limits, contents=False)):
                raise PublishError(f"the pack made for {upload.name} would be refused: {problem}")
            client = await store.client()
            for file, object_key in uploads:
                try:
                    await _upload(client, location.bucket, object_key, file)
                except Exception as exc:
                    failure = describe_failure(exc)
                    raise PublishError(f"s3://{location.bucket}/{object_key}: upload failed ({failure})") from None
    return key
