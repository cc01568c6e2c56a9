"""The NDJSON export format: read and validate a line, write a record, name a file.

The format is documented in ``docs/export-format.md``; this module is its one implementation.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterator
from types import NoneType
from typing import Any, Final, NamedTuple, cast

import orjson
from isal import isal_zlib

from sudokupool.sudoku import DIFFICULTIES, symmetry

DIFFICULTY_LEVEL: Final = {name: level for level, name in enumerate(DIFFICULTIES, start=1)}
#: The ten symmetry classes of a clue pattern, as ``sudoku.symmetry`` names them.
SYMMETRIES: Final = frozenset(symmetry.SYMMETRIES)

#: Crockford base32, upper case, 13 characters (see docs/export-format.md).
ID_PATTERN: Final = re.compile(r"[0-9A-HJKMNP-TV-Z]{13}")
TAG_PATTERN: Final = re.compile(r"[a-z0-9-]{1,32}")
_GRID = re.compile(r"[.1-9]{81}")
_SOLUTION = re.compile(r"[1-9]{81}")


#: The public record's fields in the order they are served: name, the JSON types it may hold (as the
#: Python types orjson gives), the same in words, and the type every item must have when it is a list.
PUBLIC_FIELDS: Final[tuple[tuple[str, tuple[type, ...], str, type | None], ...]] = (
    ("canonical_id", (str,), "a string", None),
    ("puzzle_id", (str,), "a string", None),
    ("puzzle", (str,), "a string", None),
    ("canonical", (str,), "a string", None),
    ("difficulty", (str,), "a string", None),
    ("difficulty_level", (int,), "an integer", None),
    ("clue_count", (int,), "an integer", None),
    ("symmetric", (bool,), "a boolean", None),
    ("symmetry", (str,), "a string", None),
    ("seed", (int, NoneType), "an integer or null", None),
    ("created_at", (int,), "an integer", None),
    ("tags", (list,), "an array of strings", str),
    ("score", (int, float, NoneType), "a number or null", None),
    ("tier", (str, NoneType), "a string or null", None),
    ("stars", (int, NoneType), "an integer or null", None),
    ("hardest_technique", (str, NoneType), "a string or null", None),
    ("techniques", (list,), "an array of strings", str),
    ("solve_path", (list, NoneType), "an array of objects or null", dict),
    ("source", (str,), "a string", None),
    ("volume", (str, NoneType), "a string or null", None),
    ("used_at", (int, NoneType), "an integer or null", None),
    ("synced_at", (int,), "an integer", None),
)
PUBLIC_FIELD_NAMES: Final = tuple(name for name, _, _, _ in PUBLIC_FIELDS)
#: ``public_values(record)``: the values of the public fields, in order (KeyError if one is missing).
public_values: Final = operator.itemgetter(*PUBLIC_FIELD_NAMES)
# Every accepted combination of value types, in field order (384 of them): checking the 22 types of a
# line is one set lookup. orjson gives exact built-in types (never subclasses), so type() is the test.
_TYPE_SIGNATURES: Final = frozenset(itertools.product(*(types for _, types, _, _ in PUBLIC_FIELDS)))
_ONLY_STR: Final = frozenset({str})
_ONLY_INT: Final = frozenset({int})
_ONLY_DICT: Final = frozenset({dict})

#: The fields of a ``solve_path`` step (docs/export-format.md) and the type each must have. A step holds
#: exactly these: with no room for anything else, a record's nesting is bounded (orjson cannot write a
#: value nested more than 254 deep) and every step serves as documented.
STEP_FIELDS: Final[tuple[tuple[str, type, str], ...]] = (
    ("technique", str, "a string"),
    ("score", int, "an integer"),
    ("placements", list, 'an array of {"cell": string, "digit": integer}'),
    ("eliminations", list, 'an array of {"cell": string, "digit": integer}'),
    ("cells", list, "an array of strings"),
    ("houses", list, "an array of strings"),
    ("digits", list, "an array of integers"),
    ("explanation", str, "a string"),
)
_STEP_NAMES: Final = frozenset(name for name, _, _ in STEP_FIELDS)
_ONLY_LIST: Final = frozenset({list})
_step_values: Final = operator.itemgetter(*(name for name, _, _ in STEP_FIELDS))
_step_texts: Final = operator.itemgetter(*(name for name, kind, _ in STEP_FIELDS if kind is str))
_step_score: Final = operator.itemgetter("score")
_step_lists: Final = operator.itemgetter(*(name for name, kind, _ in STEP_FIELDS if kind is list))
_step_moves: Final = operator.itemgetter("placements", "eliminations")
_step_names: Final = operator.itemgetter("cells", "houses")
_step_digits: Final = operator.itemgetter("digits")
_move_cell: Final = operator.itemgetter("cell")
_move_digit: Final = operator.itemgetter("digit")
_move_values: Final = operator.itemgetter("cell", "digit")
_EIGHT: Final = frozenset({len(STEP_FIELDS)})
_TWO: Final = frozenset({2})


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


class LineError(ValueError):
    """One export line that cannot be loaded. ``reason`` is a short stable label used in reports."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


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
    """Every row, column and box of ``solution`` (81 digits 1-9) holds nine different digits.

    Whole-grid integer arithmetic (see ``_LOW_BYTE``) rather than 27 sets: it runs for every line of
    every export loaded, and this takes about 2 us where 27 sets took 9.
    """
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


