"""``/api/v2/pool-exports/{name}``: an export as open data, downloaded by its file name.

From a local directory the file is streamed, with its ``Content-Length``; from S3 the answer is a redirect
(302) to a presigned URL valid for ``SUDOKUPOOL_EXPORT_URL_SECONDS`` (at most an hour), so the bytes never
pass through the service. Either way the answer names the file's SHA-256, the one ``pool-exports`` lists, in
``X-Checksum-SHA256`` (hex) and in ``Repr-Digest`` (RFC 9530). Only a file name of an export's form is looked
up, and only among the store's exports: another name (a pack, a path, ``..``, an encoded slash) is a 404.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Final, NamedTuple

from starlette.types import Scope

from sudokupool.api.endpoints import NO_STORE, Reply
from sudokupool.api.errors import ApiError, NotFound
from sudokupool.api.query import Header
from sudokupool.storage.base import Download, StorageError

if TYPE_CHECKING:
    from sudokupool.api.endpoints import Endpoints

NO_EXPORT: Final = "no export has that name: the names are listed at /api/v2/pool-exports"
#: Seconds a client is asked to wait when storage cannot be asked.
RETRY_SECONDS: Final = 5


class Streamed(NamedTuple):
    """A response whose body is sent as it is read: status, headers (without Content-Length), the body's
    length, and its chunks."""

    status: int
    headers: list[Header]
    length: int
    chunks: AsyncIterator[bytes]


def checksum_headers(found: Download) -> list[Header]:
    """The SHA-256 of the export, as hex and as a ``Repr-Digest``; none when storage does not know it."""
    if found.sha256 is None:
        return []
    digest = base64.b64encode(bytes.fromhex(found.sha256)).decode()
    return [(b"x-checksum-sha256", found.sha256.encode()), (b"repr-digest", f"sha-256=:{digest}:".encode())]


async def export_download(endpoints: Endpoints, scope: Scope, param: str | None) -> Reply | Streamed:
    """The export named ``param``: streamed from a local directory, or a redirect to S3."""
    store = endpoints.runtime.store
    if store is None or not param:
        raise NotFound(NO_EXPORT)
    try:
        found = await store.download(param, expires=endpoints.runtime.settings.export_url_seconds)
    except StorageError:
        raise ApiError(
            "storage is unreachable; the export cannot be downloaded right now",
            status=503,
            headers={"Retry-After": str(RETRY_SECONDS)},
        ) from None
    if found is None:
        raise NotFound(NO_EXPORT)
    checksums = checksum_headers(found)
    if found.url is not None:
        return Reply(302, [(b"location", found.url.encode()), NO_STORE, *checksums], b"")
    kind = b"application/gzip" if found.name.endswith(".gz") else b"application/x-ndjson"
    headers = [
        (b"content-type", kind),
        (b"content-disposition", f'attachment; filename="{found.name}"'.encode()),
        endpoints.cache_control,
        *checksums,
    ]
    return Streamed(200, headers, found.size, store.open(found.name))
