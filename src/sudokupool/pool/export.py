"""The NDJSON export format: read and validate a line, write a record, name a file.

The format is documented in ``docs/export-format.md``; this module is its one implementation.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Iterator
from typing import IO, Annotated, Any, Final, cast

import msgspec
import orjson
from isal import igzip, isal_zlib

from sudokupool.sudoku import DIFFICULTIES, symmetry

DIFFICULTY_LEVEL: Final = {name: level for level, name in enumerate(DIFFICULTIES, start=1)}
#: The ten symmetry classes of a clue pattern, as ``sudoku.symmetry`` names them.
SYMMETRIES: Final = frozenset(symmetry.SYMMETRIES)


class _Move(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    cell: str
    digit: int


class _Step(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A ``solve_path`` step holds exactly the documented fields (docs/export-format.md), each of its type:
    with no room for anything else, a record's nesting is bounded (orjson cannot write a value nested more
    than 254 deep) and every step serves as documented."""

    technique: str
    score: int
    placements: list[_Move]
    eliminations: list[_Move]
    cells: list[str]
    houses: list[str]
    digits: list[int]
    explanation: str


# Strings spelt as documented. msgspec searches for a pattern, so each is anchored: ``\Z`` rather than
# ``$``, which would take a final newline.
_Id = Annotated[str, msgspec.Meta(pattern=r"^[0-9A-HJKMNP-TV-Z]{13}\Z")]  # Crockford base32, upper case
_Grid = Annotated[str, msgspec.Meta(pattern=r"^[.1-9]{81}\Z")]
_TAG: Final = re.compile(r"[a-z0-9-]{1,32}")
_Tag = Annotated[str, msgspec.Meta(pattern=rf"^{_TAG.pattern}\Z")]
#: The spelling of a tag, in words.
TAG_RULE: Final = "lower-case [a-z0-9-], 1 to 32 characters"
_Solution = Annotated[str, msgspec.Meta(pattern=r"^[1-9]{81}\Z")]


class Record(msgspec.Struct, gc=False):
    """An export line as the loader keeps it: its fields in the order they are served, then ``solution``,
    each of its JSON type and spelling (:func:`parse_record` makes one). Unknown fields are dropped.

    Untracked by the garbage collector (as :class:`_Step`, :class:`_Move`): a full record's fifty steps
    otherwise set off collections that cost a load beside the service's modules about 10 %
    (``sudokupool pack`` on 10k full records: 3.16 s of CPU, 2.82 s without)."""

    canonical_id: _Id
    puzzle_id: _Id
    puzzle: _Grid
    canonical: _Grid
    difficulty: str
    difficulty_level: int
    clue_count: int
    symmetric: bool
    symmetry: str
    seed: int | None
    created_at: int
    tags: list[_Tag]
    score: int | float | None  # an integer stays one when served
    tier: str | None
    stars: Annotated[int, msgspec.Meta(ge=1, le=5)] | None
    hardest_technique: str | None
    techniques: list[str]
    solve_path: list[_Step] | None
    source: str
    volume: str | None
    used_at: int | None
    synced_at: int
    solution: _Solution


#: The public record's fields in the order they are served.
PUBLIC_FIELD_NAMES: Final = Record.__struct_fields__[:-1]
_decode: Final = msgspec.json.Decoder(Record).decode
#: A field of the right type but not of its documented spelling: the reason, and the message.
_SPELLING: Final = {
    "canonical_id": ("bad-id", "canonical_id must be 13 upper-case Crockford base32 characters"),
    "puzzle_id": ("bad-id", "puzzle_id must be 13 upper-case Crockford base32 characters"),
    "puzzle": ("bad-puzzle", "puzzle must be 81 characters of 1-9 and '.'"),
    "canonical": ("bad-canonical", "canonical must be 81 characters of 1-9 and '.'"),
    "tags": ("bad-tag", f"tags must be {TAG_RULE}"),
    "stars": ("bad-stars", "stars must be 1 to 5"),
    "solution": ("bad-solution", "solution must be 81 digits 1-9"),
}


def _shortest_record() -> int:
    """The length of the shortest line that can hold a valid record (every field at its shortest)."""
    shortest: dict[str, Any] = dict.fromkeys(PUBLIC_FIELD_NAMES)
    shortest.update(canonical_id="0" * 13, puzzle_id="0" * 13, puzzle="." * 81, canonical="." * 81)
    shortest.update(difficulty="Easy", difficulty_level=1, clue_count=0, symmetric=False, symmetry="none")
    shortest.update(created_at=0, tags=[], techniques=[], source="", synced_at=0, solution="1" * 81)
    return len(orjson.dumps(shortest))