def parse_record(line: bytes | str, *, max_bytes: int | None = None) -> dict[str, Any]:
    """Parse and validate one export line; return the record (public fields in order, then ``solution``).

    Raise :class:`LineError` naming the first problem found. Unknown fields are dropped. A line longer
    than ``max_bytes`` is not parsed at all.

    Every line loaded passes here, so a good line is checked by :func:`_is_valid` (a few operations in
    C); only a line it does not pass goes through the field-by-field checks that name the problem.
    """
    if max_bytes is not None and len(line) > max_bytes:
        raise LineError("too-long", f"{len(line)} bytes, more than the {max_bytes} a record may take")
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise LineError("invalid-json", str(exc)) from None
    if type(data) is not dict:
        raise LineError("not-an-object", "a line must hold one JSON object")
    try:
        values = public_values(data)
        solution = data["solution"]
    except KeyError:
        return _checked_record(data)
    if not _is_valid(values, solution):
        return _checked_record(data)
    record = dict(zip(PUBLIC_FIELD_NAMES, values, strict=True))
    record["solution"] = solution
    return record


def _is_valid(values: tuple[Any, ...], solution: object) -> bool:
    """True when the public ``values`` and ``solution`` of a line pass every check of :func:`_checked_record`."""
    if type(solution) is not str or tuple(map(type, values)) not in _TYPE_SIGNATURES:
        return False
    (canonical_id, puzzle_id, puzzle, canonical, difficulty, level, clues, symmetric, symmetry_name,
     _, _, tags, _, _, stars, _, techniques, steps, _, _, _, _) = values  # fmt: skip
    return bool(
        _ONLY_STR.issuperset(map(type, tags))
        and _ONLY_STR.issuperset(map(type, techniques))
        and (steps is None or _valid_steps(steps))
        and _GRID.fullmatch(puzzle)
        and _SOLUTION.fullmatch(solution)
        and _valid_solution(solution)
        and _agrees(puzzle, solution)
        and _GRID.fullmatch(canonical)
        and ID_PATTERN.fullmatch(canonical_id)
        and ID_PATTERN.fullmatch(puzzle_id)
        and DIFFICULTY_LEVEL.get(difficulty) == level
        and clues == 81 - puzzle.count(".")
        and symmetry_name in SYMMETRIES
        and symmetric == (symmetry_name != "none")
        and (stars is None or 1 <= stars <= 5)
        and all(map(TAG_PATTERN.fullmatch, tags))
    )


