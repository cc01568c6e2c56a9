"""Content coding: Accept-Encoding (compression.py), the gzip member (gzip_member.py), and responses end to end."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from isal import isal_zlib

from sudokupool.api.compression import accepts_gzip
from sudokupool.pool.gzip_member import compress, identity_length, inflate, trailer_tag
from sudokupool.pool.pool import Pool
from tests.servers import run_server

GZIP = {"Accept-Encoding": "gzip"}
IDENTITY = {"Accept-Encoding": "identity"}


@pytest.mark.parametrize(
    ("accept_encoding", "gzip_chosen"),
    [
        pytest.param(None, False, id="missing"),
        pytest.param("", False, id="empty"),
        pytest.param("   ", False, id="blank"),
        pytest.param("gzip", True, id="gzip"),
        pytest.param("GZip", True, id="case"),
        pytest.param("gzip, deflate, br, zstd", True, id="browser"),
        pytest.param("br", False, id="only-br"),
        pytest.param("deflate, br", False, id="others-only"),
        pytest.param("x-gzip", True, id="x-gzip"),
        pytest.param("X-GZIP;Q=0.5", True, id="x-gzip-case-q"),
        pytest.param("gzip;q=0", False, id="gzip-refused"),
        pytest.param("gzip;q=0.000", False, id="gzip-refused-three-decimals"),
        pytest.param("gzip ; q=0.001", True, id="gzip-lowest-q-spaces"),
        pytest.param("gzip;q=1.000", True, id="gzip-q-one"),
        pytest.param("gzip;q=0, x-gzip", False, id="gzip-name-wins-over-alias"),
        pytest.param("*", True, id="star"),
        pytest.param("*;q=0", False, id="star-refused"),
        pytest.param("*, gzip;q=0", False, id="star-but-gzip-refused"),
        pytest.param("gzip;q=0, *", False, id="gzip-refused-then-star"),
        pytest.param("identity", False, id="identity-only"),
        pytest.param("identity;q=0", False, id="identity-refused-gzip-not-named"),
        pytest.param("identity;q=0, gzip", True, id="identity-refused"),
        pytest.param("gzip;q=0.5, identity", False, id="identity-preferred"),
        pytest.param("gzip;q=0.5, identity;q=0.5", True, id="tie-goes-to-gzip"),
        pytest.param("gzip;q=0.8, identity;q=0.5", True, id="gzip-preferred"),
        pytest.param("gzip;q=0.5, *", False, id="star-prefers-identity"),
        pytest.param("gzip, *;q=0", True, id="star-refused-gzip-named"),
        pytest.param("gzip;q=0, identity;q=0", False, id="nothing-acceptable-gives-identity"),
        pytest.param("gzip;q=abc", False, id="bad-q-ignored"),
        pytest.param("gzip;q=1.5", False, id="q-above-one-ignored"),
        pytest.param("gzip;q=abc, x-gzip", True, id="bad-element-skipped"),
        pytest.param("gzip;q=0, gzip", True, id="repeated-takes-highest"),
        pytest.param(",, gzip ,", True, id="empty-elements"),
        pytest.param("gzip;level=9", True, id="other-parameter"),
        pytest.param("gzipx, xgzip", False, id="near-names"),
    ],
)
def test_negotiation(accept_encoding: str | None, gzip_chosen: bool) -> None:
    assert accepts_gzip(accept_encoding) is gzip_chosen


def test_a_member_holds_the_body_and_its_trailer_the_length_and_crc() -> None:
    body = b'{"solve_path":[' + b'{"step":"naked single","cell":"r1c1"},' * 300 + b"null]}"
    member = compress(body)
    assert gzip.decompress(member) == body
    assert inflate(member) == body
    assert identity_length(member) == len(body)
    assert trailer_tag(member) == f"{zlib.crc32(body):08x}{len(body):08x}"
    assert compress(body) == member  # no timestamp: the same body gives the same bytes


def test_a_corrupt_member_is_refused_not_served() -> None:
    member = bytearray(compress(b"x" * 1000 + b"y" * 1000))
    member[-8] ^= 1  # the CRC-32
    with pytest.raises(isal_zlib.error, match="checksum"):
        inflate(bytes(member))


async def raw_get(
    client: httpx.AsyncClient, url: str, headers: dict[str, str] | list[tuple[str, str]], method: str = "GET"
) -> tuple[httpx.Response, bytes]:
    """The response and its body as sent, not decoded (httpx would inflate a gzip body)."""
    async with client.stream(method, url, headers=headers) as response:
        return response, b"".join([chunk async for chunk in response.aiter_raw()])


NEGOTIABLE = [
    pytest.param("/api/v2/puzzles/{id}", id="v2-by-id"),
    pytest.param("/api/v1/puzzles/{id}", id="v1-by-id"),
    pytest.param("/api/puzzles/{id}", id="unversioned-by-id"),
    pytest.param("/api/v2/puzzles/random", id="v2-random"),
    pytest.param("/api/v2/openapi.json", id="openapi"),
]


@pytest.mark.anyio
@pytest.mark.parametrize("path", NEGOTIABLE)
async def test_negotiable_responses_come_in_both_encodings_with_vary(
    client: httpx.AsyncClient, records: list[dict[str, Any]], path: str
) -> None:
    url = path.format(id=records[6]["canonical_id"])
    zipped, member = await raw_get(client, url, GZIP)
    assert zipped.status_code == 200
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["vary"] == "Accept-Encoding"
    assert zipped.headers["content-type"] == "application/json"
    assert int(zipped.headers["content-length"]) == len(member)
    plain, body = await raw_get(client, url, IDENTITY)
    assert plain.status_code == 200
    assert "content-encoding" not in plain.headers
    assert plain.headers["vary"] == "Accept-Encoding"
    assert int(plain.headers["content-length"]) == len(body)
    orjson.loads(body)
    if "random" not in path:  # random answers another record each time
        assert gzip.decompress(member) == body  # byte for byte, not only the same JSON
        assert zipped.headers.get("etag") == plain.headers.get("etag")
    if "{id}" in path:
        assert len(member) <= 0.3 * len(body)


@pytest.mark.anyio
async def test_gzip_record_is_the_pools_member_and_identity_its_body(
    client: httpx.AsyncClient, pool: Pool, records: list[dict[str, Any]]
) -> None:
    index = 9
    url = f"/api/v2/puzzles/{records[index]['canonical_id']}"
    assert (await raw_get(client, url, GZIP))[1] == pool.gzip_body(index)
    assert (await raw_get(client, url, IDENTITY))[1] == pool.body(index)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "accept_encoding",
    [
        pytest.param(None, id="missing"),
        pytest.param("", id="empty"),
        pytest.param("gzip;q=0", id="refused"),
        pytest.param("br, zstd", id="others-only"),
        pytest.param("gzip;q=0.2, identity", id="identity-preferred"),
    ],
)
async def test_clients_that_take_no_gzip_get_the_identity_body(
    client: httpx.AsyncClient, pool: Pool, records: list[dict[str, Any]], accept_encoding: str | None
) -> None:
    url = f"/api/v2/puzzles/{records[3]['canonical_id']}"
    # httpx sends its own Accept-Encoding unless told otherwise; None removes the header.
    request = client.build_request("GET", url)
    if accept_encoding is None:
        del request.headers["accept-encoding"]
    else:
        request.headers["accept-encoding"] = accept_encoding
    response = await client.send(request, stream=True)
    body = b"".join([chunk async for chunk in response.aiter_raw()])
    await response.aclose()
    assert response.status_code == 200
    assert "content-encoding" not in response.headers
    assert response.headers["vary"] == "Accept-Encoding"
    assert body == pool.body(3)


@pytest.mark.anyio
async def test_accept_encoding_lines_combine(client: httpx.AsyncClient, records: list[dict[str, Any]]) -> None:
    url = f"/api/v2/puzzles/{records[3]['canonical_id']}"
    response, _ = await raw_get(client, url, [("Accept-Encoding", "br"), ("Accept-Encoding", "gzip")])
    assert response.headers["content-encoding"] == "gzip"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("first", "second"),
    [pytest.param(GZIP, IDENTITY, id="gzip-then-identity"), pytest.param(IDENTITY, GZIP, id="identity-then-gzip")],
)
async def test_one_etag_answers_304_across_encodings(
    client: httpx.AsyncClient, records: list[dict[str, Any]], first: dict[str, str], second: dict[str, str]
) -> None:
    url = f"/api/v2/puzzles/{records[1]['canonical_id']}"
    got, _ = await raw_get(client, url, first)
    etag = got.headers["etag"]
    assert etag.startswith('W/"')
    again, body = await raw_get(client, url, {**second, "If-None-Match": etag})
    assert again.status_code == 304
    assert again.headers["etag"] == etag
    assert again.headers["vary"] == "Accept-Encoding"
    assert "content-encoding" not in again.headers
    assert body == b""


@pytest.mark.anyio
async def test_if_none_match_lines_combine(client: httpx.AsyncClient, records: list[dict[str, Any]]) -> None:
    for path in ["", "/solution", "/image"]:
        url = f"/api/v2/puzzles/{records[1]['canonical_id']}{path}"
        etag = (await client.get(url)).headers["etag"]
        again, _ = await raw_get(client, url, [("If-None-Match", '"something-else"'), ("If-None-Match", etag)])
        assert again.status_code == 304, path
        assert again.headers["etag"] == etag


@pytest.mark.anyio
@pytest.mark.parametrize("headers", [pytest.param(GZIP, id="gzip"), pytest.param(IDENTITY, id="identity")])
async def test_head_length_is_the_gets_in_the_same_encoding(
    client: httpx.AsyncClient, records: list[dict[str, Any]], headers: dict[str, str]
) -> None:
    url = f"/api/v2/puzzles/{records[2]['canonical_id']}"
    got, body = await raw_get(client, url, headers)
    head, _ = await raw_get(client, url, headers, "HEAD")
    assert head.status_code == 200
    assert head.headers["content-length"] == got.headers["content-length"] == str(len(body))
    assert head.headers.get("content-encoding") == got.headers.get("content-encoding")
    assert head.headers["vary"] == got.headers["vary"] == "Accept-Encoding"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/v2/puzzles/{id}/image", id="png"),
        pytest.param("/api/v2/puzzles/{id}/solution", id="solution"),
        pytest.param("/api/v2/stats", id="stats"),
        pytest.param("/api/v2/health", id="health"),
    ],
)
async def test_short_bodies_and_pngs_are_never_encoded(
    client: httpx.AsyncClient, records: list[dict[str, Any]], path: str
) -> None:
    response, body = await raw_get(client, path.format(id=records[0]["canonical_id"]), GZIP)
    assert response.status_code == 200
    assert "content-encoding" not in response.headers
    assert "vary" not in response.headers
    if path.endswith("image"):
        assert body.startswith(b"\x89PNG\r\n\x1a\n")
    else:
        orjson.loads(body)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/v2/puzzles/0000000000000", id="unknown-id"),
        pytest.param("/api/v2/puzzles/random?difficulty=nope", id="bad-query"),
        pytest.param("/api/v2/nothing", id="unknown-path"),
        pytest.param("/api/v2/puzzles/{id}/image?variant=sketch", id="bad-variant"),
    ],
)
async def test_errors_stay_plain_json(client: httpx.AsyncClient, records: list[dict[str, Any]], path: str) -> None:
    response, body = await raw_get(client, path.format(id=records[0]["canonical_id"]), GZIP)
    assert response.status_code in (400, 404)
    assert "content-encoding" not in response.headers
    assert set(orjson.loads(body)) == {"error"}


@pytest.mark.slow
def test_a_real_gzip_client_reads_records_from_the_real_server(
    export_dir: Path, records: list[dict[str, Any]], tmp_path: Path
) -> None:
    record = records[7]
    with run_server({"SUDOKUPOOL_EXPORTS": str(export_dir)}, tmp_path / "server.log") as server:
        url = f"{server.url}/api/v2/puzzles/{record['canonical_id']}"
        with httpx.Client() as client:  # sends Accept-Encoding: gzip and inflates
            got = client.get(url)
            head = client.head(url)
            plain = client.get(url, headers=IDENTITY)
            not_modified = client.get(url, headers={**IDENTITY, "If-None-Match": got.headers["etag"]})
    assert got.status_code == 200
    assert got.headers["content-encoding"] == "gzip"
    assert got.headers["vary"] == "Accept-Encoding"
    assert got.json()["puzzle"] == record["puzzle"]
    assert int(got.headers["content-length"]) < len(got.content)
    assert got.content == plain.content
    assert head.headers["content-length"] == got.headers["content-length"]
    assert int(plain.headers["content-length"]) == len(plain.content)
    assert not_modified.status_code == 304
