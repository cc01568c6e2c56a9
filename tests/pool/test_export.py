from __future__ import annotations

import gzip
import io
import random
import re
import tracemalloc
from datetime import UTC, datetime
from types import NoneType
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sudokupool.pool import export
from sudokupool.pool.export import (
    PUBLIC_FIELD_NAMES,
    ExportError,
    LineError,
    numbered_lines,
    parse_record,
    record_line,
)
from sudokupool.storage.naming import export_filename
from sudokupool.sudoku import grid
from tests.factories import make_records


def line(record: dict[str, Any], **changes: Any) -> bytes:
    return orjson.dumps({**record, **changes})


def test_parse_record_round_trips_record_line(records: list[dict[str, Any]]) -> None:
    record = records[0]
    parsed = msgspec.to_builtins(parse_record(record_line(record)))
    assert parsed == record
    assert list(parsed)[-1] == "solution"


def test_parse_record_drops_unknown_fields(records: list[dict[str, Any]]) -> None:
    parsed = msgspec.to_builtins(parse_record(line(records[0], extra="x")))
    assert "extra" not in parsed


def _swap_given(record: dict[str, Any]) -> dict[str, Any]:
    puzzle = record["puzzle"]
    i = next(i for i, ch in enumerate(puzzle) if ch != ".")
    wrong = "1" if puzzle[i] != "1" else "2"
    return {"puzzle": puzzle[:i] + wrong + puzzle[i + 1 :]}


def _broken_solution(record: dict[str, Any]) -> dict[str, Any]:
    solution = record["solution"]
    return {"solution": solution[1] + solution[0] + solution[2:]} if solution[0] != solution[1] else {}


@pytest.mark.parametrize(
    ("make_changes", "reason"),
    [
        pytest.param(lambda r: {"puzzle": r["puzzle"][:80]}, "bad-puzzle", id="short-puzzle"),
        pytest.param(lambda r: {"puzzle": "x" + r["puzzle"][1:]}, "bad-puzzle", id="puzzle-alphabet"),
        pytest.param(lambda r: {"solution": "1" * 81}, "bad-solution", id="invalid-sudoku"),
        pytest.param(lambda r: {"solution": r["solution"][:80] + "."}, "bad-solution", id="incomplete-solution"),
        pytest.param(_broken_solution, "bad-solution", id="swapped-cells"),
        pytest.param(_swap_given, "solution-disagrees", id="given-disagrees"),
        pytest.param(lambda r: {"difficulty": "Insane"}, "bad-difficulty", id="difficulty"),
        pytest.param(
            lambda r: {"difficulty_level": 4 if r["difficulty_level"] != 4 else 1}, "bad-difficulty", id="level"
        ),
        pytest.param(lambda r: {"clue_count": r["clue_count"] + 1}, "bad-clue-count", id="clue-count"),
        pytest.param(lambda r: {"canonical_id": "abc"}, "bad-id", id="canonical-id"),
        pytest.param(lambda r: {"puzzle_id": "0123456789ABU"}, "bad-id", id="puzzle-id-u"),
        pytest.param(lambda r: {"symmetry": "sideways"}, "bad-symmetry", id="symmetry"),
        pytest.param(lambda r: {"symmetric": r["symmetry"] == "none"}, "bad-symmetry", id="symmetric-flag"),
        pytest.param(lambda r: {"stars": 9}, "bad-stars", id="stars"),
        pytest.param(lambda r: {"tags": ["Has Space"]}, "bad-tag", id="tag"),
        pytest.param(lambda r: {"created_at": "yesterday"}, "wrong-type", id="created-at-type"),
        pytest.param(lambda r: {"clue_count": True}, "wrong-type", id="bool-is-not-int"),
        pytest.param(lambda r: {"solve_path": "steps"}, "wrong-type", id="solve-path-type"),
    ],
)
def test_parse_record_rejects(records: list[dict[str, Any]], make_changes: Any, reason: str) -> None:
    with pytest.raises(LineError) as info:
        parse_record(line(records[0], **make_changes(records[0])))
    assert info.value.reason == reason


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        pytest.param(b"{not json", "invalid-json", id="invalid-json"),
        pytest.param(b"[1, 2]", "not-an-object", id="array"),
        pytest.param(b'{"canonical_id": "X"}', "missing-field", id="missing-field"),
    ],
)
def test_parse_record_rejects_malformed(raw: bytes, reason: str) -> None:
    with pytest.raises(LineError) as info:
        parse_record(raw)
    assert info.value.reason == reason