def _valid_steps(steps: list[Any]) -> bool:
    """True when every step of a solve path has exactly the documented fields, each of its type.

    Every loop runs in C (``map`` over ``itemgetter``, ``type`` and ``len``, one pass per check), not a
    Python loop per step: a record holds some fifty steps. Even so this costs about 1.5 times what
    parsing the line does (docs/export-format.md, "Limits").
    """
    chain = itertools.chain.from_iterable
    try:
        if not (_ONLY_DICT.issuperset(map(type, steps)) and _EIGHT.issuperset(map(len, steps))):
            return False
        # Eight keys, and each of the eight names found: exactly the documented fields (else KeyError).
        for _ in map(_step_values, steps):
            pass
        if not (
            _ONLY_STR.issuperset(map(type, chain(map(_step_texts, steps))))
            and _ONLY_INT.issuperset(map(type, map(_step_score, steps)))
            and _ONLY_LIST.issuperset(map(type, chain(map(_step_lists, steps))))
        ):
            return False
        moves = list(chain(chain(map(_step_moves, steps))))
        return bool(
            _ONLY_DICT.issuperset(map(type, moves))
            and _TWO.issuperset(map(len, moves))
            and _ONLY_STR.issuperset(map(type, map(_move_cell, moves)))
            and _ONLY_INT.issuperset(map(type, map(_move_digit, moves)))
            and _ONLY_STR.issuperset(map(type, chain(chain(map(_step_names, steps)))))
            and _ONLY_INT.issuperset(map(type, chain(map(_step_digits, steps))))
        )
    except (KeyError, TypeError):
        return False


def _is_move(move: object) -> bool:
    return (
        type(move) is dict and move.keys() == {"cell", "digit"} and tuple(map(type, _move_values(move))) == (str, int)
    )


def _check_steps(steps: list[Any]) -> None:
    """Raise :class:`LineError` naming the first step of ``steps`` that is not as documented."""
    for number, step in enumerate(steps, start=1):
        where = f"solve_path step {number}"
        if type(step) is not dict:
            raise LineError("bad-step", f"{where} must be an object")
        for name, kind, words in STEP_FIELDS:
            if name not in step:
                raise LineError("bad-step", f"{where}: {name} is missing")
            if type(step[name]) is not kind:
                raise LineError("bad-step", f"{where}: {name} must be {words}")
            value: Any = step[name]
            if name in ("placements", "eliminations") and not all(map(_is_move, value)):
                raise LineError("bad-step", f"{where}: {name} must be {words}")
            if name in ("cells", "houses") and not _ONLY_STR.issuperset(map(type, value)):
                raise LineError("bad-step", f"{where}: {name} must be {words}")
            if name == "digits" and not _ONLY_INT.issuperset(map(type, value)):
                raise LineError("bad-step", f"{where}: {name} must be {words}")
        extra = sorted(step.keys() - _STEP_NAMES)
        if extra:
            raise LineError(
                "bad-step", f"{where}: unknown field {extra[0]!r} (a step holds only the documented fields)"
            )


def _checked_record(data: dict[str, Any]) -> dict[str, Any]:
    """The record of a parsed line, checked field by field: raise :class:`LineError` naming the first problem."""
    record: dict[str, Any] = {}
    for name, types, kind, item in PUBLIC_FIELDS:
        try:
            value = data[name]
        except KeyError:
            raise LineError("missing-field", f"{name} is missing") from None
        if type(value) not in types or (type(value) is list and any(type(v) is not item for v in value)):
            raise LineError("wrong-type", f"{name} must be {kind}")
        record[name] = value
    solution = data.get("solution")
    if type(solution) is not str:
        raise LineError("missing-field" if solution is None else "wrong-type", "solution must be a string")
    record["solution"] = solution
    _check_values(record)
    return record


