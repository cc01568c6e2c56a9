from __future__ import annotations

import gzip
import zlib

import pytest
from isal import isal_zlib

from sudokupool.compression import accepts_gzip, compress, identity_length, inflate, trailer_tag


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