#: No line shorter than this holds a record (every field must be there): counting an export's lines
#: against ``SUDOKUPOOL_MAX_BAD_LINES`` can stop early with this (see the loader).
MIN_RECORD_BYTES: Final = _shortest_record()


def is_tag(text: str) -> bool:
    """True when ``text`` is spelt as a record's tag must be (:data:`TAG_RULE`)."""
    return _TAG.fullmatch(text) is not None


class LineError(ValueError):
    """One export line that cannot be loaded. ``reason`` is a short stable label used in reports."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


class ExportError(Exception):
    """The export as a whole cannot be read (missing, unreadable, truncated gzip...)."""


# A grid as one integer with a 16-bit field per cell, cell 0 lowest, digit d as the field value
# 1 << (d - 1). Nine such values sum to 511 (nine one bits) exactly when they are nine different
# digits: a sum of nine powers of two has at least as many terms as one bits, with equality only when
# no power repeats. So a house is valid when the sum of its nine fields is 511, and shifted adds sum
# all 27 houses at once (no field ever exceeds 9 * 256, so no sum carries into its neighbour).
# The fields are built as bytes: the low byte of digits 1-8, the high byte of 9.
_LOW_BYTE: Final = bytes.maketrans(b"123456789", bytes([1, 2, 4, 8, 16, 32, 64, 128, 0]))
_HIGH_BYTE: Final = bytes.maketrans(b"123456789", bytes([0, 0, 0, 0, 0, 0, 0, 0, 1]))


def _fields(cells: range | list[int], value: int) -> int:
    return sum(value << (16 * cell) for cell in cells)


_ROW_STARTS: Final = range(0, 81, 9)
_BOX_STARTS: Final = [27 * band + 3 * stack for band in range(3) for stack in range(3)]
_ROWS_MASK, _ROWS_FULL = _fields(_ROW_STARTS, 0xFFFF), _fields(_ROW_STARTS, 511)
_COLUMNS_MASK, _COLUMNS_FULL = _fields(range(9), 0xFFFF), _fields(range(9), 511)
_BOXES_MASK, _BOXES_FULL = _fields(_BOX_STARTS, 0xFFFF), _fields(_BOX_STARTS, 511)
#: Bytes of a grid translated to 0xFF for a given and 0x00 for an empty cell.
_GIVENS: Final = bytes.maketrans(b".123456789", b"\x00" + b"\xff" * 9)


def _valid_solution(solution: str) -> bool:
    """Every row, column and box of ``solution`` (81 digits 1-9) holds nine different digits. Whole-grid
    integer arithmetic (see ``_LOW_BYTE``) rather than 27 sets: it runs for every line of every export
    loaded, and this takes about 2 us where 27 sets took 9."""
    digits = solution.encode()
    cells = bytearray(162)
    cells[0::2] = digits.translate(_LOW_BYTE)
    cells[1::2] = digits.translate(_HIGH_BYTE)
    x = int.from_bytes(cells, "little")
    # Field i of each sum: cells i..i+8 (rows), i, i+9, .., i+72 (columns), the 3x3 box from i (boxes).
    rows = x + (x >> 16)
    rows += rows >> 32
    rows += (rows >> 64) + (x >> 128)
    if rows & _ROWS_MASK != _ROWS_FULL:
        return False
    columns = x + (x >> 144)
    columns += columns >> 288
    columns += (columns >> 576) + (x >> 1152)
    if columns & _COLUMNS_MASK != _COLUMNS_FULL:
        return False
    triples = x + (x >> 16) + (x >> 32)
    return (triples + (triples >> 144) + (triples >> 288)) & _BOXES_MASK == _BOXES_FULL


def _agrees(puzzle: str, solution: str) -> bool:
    """Every given of ``puzzle`` (81 of ``.1-9``) holds the same digit in ``solution`` (81 of ``1-9``)."""
    given = puzzle.encode()
    return (int.from_bytes(given) ^ int.from_bytes(solution.encode())) & int.from_bytes(given.translate(_GIVENS)) == 0


def parse_record(line: bytes | str) -> Record:
    """Parse and validate one export line into a :class:`Record`; raise :class:`LineError` naming the first
    problem found. msgspec checks the types and spelling of the fields, every ``solve_path`` step
    included, in one pass in C; the checks between fields follow."""
    try:
        record = _decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise _decode_error(line, exc) from None
    _check_values(record)
    return record


def _decode_error(line: bytes | str, exc: Exception) -> LineError:
    """The :class:`LineError` for a line msgspec refused with ``exc``. Bad lines are parsed again by orjson,
    so that they are named as ever: not JSON (with orjson's line and column), not an object, a field
    missing (the first in order), then a field of the wrong type or spelling (from msgspec's message,
    e.g. ``Expected `int`, got `str` - at `$.seed```)."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as invalid:
        return LineError("invalid-json", str(invalid))
    if type(data) is not dict:
        return LineError("not-an-object", "a line must hold one JSON object")
    for name in Record.__struct_fields__:
        if name not in data:
            return LineError("missing-field", f"{name} is missing")
    if not isinstance(exc, msgspec.ValidationError):
        return LineError("invalid-json", str(exc))
    problem, _, where = str(exc).partition(" - at `$")
    name, _, inner = where.rstrip("`").lstrip(".").partition("[")
    if name == "solve_path" and inner:
        number, _, place = inner.partition("]")
        at = f" {place.lstrip('.')}" if place else ""
        return LineError("bad-step", f"solve_path step {int(number) + 1}{at}: {problem}")
    if ", got `" in problem or name not in _SPELLING:
        return LineError("wrong-type", f"{name}: {problem}")
    return LineError(*_SPELLING[name])


def _check_values(record: Record) -> None:
    """Raise :class:`LineError` naming the first check between fields that ``record`` does not pass (its
    fields are of the right types and spelling)."""
    puzzle, solution = record.puzzle, record.solution
    if not _valid_solution(solution):
        raise LineError("bad-solution", "solution repeats a digit in a row, column or box")
    if not _agrees(puzzle, solution):
        raise LineError("solution-disagrees", "solution does not keep every given of the puzzle")
    level = DIFFICULTY_LEVEL.get(record.difficulty)
    if level is None:
        raise LineError("bad-difficulty", f"difficulty must be one of {', '.join(DIFFICULTIES)}")
    if record.difficulty_level != level:
        raise LineError("bad-difficulty", f"difficulty_level must be {level} for {record.difficulty}")
    clues = 81 - puzzle.count(".")
    if record.clue_count != clues:
        raise LineError("bad-clue-count", f"clue_count is {record.clue_count} but the puzzle has {clues} givens")
    if record.symmetry not in SYMMETRIES:
        raise LineError("bad-symmetry", f"unknown symmetry {record.symmetry!r}")
    if record.symmetric != (record.symmetry != "none"):
        raise LineError("bad-symmetry", "symmetric must be false exactly when symmetry is none")


def record_line(record: dict[str, Any]) -> bytes:
    """One export line (with its newline) for ``record``: public fields in order, then ``solution``."""
    ordered = {name: record[name] for name in PUBLIC_FIELD_NAMES}
    ordered["solution"] = record["solution"]
    return orjson.dumps(ordered, option=orjson.OPT_APPEND_NEWLINE)


# isal's stub declares ``error`` as an instance of Exception; it is the class.
_INFLATE_ERROR: Final = cast("type[Exception]", isal_zlib.error)


def numbered_lines(
    raw: IO[bytes], *, gzipped: bool, max_line: int = 1 << 20, max_bytes: int = 4 << 30
) -> Iterator[tuple[int, bytes | None]]:
    """The non-blank lines of the export file ``raw``, without their newline, each with its number from 1
    (blank lines are counted too); None in place of a line longer than ``max_line`` bytes.

    Memory stays bounded whatever the file holds: a line is read at most ``max_line + 1`` bytes at a
    time, so a longer one is read past and never held whole. gzip is inflated on the way (ISA-L's
    ``igzip``, twice zlib's speed here; concatenated members are one stream). Raise :class:`ExportError`
    when the lines add up to more than ``max_bytes`` (a gzip bomb), when a gzip stream ends early, and
    when the data is not gzip although the file's name says so.
    """
    inflated = igzip.IGzipFile(fileobj=raw) if gzipped else raw  # type: ignore[no-untyped-call]  # not annotated
    # readline scans a buffer for the newline: one of 1 MiB, where a GzipFile's own holds 8 KiB (refilled
    # by a call for each, which took half the time of reading past a long line). It reads by readinto.
    stream = io.BufferedReader(cast("io.RawIOBase", inflated), buffer_size=1 << 20)
    left = max_bytes
    try:
        for number in itertools.count(1):
            line: bytes | None = stream.readline(max_line + 1)
            if not line:
                return
            left -= len(line)
            if len(line) > max_line and not line.endswith(b"\n"):
                while left >= 0 and not line.endswith(b"\n") and (line := stream.readline(max_line + 1)):
                    left -= len(line)
                line = None
            if left < 0:
                raise ExportError(f"it inflates to more than {max_bytes} bytes (SUDOKUPOOL_MAX_EXPORT_BYTES)")
            if line is None:
                yield number, None
            elif not line.isspace():
                yield number, line.removesuffix(b"\n")
    except EOFError:
        raise ExportError("truncated gzip stream (the file ends before the compressed data does)") from None
    except (igzip.BadGzipFile, _INFLATE_ERROR) as exc:
        raise ExportError(f"not a valid gzip stream ({exc})") from None