def _check_values(record: dict[str, Any]) -> None:
    puzzle: str = record["puzzle"]
    solution: str = record["solution"]
    if not _GRID.fullmatch(puzzle):
        raise LineError("bad-puzzle", "puzzle must be 81 characters of 1-9 and '.'")
    if not _SOLUTION.fullmatch(solution):
        raise LineError("bad-solution", "solution must be 81 digits 1-9")
    if not _valid_solution(solution):
        raise LineError("bad-solution", "solution repeats a digit in a row, column or box")
    if not _agrees(puzzle, solution):
        raise LineError("solution-disagrees", "solution does not keep every given of the puzzle")
    if not _GRID.fullmatch(record["canonical"]):
        raise LineError("bad-canonical", "canonical must be 81 characters of 1-9 and '.'")
    for name in ("canonical_id", "puzzle_id"):
        if not ID_PATTERN.fullmatch(record[name]):
            raise LineError("bad-id", f"{name} must be 13 upper-case Crockford base32 characters")
    level = DIFFICULTY_LEVEL.get(record["difficulty"])
    if level is None:
        raise LineError("bad-difficulty", f"difficulty must be one of {', '.join(DIFFICULTIES)}")
    if record["difficulty_level"] != level:
        raise LineError("bad-difficulty", f"difficulty_level must be {level} for {record['difficulty']}")
    clues = 81 - puzzle.count(".")
    if record["clue_count"] != clues:
        raise LineError("bad-clue-count", f"clue_count is {record['clue_count']} but the puzzle has {clues} givens")
    if record["symmetry"] not in SYMMETRIES:
        raise LineError("bad-symmetry", f"unknown symmetry {record['symmetry']!r}")
    if record["symmetric"] != (record["symmetry"] != "none"):
        raise LineError("bad-symmetry", "symmetric must be false exactly when symmetry is none")
    stars = record["stars"]
    if stars is not None and not 1 <= stars <= 5:
        raise LineError("bad-stars", "stars must be 1 to 5")
    if not all(TAG_PATTERN.fullmatch(tag) for tag in record["tags"]):
        raise LineError("bad-tag", "tags must be lower-case [a-z0-9-], 1 to 32 characters")
    if record["solve_path"] is not None:
        _check_steps(record["solve_path"])


def record_line(record: dict[str, Any]) -> bytes:
    """One export line (with its newline) for ``record``: public fields in order, then ``solution``."""
    ordered = {name: record[name] for name in PUBLIC_FIELD_NAMES}
    ordered["solution"] = record["solution"]
    return orjson.dumps(ordered, option=orjson.OPT_APPEND_NEWLINE)


class Lines(NamedTuple):
    """Complete lines of an export, joined by newlines in ``data``; ``first`` is the first one's number.

    One ``bytes`` rather than a list of lines: cutting a chunk into lines costs no work per line until
    they are parsed. ``too_long`` numbers the lines that were dropped unread
    for their length (each stands in ``data`` as a blank line, so the numbering holds).
    """

    first: int
    data: bytes
    too_long: tuple[int, ...] = ()

    def numbered(self) -> Iterator[tuple[int, bytes]]:
        """The non-blank lines, each with its 1-based line number."""
        if self.data:
            for number, line in enumerate(self.data.split(b"\n"), self.first):
                if line.strip():
                    yield number, line

    def __bool__(self) -> bool:
        return bool(self.data or self.too_long)


#: Most inflated bytes :meth:`LineReader.pull` hands out at once. A chunk of a normal export inflates
#: to less (a 256 KiB chunk of gzip to about 1.3 MB), so it stays one piece; a gzip bomb's chunk (1,000
#: times as large inflated) comes out in pieces of this size.
BLOCK = 2 << 20