def test_missing_solution_is_reported(records: list[dict[str, Any]]) -> None:
    record = dict(records[0])
    del record["solution"]
    with pytest.raises(LineError) as info:
        parse_record(orjson.dumps(record))
    assert info.value.reason == "missing-field"


def read(data: bytes, *, gzipped: bool = False, **bounds: int) -> list[tuple[int, bytes | None]]:
    raw = io.BytesIO(gzip.compress(data) if gzipped else data)
    return list(numbered_lines(raw, gzipped=gzipped, **bounds))


@pytest.mark.parametrize("gzipped", [False, True])
def test_numbered_lines_counts_blank_lines_and_keeps_a_last_line_without_newline(gzipped: bool) -> None:
    data = b'{"a":1}\n\n  \n{"b":2}\r\n{"c":3}'
    assert read(data, gzipped=gzipped) == [(1, b'{"a":1}'), (4, b'{"b":2}\r'), (5, b'{"c":3}')]


@pytest.mark.parametrize("gzipped", [False, True])
def test_numbered_lines_reads_lines_across_buffer_boundaries(gzipped: bool) -> None:
    # Lines of every length up to 40 KB, 4 MB in all: many lines straddle a read buffer's end.
    rng = random.Random(3)
    lines = [bytes([97 + n % 26]) * rng.randrange(1, 40_000) for n in range(200)]
    assert read(b"\n".join(lines) + b"\n", gzipped=gzipped) == list(enumerate(lines, 1))


def test_numbered_lines_reads_concatenated_gzip_members() -> None:
    raw = io.BytesIO(gzip.compress(b"one\n") + gzip.compress(b"two\n"))
    assert list(numbered_lines(raw, gzipped=True)) == [(1, b"one"), (2, b"two")]


