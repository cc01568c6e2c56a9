"""Exports in S3-compatible object storage (AWS S3, Cloudflare R2, MinIO, SeaweedFS...).

One long-lived aiobotocore client per store: :meth:`S3Store.connect` opens it (the app does so in its
lifespan) and :meth:`S3Store.close` closes it. Credentials come from the standard AWS chain
(``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, profiles, instance roles...); this module never reads them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator, Mapping
from datetime import UTC
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

import aiohttp
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from botocore.exceptions import BotoCoreError, ClientError, ParamValidationError

from sudokupool.config import S3Location, Settings, parse_s3_url
from sudokupool.storage.base import (
    CHUNK,
    SHA256_METADATA,
    Download,
    ExportListing,
    ExportObject,
    Misdated,
    StorageError,
    newest_first,
)
from sudokupool.storage.naming import is_export_name, is_misdated, is_pack_name

if TYPE_CHECKING:
    from types_aiobotocore_s3 import S3Client

#: Keys per ListObjectsV2 page (the S3 maximum).
PAGE_SIZE = 1000

#: Listing cap: at most this many pages (so 1,000,000 keys) are read per listing. S3 lists keys in
#: name order, and export names sort by time, so a prefix holding more keys than this would hide its
#: newest exports; the listing then says ``truncated`` and the operator should prune old exports.
MAX_LIST_PAGES = 1000

CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 30.0
#: Attempts per request including the first; the sync loop retries on its own schedule, so keep it small.
MAX_ATTEMPTS = 3


def resolve_region(settings: Settings, environ: Mapping[str, str] | None = None) -> str:
    """The region: the setting, else ``AWS_REGION``/``AWS_DEFAULT_REGION``, else ``us-east-1``."""
    env = os.environ if environ is None else environ
    return settings.s3_region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"


def client_config(settings: Settings) -> AioConfig:
    """The botocore client config shared by the service and ``sudokupool publish``."""
    return AioConfig(
        connect_timeout=CONNECT_TIMEOUT,
        read_timeout=READ_TIMEOUT,
        retries={"mode": "standard", "total_max_attempts": MAX_ATTEMPTS},
        s3={"addressing_style": settings.s3_addressing_style},
        # Signature V4 also for presigned URLs (an export's download): botocore presigns with V2 by default,
        # which AWS refuses in newer regions, and V2 cannot say how long a URL lasts (X-Amz-Expires).
        signature_version="s3v4",
        # botocore >= 1.36 computes CRC checksums on every upload and validates them on downloads by
        # default. R2, SeaweedFS, older MinIO and other S3-compatible servers reject or mishandle those
        # headers (XAmzContentSHA256Mismatch, "Unsupported header 'x-amz-sdk-checksum-algorithm'"), so
        # only send them when an operation requires it. See https://github.com/boto/boto3/issues/4392
        # and botocore.config.Config's request_checksum_calculation / response_checksum_validation.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )


def create_client(settings: Settings) -> contextlib.AbstractAsyncContextManager[S3Client]:
    """An ``async with`` context that opens (and on exit closes) one S3 client configured from ``settings``."""
    session = get_session()
    client: contextlib.AbstractAsyncContextManager[S3Client] = session.create_client(
        "s3",
        endpoint_url=settings.s3_endpoint_url or None,
        region_name=resolve_region(settings),
        config=client_config(settings),
    )
    return client


#: What a failed S3 call raises: botocore's errors (including connection and read-timeout errors,
#: ``IncompleteReadError`` for a body cut short) and the HTTP layer's, which can surface unwrapped.
_FAILURES: tuple[type[BaseException], ...] = (BotoCoreError, ClientError, aiohttp.ClientError, OSError, TimeoutError)


#: S3 error codes of a configuration mistake: retrying does not mend them.
_PERMANENT: Final = frozenset(
    {"NoSuchBucket", "InvalidBucketName", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied"}
)


def _permanent(exc: BaseException) -> bool:
    if isinstance(exc, ParamValidationError):  # a bucket name S3 cannot take, refused before any request
        return True
    return isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in _PERMANENT


def describe_failure(exc: BaseException) -> str:
    """A short reason for a failed call: the S3 error code and message, or the exception text."""
    if isinstance(exc, ClientError):
        error: Mapping[str, Any] = exc.response.get("Error", {})
        code = error.get("Code") or "error"
        message = error.get("Message") or ""
        return f"{code}: {message}" if message else str(code)
    return " ".join(str(exc).split()) or type(exc).__name__


class S3Store:
    """Exports under one ``s3://bucket/prefix/``, read through one long-lived client.

    ``S3Store.from_url(url, settings)`` makes no request and opens no connection; the client is
    created on first use (in the app's lifespan) and reused until :meth:`close`. ``await
    S3Store.connect(url, settings)`` opens it at once. Both work as ``async with`` contexts.
    """

    def __init__(self, location: S3Location, settings: Settings) -> None:
        self.location = location
        self._settings = settings
        self._client: S3Client | None = None
        self._exit_stack = contextlib.AsyncExitStack()
        self._opening = asyncio.Lock()
        self.misdated = Misdated(location.url)
        # The SHA-256 publish stored with each object, by key, size and upload time (objects are replaced,
        # not changed): one HEAD per export and process.
        self._checksums: dict[tuple[str, int, str], str | None] = {}

    @classmethod
    def from_url(cls, url: str, settings: Settings) -> S3Store:
        """A store for ``url`` (``s3://bucket/prefix/``); raise :class:`ValueError` on a malformed URL."""
        return cls(parse_s3_url(url), settings)

    @classmethod
    async def connect(cls, url: str, settings: Settings) -> S3Store:
        """A store for ``url`` with its client already open. No request is made yet."""
        store = cls.from_url(url, settings)
        await store.client()
        return store

    async def client(self) -> S3Client:
        """The store's one client, created on first call."""
        if self._client is None:
            async with self._opening:
                if self._client is None:
                    self._client = await self._exit_stack.enter_async_context(create_client(self._settings))
        return self._client

    async def __aenter__(self) -> S3Store:
        await self.client()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def description(self) -> str:
        return self.location.url

    async def list_exports(self, limit: int) -> ExportListing:
        bucket, prefix = self.location.bucket, self.location.prefix
        objects: list[ExportObject] = []
        packs: dict[str, ExportObject] = {}
        more = False
        try:
            # Delimiter "/" keeps the listing to the prefix's direct children, as a local directory is;
            # StartAfter skips every key that sorts before "pool-".
            paginator = (await self.client()).get_paginator("list_objects_v2")
            pages = paginator.paginate(
                Bucket=bucket,
                Prefix=prefix,
                Delimiter="/",
                StartAfter=prefix + "pool-",
                PaginationConfig={"PageSize": PAGE_SIZE},
            )
            read = 0
            async for page in pages:
                for item in page.get("Contents", []):
                    key = item["Key"]
                    if is_export_name(key):
                        uploaded = item["LastModified"].astimezone(UTC)
                        objects.append(ExportObject(key=key, size=item["Size"], uploaded=uploaded))
                    elif is_pack_name(key):
                        uploaded = item["LastModified"].astimezone(UTC)
                        packs[key] = ExportObject(key=key, size=item["Size"], uploaded=uploaded)
                    elif is_misdated(key):
                        self.misdated.note(key)
                read += 1
                if read >= MAX_LIST_PAGES and page.get("IsTruncated"):
                    more = True
                    break
        except _FAILURES as exc:
            raise StorageError(f"{self.description}: {describe_failure(exc)}", permanent=_permanent(exc)) from None
        listing = newest_first(objects, packs, limit)
        return ExportListing(listing.objects, truncated=more or listing.truncated)

    async def open(self, key: str, start: int = 0, end: int | None = None) -> AsyncGenerator[bytes, None]:
        bucket = self.location.bucket
        where = f"s3://{bucket}/{key}"
        try:
            client = await self.client()
            if start == 0 and end is None:
                response = await client.get_object(Bucket=bucket, Key=key)
            else:
                span = f"bytes={start}-{'' if end is None else end - 1}"
                response = await client.get_object(Bucket=bucket, Key=key, Range=span)
        except _FAILURES as exc:
            raise StorageError(f"{where}: {describe_failure(exc)}") from None
        expected = response.get("ContentLength")
        if end is not None and expected is not None and expected != end - start:
            # The object is shorter than the range asked for (it was replaced by a shorter one).
            response["Body"].close()
            raise StorageError(f"{where}: bytes {start}-{end - 1} asked for, {expected} bytes answered")
        received = 0
        body = response["Body"]
        try:
            parts: list[bytes] = []
            pending = 0
            while True:
                # read(n) returns what the connection has buffered (often much less than n), so gather
                # reads into ~CHUNK-sized pieces, each written to disk by the download (loading.cache.download).
                data = await body.read(CHUNK - pending)
                if data:
                    parts.append(data)
                    pending += len(data)
                    received += len(data)
                if pending >= CHUNK or (not data and pending):
                    chunk = b"".join(parts)
                    parts.clear()
                    pending = 0
                    yield chunk
                if not data:
                    break
        except _FAILURES as exc:
            raise StorageError(f"{where}: read failed after {received} bytes ({describe_failure(exc)})") from None
        finally:
            # Also runs when the consumer stops early: give the connection back instead of leaking it.
            body.close()
        if expected is not None and received != expected:
            raise StorageError(f"{where}: stream cut short ({received} of {expected} bytes)")

    async def _head(self, key: str) -> dict[str, Any] | None:
        """The object's HEAD (size, metadata), or None when there is no such object."""
        try:
            client = await self.client()
            head = await client.head_object(Bucket=self.location.bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return None
            raise StorageError(f"s3://{self.location.bucket}/{key}: {describe_failure(exc)}") from None
        except _FAILURES as exc:
            raise StorageError(f"s3://{self.location.bucket}/{key}: {describe_failure(exc)}") from None
        return dict(head)

    async def checksum(self, export: ExportObject) -> str | None:
        kept = (export.key, export.size, export.uploaded.isoformat())
        if kept in self._checksums:
            return self._checksums[kept]
        head = await self._head(export.key)
        found = None if head is None else head.get("Metadata", {}).get(SHA256_METADATA)
        if len(self._checksums) >= 4096:
            self._checksums.clear()
        self._checksums[kept] = found
        return found

    async def download(self, name: str, *, expires: int) -> Download | None:
        # Only a file name of an export's form is looked up, under the store's own prefix.
        if "/" in name or not is_export_name(name):
            return None
        key = self.location.prefix + name
        head = await self._head(key)
        if head is None:
            return None
        try:
            client = await self.client()
            url = await client.generate_presigned_url(
                "get_object", Params={"Bucket": self.location.bucket, "Key": key}, ExpiresIn=expires
            )
        except _FAILURES as exc:
            raise StorageError(f"s3://{self.location.bucket}/{key}: {describe_failure(exc)}") from None
        checksum = head.get("Metadata", {}).get(SHA256_METADATA)
        return Download(name, int(head["ContentLength"]), checksum, url=url)

    async def close(self) -> None:
        self._client = None
        await self._exit_stack.aclose()
