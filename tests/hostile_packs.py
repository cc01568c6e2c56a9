"""Packs an attacker with write access to the exports could write: crafted sections, checksums made right.

``craft(path, name)`` rewrites the pack at ``path`` (one ``PackWriter`` made, of this version) by one of
:data:`CRAFTS`: the sections are read apart, changed, laid out again as the pack writer lays them out,
and the header and both CRC-32s written anew, so a pack is refused for what it holds, never for its
checksum or its version. Unchanged, a pack read and written again is the same bytes.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path

from isal import isal_zlib

from sudokupool.pool import pack
from sudokupool.pool.gzip_member import open_member

Sections = dict[str, bytearray]


def read(path: Path) -> tuple[pack.PackHeader, Sections]:
    data = path.read_bytes()
    header = pack.read_header(data, len(data))
    return header, {name: bytearray(data[at : at + length]) for name, (at, length) in header.sections.items()}


def write(path: Path, header: pack.PackHeader, sections: Sections) -> None:
    """Lay ``sections`` out after the header as :class:`~sudokupool.pool.pack.PackWriter` does, with a
    right checksum."""
    out = bytearray(pack.HEADER_SIZE)
    places: dict[str, tuple[int, int]] = {}
    for name in pack.SECTIONS:
        out += bytes(-len(out) % pack.ALIGN) if name != "bodies" else b""
        places[name] = (len(out), len(sections[name]))
        out += sections[name]
    crc = zlib.crc32(out[pack.HEADER_SIZE :])
    out[: pack.HEADER_SIZE] = replace(header, sections=places, crc=crc).to_bytes()
    path.write_bytes(out)


def set_body(sections: Sections, index: int, member: bytes, raw_length: int, crc: int) -> None:
    """Make record ``index``'s body ``member``, recorded as inflating to ``raw_length`` bytes of CRC-32
    ``crc``; the offsets after it move."""
    offsets = memoryview(sections["offsets"]).cast("Q")
    start, end = offsets[index], offsets[index + 1]
    sections["bodies"][start:end] = member
    for i in range(index + 1, len(offsets)):
        offsets[i] += len(member) - (end - start)
    offsets.release()
    checks = memoryview(sections["checks"]).cast("I")
    checks[2 * index], checks[2 * index + 1] = crc, raw_length
    checks.release()


def full_table(header: pack.PackHeader, sections: Sections) -> None:
    """Every free slot of the id table names record 1: a lookup of an unknown id never meets a free slot."""
    table = memoryview(sections["table"]).cast("I")
    for slot in range(len(table)):
        if not table[slot]:
            table[slot] = 1
    table.release()


@cache
def bomb(size: int) -> bytes:
    """An open gzip member (as a pack holds one) of ``size`` spaces: about 1 KB per MB (ISA-L's level 1
    makes one of 1 GiB in a tenth of a second, zlib's in six)."""
    compressor = isal_zlib.compressobj(1, isal_zlib.DEFLATED, 31)
    chunk = b" " * (1 << 20)
    parts = [compressor.compress(chunk) for _ in range(size >> 20)]
    parts.append(compressor.compress(b" " * (size & ((1 << 20) - 1))))
    return b"".join(parts) + compressor.flush(isal_zlib.Z_SYNC_FLUSH)


def gib_body(header: pack.PackHeader, sections: Sections) -> None:
    """Record 0's body inflates to 1 GiB, and says so."""
    set_body(sections, 0, bomb(1 << 30), 1 << 30, 0)


def gib_body_under_a_small_length(header: pack.PackHeader, sections: Sections) -> None:
    """Record 0's body inflates to 1 GiB, but its recorded length is a record's."""
    set_body(sections, 0, bomb(1 << 30), 2000, 0)


def foreign_json(header: pack.PackHeader, sections: Sections) -> None:
    """Record 0's body is JSON of another shape (a record's body has no closing brace: the pool adds it)."""
    raw = b'{"canonical_id":"<script>alert(1)</script>"'
    set_body(sections, 0, open_member(raw), len(raw), zlib.crc32(raw))


def bad_solution(header: pack.PackHeader, sections: Sections) -> None:
    """Record 0's solution is bytes of no digit."""
    at = pack.SOLUTION_WIDTH - 83
    sections["solutions"][at : at + 81] = b"\xfe" * 81


def out_of_range_lists(header: pack.PackHeader, sections: Sections) -> None:
    """The first difficulty list names a record past the last."""
    sections["by_difficulty"][0:4] = b"\xff\xff\xff\xff"


def bad_grid(header: pack.PackHeader, sections: Sections) -> None:
    """Record 0's grid is 81 bytes 0xFF."""
    sections["puzzles"][0:81] = b"\xff" * 81


def out_of_range_choices(header: pack.PackHeader, sections: Sections) -> None:
    """The first filter list's first record number is past the last record (the lengths still add up)."""
    table = sections["technique_table"]
    techniques = pack.technique_rows(table, replace(header, sections={"technique_table": (0, len(table))}))
    at = 4 * (1 + len(techniques)) * pack.LISTS_PER_GROUP
    sections["choices"][at : at + 4] = b"\xff\xff\xff\xff"


def bad_stars(header: pack.PackHeader, sections: Sections) -> None:
    """Record 0 has 200 stars."""
    sections["stars"][0] = 200


CRAFTS: dict[str, Callable[[pack.PackHeader, Sections], None]] = {
    "full-id-table": full_table,
    "1-gib-body": gib_body,
    "1-gib-body-small-length": gib_body_under_a_small_length,
    "foreign-json": foreign_json,
    "bad-solution": bad_solution,
    "out-of-range-lists": out_of_range_lists,
    "bad-grid": bad_grid,
    "out-of-range-choices": out_of_range_choices,
    "bad-stars": bad_stars,
}


def craft(path: Path, name: str) -> None:
    """Rewrite the pack at ``path`` by the craft ``name`` (a key of :data:`CRAFTS`), checksums made right."""
    header, sections = read(path)
    CRAFTS[name](header, sections)
    write(path, header, sections)
