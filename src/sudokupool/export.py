"""The NDJSON export format: read and validate a line, write a record, name a file.

The format is documented in ``docs/export-format.md``; this module is its one implementation.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

import orjson

from sudokupool.sudoku import symmetry
from sudokupool.sudoku.grid import HOUSES

DIFFICULTIES: Final = ("Easy", "Medium", "Hard", "Expert")
DIFFICULTY_LEVEL: Final = {name: level for level, name in enumerate(DIFFICULTIES, start=1)}
#: The ten symmetry classes of a clue pattern, as ``sudoku.symmetry`` names them.
SYMMETRIES: Final = frozenset(symmetry.SYMMETRIES)

#: Crockford base32, upper case, 13 characters (see docs/export-format.md).
ID_PATTERN: Final = re.compile(r"[0-9A-HJKMNP-TV-Z]{13}")
TAG_PATTERN: Final = re.compile(r"[a-z0-9-]{1,32}")
_GRID = re.compile(r"[.1-9]{81}")
_SOLUTION = re.compile(r"[1-9]{81}")


def _is_int(value: object) -> bool:
    return type(value) is int


def _is_opt_int(value: object) -> bool:
    return value is None or type(value) is int


def _is_opt_str(value: object) -> bool:
    return value is None or type(value) is str


def _is_str(value: object) -> bool:
    return type(value) is str


def _is_bool(value: object) -> bool:
    return type(value) is bool


def _is_opt_number(value: object) -> bool:
    return value is None or type(value) in (int, float)


def _is_str_list(value: object) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _is_opt_steps(value: object) -> bool:
    return value is None or (type(value) is list and all(type(v) is dict for v in value))


#: The public record's fields in the order they are served, each with its type check.
PUBLIC_FIELDS: Final[tuple[tuple[str, Callable[[object], bool], str], ...]] = (
    ("canonical_id", _is_str, "a string"),
    ("puzzle_id", _is_str, "a string"),
    ("puzzle", _is_str, "a string"),
    ("canonical", _is_str, "a string"),
    ("difficulty", _is_str, "a string"),
    ("difficulty_level", _is_int, "an integer"),
    ("clue_count", _is_int, "an integer"),
    ("symmetric", _is_bool, "a boolean"),
    ("symmetry", _is_str, "a string"),
    ("seed", _is_opt_int, "an integer or null"),
    ("created_at", _is_int, "an integer"),
    ("tags", _is_str_list, "an array of strings"),
    ("score", _is_opt_number, "a number or null"),
    ("tier", _is_opt_str, "a string or null"),
    ("stars", _is_opt_int, "an integer or null"),
    ("hardest_technique", _is_opt_str, "a string or null"),
    ("techniques", _is_str_list, "an array of strings"),
    ("solve_path", _is_opt_steps, "an array of objects or null"),
    ("source", _is_str, "a string"),
    ("volume", _is_opt_str, "a string or null"),
    ("used_at", _is_opt_int, "an integer or null"),
    ("synced_at", _is_int, "an integer"),
)
PUBLIC_FIELD_NAMES: Final = tuple(name for name, _, _ in PUBLIC_FIELDS)


class LineError(ValueError):
    """One export line that cannot be loaded. ``reason`` is a short stable label used in reports."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class ExportError(Exception):
    """The export as a whole cannot be read (missing, unreadable, truncated gzip...)."""


_BOX_STARTS: Final = tuple(min(box) for box in HOUSES[18:])


def _valid_solution(solution: str) -> bool:
    """Every row, column and box of 81 digits 1-9 holds nine different digits.

    Slices and sets keep this in C: it runs for every line of every export loaded.
    """
    return (
        all(len(set(solution[i : i + 9])) == 9 for i in range(0, 81, 9))
        and all(len(set(solution[c::9])) == 9 for c in range(9))
        and all(
            len(set(solution[a : a + 3] + solution[a + 9 : a + 12] + solution[a + 18 : a + 21])) == 9
            for a in _BOX_STARTS
        )
    )


def parse_record(line: bytes | str) -> dict[str, Any]:
    """Parse and validate one export line; return the record (public fields in order, then ``solution``).

    Raise :class:`LineError` naming the first problem found. Unknown fields are dropped.
    """
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise LineError("invalid-json", str(exc)) from None
    if type(data) is not dict:
        raise LineError("not-an-object", "a line must hold one JSON object")
    record: dict[str, Any] = {}
    for name, check, kind in PUBLIC_FIELDS:
        try:
            value = data[name]
        except KeyError:
            raise LineError("missing-field", f"{name} is missing") from None
        if not check(value):
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
    if not all(p in (".", s) for p, s in zip(puzzle, solution, strict=True)):
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


def record_line(record: dict[str, Any]) -> bytes:
    """One export line (with its newline) for ``record``: public fields in order, then ``solution``."""
    ordered = {name: record[name] for name in PUBLIC_FIELD_NAMES}
    ordered["solution"] = record["solution"]
    return orjson.dumps(ordered, option=orjson.OPT_APPEND_NEWLINE)


def export_filename(when: datetime, *, gzip: bool = True) -> str:
    """``pool-YYYYMMDDTHHMMSSZ.ndjson.gz`` (or ``.ndjson``) for the UTC time ``when``."""
    stamp = when.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"pool-{stamp}.ndjson{'.gz' if gzip else ''}"


class LineReader:
    """Splits a stream of raw export bytes into numbered lines, decompressing gzip on the fly.

    Feed chunks as they arrive with :meth:`feed`; call :meth:`finish` at the end of the stream. Only one
    chunk's worth of data is held at a time. A gzip stream that ends early makes :meth:`finish` raise
    :class:`ExportError`; so does data that is not gzip although the file's name says so.
    """

    def __init__(self, *, gzipped: bool) -> None:
        self._decompressor: Any = zlib.decompressobj(wbits=31) if gzipped else None
        self._pending = b""
        self._number = 0

    def feed(self, chunk: bytes) -> list[tuple[int, bytes]]:
        """The complete non-blank lines that ``chunk`` finishes, with their 1-based line numbers."""
        decompressor = self._decompressor
        if decompressor is not None:
            data = _inflate(decompressor, chunk)
            # Concatenated gzip members are valid gzip: start a new member where one ends.
            while decompressor.eof and decompressor.unused_data:
                rest = decompressor.unused_data
                decompressor = self._decompressor = zlib.decompressobj(wbits=31)
                data += _inflate(decompressor, rest)
        else:
            data = chunk
        if not data:
            return []
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()
        start = self._number
        self._number += len(lines)
        return [(start + offset, line) for offset, line in enumerate(lines, start=1) if line.strip()]

    def finish(self) -> list[tuple[int, bytes]]:
        """The last line if the stream did not end with a newline; raise if the gzip stream is cut short."""
        if self._decompressor is not None and not self._decompressor.eof:
            raise ExportError("truncated gzip stream (the file ends before the compressed data does)")
        pending, self._pending = self._pending, b""
        return [(self._number + 1, pending)] if pending.strip() else []


def _inflate(decompressor: Any, chunk: bytes) -> bytes:
    try:
        data: bytes = decompressor.decompress(chunk)
    except zlib.error as exc:
        raise ExportError(f"not a valid gzip stream ({exc})") from None
    return data