def test_numbered_lines_refuses_truncated_gzip() -> None:
    data = gzip.compress(b"".join(b'{"n":%d}\n' % i for i in range(1000)))
    with pytest.raises(ExportError, match="truncated"):
        list(numbered_lines(io.BytesIO(data[: len(data) // 2]), gzipped=True))


def test_numbered_lines_refuses_data_that_is_not_gzip() -> None:
    with pytest.raises(ExportError, match="gzip"):
        list(numbered_lines(io.BytesIO(b'{"plain": "json"}\n'), gzipped=True))


def test_a_gzip_bomb_is_read_past_without_being_held() -> None:
    # 64 MiB of one byte compresses to about 64 KB: the line is too long, and never held whole.
    raw = io.BytesIO(gzip.compress(b"x" * (64 << 20), compresslevel=9))
    tracemalloc.start()
    try:
        assert list(numbered_lines(raw, gzipped=True, max_line=1000)) == [(1, None)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_line_past_the_bound_is_read_past_and_numbered(gzipped: bool) -> None:
    data = b"short\n" + b"y" * 5000 + b"\nafter\n" + b"z" * 40 + b"\n" + b"w" * 3000
    assert read(data, gzipped=gzipped, max_line=1000) == [
        (1, b"short"),
        (2, None),
        (3, b"after"),
        (4, b"z" * 40),
        (5, None),
    ]


def test_the_bound_on_a_line_is_its_length_without_the_newline() -> None:
    data = b"a" * 1000 + b"\n" + b"b" * 1001 + b"\n" + b"c" * 1000
    assert read(data, max_line=1000) == [(1, b"a" * 1000), (2, None), (3, b"c" * 1000)]


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("data", [pytest.param(b"line\n" * 1000, id="lines"), pytest.param(b"x" * 5000, id="one-line")])
def test_an_export_inflating_past_the_bound_is_refused(gzipped: bool, data: bytes) -> None:
    with pytest.raises(ExportError, match="inflates to more than 4000 bytes"):
        read(data, gzipped=gzipped, max_line=1000, max_bytes=4000)


def test_export_filename_is_utc_and_sortable() -> None:
    when = datetime(2026, 11, 22, 18, 5, 9, tzinfo=UTC)
    assert export_filename(when) == "pool-20261122T180509Z.ndjson.gz"
    assert export_filename(when, gzip=False) == "pool-20261122T180509Z.ndjson"


# The loader checks the houses of a solution and the givens with whole-grid arithmetic, and the fields'
# types and spelling with msgspec: these properties hold them to the plain definitions.

_DIGITS = "123456789"
_RECORDS = make_records(3)
_SOLUTIONS = [record["solution"] for record in _RECORDS]


@st.composite
def _mutated_solutions(draw: st.DrawFn) -> str:
    """A valid solution with a few cells swapped or overwritten (sometimes none: still valid), or with
    two whole rows or columns swapped (rows and columns stay valid; boxes break across bands)."""
    cells = list(draw(st.sampled_from(_SOLUTIONS)))
    if draw(st.booleans()):
        a, b = draw(st.integers(0, 8)), draw(st.integers(0, 8))
        if draw(st.booleans()):
            cells[9 * a : 9 * a + 9], cells[9 * b : 9 * b + 9] = cells[9 * b : 9 * b + 9], cells[9 * a : 9 * a + 9]
        else:
            cells[a::9], cells[b::9] = cells[b::9], cells[a::9]
        return "".join(cells)
    for _ in range(draw(st.integers(0, 3))):
        a, b = draw(st.integers(0, 80)), draw(st.integers(0, 80))
        if draw(st.booleans()):
            cells[a], cells[b] = cells[b], cells[a]
        else:
            cells[a] = draw(st.sampled_from(_DIGITS))
    return "".join(cells)


@given(st.one_of(_mutated_solutions(), st.text(_DIGITS, min_size=81, max_size=81)))
@settings(max_examples=500)
def test_valid_solution_is_nine_different_digits_in_every_house(solution: str) -> None:
    assert export._valid_solution(solution) == grid.is_complete_solution(solution)


@given(st.sampled_from(_SOLUTIONS), st.text("." + _DIGITS + "=" * 8, min_size=81, max_size=81))
@settings(max_examples=300)
def test_agrees_is_every_given_kept(solution: str, cells: str) -> None:
    # "=" takes the solution's digit, so most givens agree and a disagreement is often a single cell.
    puzzle = "".join(solution[i] if cell == "=" else cell for i, cell in enumerate(cells))
    assert export._agrees(puzzle, solution) == grid.agrees(puzzle, solution)


_ODD_VALUES = [None, True, False, 0, 1, 4, 5, 6, -1, 2.5, "", "x", "Easy", "none", "rotational-180", [], ["x"],
               ["Has Space"], [1], [{}], {}, "1" * 81, "." * 81, "1" * 80 + "\n"]  # fmt: skip

_ID, _GRID, _TAG = re.compile(r"[0-9A-HJKMNP-TV-Z]{13}"), re.compile(r"[.1-9]{81}"), re.compile(r"[a-z0-9-]{1,32}")
_INT, _TEXT, _NUMBER = (int,), (str,), (int, float)
#: Each field's JSON types (as orjson gives them; a bool is not an integer) and, for a string, its spelling.
_PLAIN: dict[str, tuple[tuple[type, ...], Any]] = {
    "canonical_id": (_TEXT, _ID.fullmatch),
    "puzzle_id": (_TEXT, _ID.fullmatch),
    "puzzle": (_TEXT, _GRID.fullmatch),
    "canonical": (_TEXT, _GRID.fullmatch),
    "difficulty": (_TEXT, None),
    "difficulty_level": (_INT, None),
    "clue_count": (_INT, None),
    "symmetric": ((bool,), None),
    "symmetry": (_TEXT, None),
    "seed": ((int, NoneType), None),
    "created_at": (_INT, None),
    "tags": ((list,), lambda tags: all(type(t) is str and _TAG.fullmatch(t) for t in tags)),
    "score": ((*_NUMBER, NoneType), None),
    "tier": ((str, NoneType), None),
    "stars": ((int, NoneType), lambda stars: stars is None or 1 <= stars <= 5),
    "hardest_technique": ((str, NoneType), None),
    "techniques": ((list,), lambda names: all(type(n) is str for n in names)),
    "solve_path": ((list, NoneType), lambda steps: steps is None or all(map(_plain_step, steps))),
    "source": (_TEXT, None),
    "volume": ((str, NoneType), None),
    "used_at": ((int, NoneType), None),
    "synced_at": (_INT, None),
    "solution": (_TEXT, lambda solution: re.fullmatch(r"[1-9]{81}", solution)),
}


def _plain_step(step: Any) -> bool:
    def moves(items: Any) -> bool:
        return type(items) is list and all(
            type(m) is dict and m.keys() == {"cell", "digit"} and type(m["cell"]) is str and type(m["digit"]) is int
            for m in items
        )

    def of(kind: type, items: Any) -> bool:
        return type(items) is list and all(type(item) is kind for item in items)

    return (
        type(step) is dict
        and step.keys()
        == {"technique", "score", "placements", "eliminations", "cells", "houses", "digits", "explanation"}
        and type(step["technique"]) is str
        and type(step["explanation"]) is str
        and type(step["score"]) is int
        and moves(step["placements"])
        and moves(step["eliminations"])
        and of(str, step["cells"])
        and of(str, step["houses"])
        and of(int, step["digits"])
    )


def _plainly_valid(record: dict[str, Any]) -> bool:
    """The export format's rules (docs/export-format.md), written plainly."""
    for name, (types, spelling) in _PLAIN.items():
        if name not in record or type(record[name]) not in types or (spelling and not spelling(record[name])):
            return False
    puzzle, solution = record["puzzle"], record["solution"]
    return (
        grid.is_complete_solution(solution)
        and grid.agrees(puzzle, solution)
        and export.DIFFICULTY_LEVEL.get(record["difficulty"]) == record["difficulty_level"]
        and record["clue_count"] == 81 - puzzle.count(".")
        and record["symmetry"] in export.SYMMETRIES
        and record["symmetric"] == (record["symmetry"] != "none")
    )


_STEP_VALUES = [None, 1, "x", True, [], ["x"], [1], [{"cell": "r1c1", "digit": 1}], [{"cell": "r1c1"}], {}]


@given(st.data())
@settings(max_examples=500)
def test_parse_record_accepts_exactly_what_the_format_allows(data: st.DataObject) -> None:
    record = dict(data.draw(st.sampled_from(_RECORDS)))
    for name in data.draw(st.lists(st.sampled_from([*PUBLIC_FIELD_NAMES, "solution"]), max_size=2)):
        record[name] = data.draw(st.sampled_from(_ODD_VALUES))
    if data.draw(st.booleans()):
        record["solution"] = data.draw(_mutated_solutions())
    original = record["solve_path"] in (r["solve_path"] for r in _RECORDS)
    if original and record["solve_path"] and data.draw(st.booleans()):
        steps = [dict(step) for step in record["solve_path"]]
        step = data.draw(st.sampled_from(steps))
        step[data.draw(st.sampled_from([*step, "extra"]))] = data.draw(st.sampled_from(_STEP_VALUES))
        record["solve_path"] = steps
    try:
        parsed: dict[str, Any] | None = msgspec.to_builtins(parse_record(orjson.dumps(record)))
    except LineError:
        parsed = None
    assert (parsed is not None) == _plainly_valid(record)
    if parsed is not None:
        assert parsed == {name: record[name] for name in (*PUBLIC_FIELD_NAMES, "solution")}