class LineReader:
    """Splits a stream of raw export bytes into numbered lines, decompressing gzip on the fly.

    :meth:`push` each chunk as it arrives, then :meth:`pull` its lines until that answers None; call
    :meth:`finish` at the end of the stream. Memory stays bounded whatever the stream holds: a chunk
    is inflated :data:`BLOCK` bytes at a time, and a line longer than ``max_line`` is dropped as it
    streams past (only counted, in :attr:`Lines.too_long`). A stream that inflates to more than
    ``max_bytes`` raises :class:`ExportError`; so does a gzip stream that ends early (in
    :meth:`finish`), and data that is not gzip although the file's name says so.

    Inflating is ISA-L's (``isal``: zlib's stream interface, twice as fast here; it was most of the
    loading process's own work on a 1M export).
    """

    def __init__(self, *, gzipped: bool, max_line: int = 1 << 20, max_bytes: int = 4 << 30) -> None:
        self._decompressor: Any = isal_zlib.decompressobj(wbits=31) if gzipped else None
        self._input = b""
        self._pending = b""
        self._skipping = False
        self._number = 0
        self._size = 0
        self.max_line = max_line
        self.max_bytes = max_bytes

    def push(self, chunk: bytes) -> None:
        """Take the next chunk of the stream; :meth:`pull` its lines before pushing another."""
        self._input = self._input + chunk if self._input else chunk

    def pull(self) -> Lines | None:
        """The next complete lines of what was pushed (possibly none, while a line is still unfinished),
        or None when all of it has been read."""
        data = self._next_block()
        if data is None:
            return None
        self._size += len(data)
        if self._size > self.max_bytes:
            raise ExportError(f"it inflates to more than {self.max_bytes} bytes (SUDOKUPOOL_MAX_EXPORT_BYTES)")
        return self._split(data)

    def finish(self) -> Lines:
        """The last line if the stream did not end with a newline; raise if the gzip stream is cut short."""
        if self._decompressor is not None and (not self._decompressor.eof or self._input):
            raise ExportError("truncated gzip stream (the file ends before the compressed data does)")
        number = self._number + 1
        pending, self._pending = self._pending, b""
        if self._skipping:
            self._skipping = False
            return Lines(number, b"", (number,))
        return Lines(number, pending)

    def _next_block(self) -> bytes | None:
        decompressor = self._decompressor
        if decompressor is None:
            data, self._input = self._input[:BLOCK], self._input[BLOCK:]
            return data or None
        while self._input:
            if decompressor.eof:
                # Concatenated gzip members are valid gzip: start a new member where one ends.
                decompressor = self._decompressor = isal_zlib.decompressobj(wbits=31)
            data = _inflate(decompressor, self._input, BLOCK)
            self._input = decompressor.unused_data if decompressor.eof else decompressor.unconsumed_tail
            if data:
                return data
        return None

    def _split(self, data: bytes) -> Lines:
        first = self._number + 1
        end = data.rfind(b"\n")
        if end < 0:
            self._carry(data)
            return Lines(first, b"")
        head_end = data.find(b"\n")
        too_long: tuple[int, ...] = ()
        if self._skipping or len(self._pending) + head_end > self.max_line:
            too_long, head = (first,), b""
        elif self._pending:
            head = self._pending + data[:head_end]
        else:
            head = b""  # the head is in place in data
        self._pending, self._skipping = b"", False
        self._number += data.count(b"\n", 0, end + 1)
        complete = b"".join((head, memoryview(data)[head_end:end])) if head or too_long else data[:end]
        self._carry(data[end + 1 :])
        return Lines(first, complete, too_long)

    def _carry(self, rest: bytes) -> None:
        """Keep ``rest`` as the start of the unfinished line, or drop it when the line is too long already."""
        if self._skipping or not rest:
            return
        if len(self._pending) + len(rest) > self.max_line:
            self._pending, self._skipping = b"", True
        else:
            self._pending += rest


# isal's stub declares ``error`` as an instance of Exception; it is the class.
_INFLATE_ERROR: Final = cast("type[Exception]", isal_zlib.error)


def _inflate(decompressor: Any, chunk: bytes, limit: int) -> bytes:
    try:
        data: bytes = decompressor.decompress(chunk, limit)
    except _INFLATE_ERROR as exc:
        raise ExportError(f"not a valid gzip stream ({exc})") from None
    return data
