"""The gzip member: how prepared bodies (in the pool and in a pack) are held compressed.

A compressed body is one complete gzip member (RFC 1952), made by ISA-L (``isal``) at
:data:`LEVEL`. It is sent as is to a client that accepts gzip and inflated per request for one that
does not. Its 8-byte trailer holds the CRC-32 and the length (mod 2**32) of the identity body, so the
member alone gives both the identity ``Content-Length`` and a validator: nothing else is stored per
record.

Level, measured on the demo pool's full records (14.0 KB median) in one process: ISA-L level 0 gives
0.219 of the identity bytes at 18-20 us a record, levels 1 and 2 0.185 at 28 us, level 3 0.181 at
75 us; zlib's level 1 is 0.189 at 200 us, level 6 0.164 at 385 us. Inflating one takes 17-19 us.
Bodies shorter than :data:`MIN_SIZE` stay raw: a solution (127 B) deflates to 119 B and the stats body
(118 B) to 110 B, not worth a request's inflate; a lean record (solve path null, 811 B) to 512 B.
"""

from __future__ import annotations

import struct
from typing import Final

from isal import isal_zlib

#: ISA-L's compression level (0-3): see the module docstring for the measurements behind it.
LEVEL: Final = 2
#: Bodies shorter than this are kept and sent raw.
MIN_SIZE: Final = 256
#: ``wbits`` for a gzip header and trailer around the deflate stream.
_GZIP_WBITS: Final = 31


def compress(body: bytes) -> bytes:
    """``body`` as one gzip member (no file name, modification time 0: the same body gives the same bytes)."""
    return isal_zlib.compress(body, LEVEL, _GZIP_WBITS)


def open_member(body: bytes) -> bytes:
    """The start of a gzip member of ``body`` that more can follow: the header and the deflate stream
    up to a sync flush, with no final block and no trailer (see :func:`close_member`).

    A pack holds records this way without their last bytes (``,"synced_at":T}``), so the pool can
    end them with the export's time. Compressing to a sync flush costs 2-3 us a record more than
    :func:`compress`, for 0.174 of the identity bytes on the demo pool (a few bytes more per record).
    """
    compressor = isal_zlib.compressobj(LEVEL, isal_zlib.DEFLATED, _GZIP_WBITS)
    return compressor.compress(body) + compressor.flush(isal_zlib.Z_SYNC_FLUSH)


def final_block(tail: bytes) -> bytes:
    """``tail`` (at most 65,535 bytes) as a final stored deflate block, to follow :func:`open_member`
    (a sync flush leaves the stream on a byte boundary, so the block starts on one)."""
    return b"\x01" + struct.pack("<HH", len(tail), len(tail) ^ 0xFFFF) + tail


#: The header of a member :func:`open_member` makes: 10 bytes, no optional fields (its flag byte, at 3, is 0).
HEADER_SIZE: Final = 10
HEADER: Final = compress(b"")[:HEADER_SIZE]


def stored_block(data: bytes, *, final: bool = False) -> bytes:
    """``data`` (at most 65,535 bytes) as a stored deflate block, to follow a sync flush or another stored
    block (both end on a byte boundary)."""
    return (b"\x01" if final else b"\x00") + struct.pack("<HH", len(data), len(data) ^ 0xFFFF) + data


def trailer(crc: int, length: int) -> bytes:
    """A gzip trailer: the CRC-32 and the length (mod 2**32) of the whole identity body."""
    return struct.pack("<II", crc, length & 0xFFFFFFFF)


def identity_length(member: bytes) -> int:
    """The length of the body ``member`` holds, read from its trailer (bodies are far below 4 GiB)."""
    return int.from_bytes(member[-4:], "little")


def inflate(member: bytes) -> bytes:
    """The body ``member`` holds; its CRC-32 and length are checked against the trailer."""
    return isal_zlib.decompress(member, _GZIP_WBITS, identity_length(member))


def trailer_tag(member: bytes) -> str:
    """The member's trailer as 16 hex digits: the identity body's CRC-32, then its length."""
    return f"{int.from_bytes(member[-8:-4], 'little'):08x}{identity_length(member):08x}"
