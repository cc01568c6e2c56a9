from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from sudokupool.sudoku.canonical import canonical_transform
from sudokupool.sudoku.grid import is_complete_solution
from sudokupool.sudoku.relayout import _PIECES, _TOKEN_NUMBER, between, from_transform, prepare_path
from sudokupool.sudoku.replay import replay
from sudokupool.sudoku.transform import Transform, random_transform
from tests.helpers import demo_records

# Transpose, swap rows 1 and 2 of that grid, swap digits 1 and 2: r4c7 -> r7c4, r1c2 -> r1c1, r1c1 -> r2c1.
MOVE = from_transform(Transform(True, (1, 0, 2, 3, 4, 5, 6, 7, 8), tuple(range(9)), (2, 1, 3, 4, 5, 6, 7, 8, 9)))


@pytest.fixture(scope="module")
def demo() -> list[dict[str, Any]]:
    return demo_records()


def test_a_demo_record_moved_to_any_layout_replays_there(demo: list[dict[str, Any]]) -> None:
    rng = random.Random(43)
    techniques: set[str] = set()
    for record in demo[::6]:
        asked = random_transform(rng).apply(record["puzzle"])
        _, there = canonical_transform(record["puzzle"])
        _, here = canonical_transform(asked)
        move = between(there, here)
        assert move.grid(record["puzzle"]) == asked
        solution = move.grid(record["solution"])
        assert is_complete_solution(solution)
        path = move.path(record["solve_path"])
        assert replay(asked, solution, path) == []
        assert move.inverse().path(path) == record["solve_path"]
        # The path's explanations, moved as one text, read as each step's moved on its own.
        assert path == [move.step(step) for step in record["solve_path"]]
        techniques.update(step["technique"] for step in path)
    assert len(techniques) >= 30  # the sample covers most of the grader's techniques


def test_relayout_agrees_with_the_transform() -> None:
    move = Transform(True, (2, 0, 1, 6, 7, 8, 3, 4, 5), (8, 7, 6, 0, 2, 1, 4, 3, 5), (9, 1, 2, 3, 4, 5, 6, 7, 8))
    grid = "".join(random.Random(1).choice(".123456789") for _ in range(81))
    assert from_transform(move).grid(grid) == move.apply(grid)
    assert from_transform(move).inverse().grid(move.apply(grid)) == grid


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "The row, column and box of r4c7 already hold every digit except 1, so r4c7 = 1.",
            "The row, column and box of r7c4 already hold every digit except 2, so r7c4 = 2.",
            id="naked-single",
        ),
        pytest.param(
            "Column 7 has only r9c7 left empty and misses only 7, so r9c7 = 7.",
            "Row 7 has only r7c9 left empty and misses only 7, so r7c9 = 7.",
            id="capitalised-house",
        ),
        pytest.param(
            "In rows 1 and 5, 1 fits only in columns 3 and 4, so those columns need their 1 from these rows: "
            "remove 1 from r2c3.",
            "In columns 1 and 5, 2 fits only in rows 3 and 4, so those rows need their 2 from these columns: "
            "remove 2 from r3c2.",
            id="fish-lines",
        ),
        pytest.param(
            "Where row 1 crosses box 1, r1c1 and r1c2 hold 4/6/7/8; with r1c7 (4/7) in the row and r2c3 and "
            "r3c3 (6/8/9) in the box, 5 cells hold 5 digits and none can repeat, so each is there once: "
            "remove 7 from r1c8; 8 from r3c1.",
            "Where column 1 crosses box 1, r2c1 and r1c1 hold 4/6/7/8; with r7c1 (4/7) in the column and r3c2 and "
            "r3c3 (6/8/9) in the box, 5 cells hold 5 digits and none can repeat, so each is there once: "
            "remove 7 from r8c1; 8 from r2c3.",
            id="sue-de-coq-counts",
        ),
        pytest.param(
            "The loop 7r2c3=7r2c9-8r4c9 closes on itself: remove 1 from r2c3.",
            "The loop 7r3c2=7r9c2-8r9c4 closes on itself: remove 2 from r3c2.",
            id="loop-digits-glued-to-cells",
        ),
    ],
)
def test_explanations_name_the_moved_cells_houses_and_digits(text: str, expected: str) -> None:
    assert MOVE.text(text) == expected
    assert MOVE.inverse().text(expected) == text


def test_a_step_moves_every_field() -> None:
    step = {
        "technique": "Hidden Single",
        "score": 14,
        "placements": [{"cell": "r1c2", "digit": 1}],
        "eliminations": [{"cell": "r2c5", "digit": 3}, {"cell": "r1c3", "digit": 2}],
        "cells": ["r1c2"],
        "houses": ["row 1", "box 2"],
        "digits": [1],
        "explanation": "In row 1, 1 fits only in r1c2, so r1c2 = 1.",
    }
    assert MOVE.step(step) == {
        "technique": "Hidden Single",
        "score": 14,
        "placements": [{"cell": "r1c1", "digit": 2}],
        "eliminations": [{"cell": "r3c1", "digit": 1}, {"cell": "r5c2", "digit": 3}],
        "cells": ["r1c1"],
        "houses": ["column 1", "box 4"],
        "digits": [2],
        "explanation": "In column 1, 2 fits only in r1c1, so r1c1 = 2.",
    }


def test_a_path_as_json_moves_as_the_path_does(demo: list[dict[str, Any]]) -> None:
    rng = random.Random(44)
    singles = 0
    for record in demo[::30]:
        move = from_transform(random_transform(rng))
        path = record["solve_path"]
        text = orjson.dumps(path).decode()[1:-1]
        expected = orjson.dumps(move.path(path)).decode()[1:-1]
        assert move.path_json(text) == expected
        assert move.names().path_json(text) == expected
        singles += sum(step["technique"] in ("Naked Single", "Full House", "Hidden Single") for step in path)
    assert singles > 1000
    assert MOVE.path_json("") == MOVE.names().path_json("") == ""


def test_a_prepared_path_moves_as_the_path_as_json_does(demo: list[dict[str, Any]]) -> None:
    rng = random.Random(47)
    seen = {"transposed": 0, "lines": 0, "counts": 0, "eliminations": 0}
    for record in demo[::10]:
        text = orjson.dumps(record["solve_path"]).decode()[1:-1]
        prepared = prepare_path(text)
        assert prepared is not None
        for _ in range(3):
            move = from_transform(random_transform(rng))
            assert move.prepared_path(prepared) == move.path_json(text)
            seen["transposed"] += move.transposes
        # What the sample holds that a prepared path moves otherwise than by a lookup.
        seen["eliminations"] += len(prepared.eliminations)
        seen["lines"] += len(prepared.lines)
        pieces = [p for step in record["solve_path"] for p in _PIECES.split(step["explanation"])[1::2]]
        seen["counts"] += sum(p not in _TOKEN_NUMBER and not p.startswith(("rows ", "columns ")) for p in pieces)
    assert min(seen.values()) > 10, seen


#: Changes to a demo path as the pack writes it, each to a text the pack never writes.
CHANGES = {
    "a-single-of-another-score": ('"score":4,', '"score":5,'),
    "a-score-orjson-writes-otherwise": ('"score":4,', '"score":-0,'),
    "a-space-between-steps": ("},{", "} ,{"),
    "an-escape": (" can only go in ", ' can \\"only\\" go in '),
    "a-digit-zero": ('"digit":4}', '"digit":0}'),
    "another-step-named-as-a-single": ("Locked Candidates Type 1 (Pointing)", "Naked Single"),
}


def changed_paths(demo: list[dict[str, Any]], change: tuple[str, str]) -> list[str]:
    """Every 50th demo record's path as JSON with ``change`` made in it, for those that hold its text."""
    texts = [orjson.dumps(record["solve_path"]).decode()[1:-1] for record in demo[::50]]
    return [text.replace(*change, 1) for text in texts if change[0] in text]


@pytest.mark.parametrize(
    "change",
    [
        *(pytest.param(change, id=name) for name, change in CHANGES.items()),
        pytest.param(('"cells":["r', '"cells":["row 1","r'), id="a-house-as-a-cell"),
    ],
)
def test_a_path_is_prepared_only_where_the_prepared_path_moves_as_the_path_as_json_does(
    demo: list[dict[str, Any]], change: tuple[str, str]
) -> None:
    rng = random.Random(46)
    texts = changed_paths(demo, change)
    prepared = 0
    for text in texts:
        path = prepare_path(text)
        if path is None:
            continue
        prepared += 1
        move = from_transform(random_transform(rng))
        assert move.prepared_path(path) == move.path_json(text)
    assert texts
    # Only a change the pack could write (an escaped quote in an explanation) leaves a path prepared.
    assert (prepared > 0) == (change[1].startswith(" can ")), (len(texts), prepared)


@pytest.mark.parametrize(
    "change",
    [
        *(pytest.param(change, id=name) for name, change in CHANGES.items()),
        pytest.param(("},{", "};{"), id="another-character-between-steps"),
        pytest.param(('"cells":["', '"cells":[ "'), id="a-space-in-a-list"),
    ],
)
def test_a_path_not_as_the_pack_writes_it_moves_as_the_regex_moves_it(
    demo: list[dict[str, Any]], change: tuple[str, str]
) -> None:
    rng = random.Random(45)
    texts = changed_paths(demo, change)
    for text in texts:
        move = from_transform(random_transform(rng))
        try:
            expected = move.names().path_json(text)
        except ValueError:
            with pytest.raises(ValueError):
                move.path_json(text)
        else:
            assert move.path_json(text) == expected
    assert texts


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(("already hold every digit", "already hold all digits"), id="explanation-reworded"),
        pytest.param(('"houses":[]', '"houses":["row 5"]'), id="a-house-named"),
        pytest.param(('"eliminations":[]', '"eliminations":[{"cell":"r1c1","digit":4}]'), id="an-elimination"),
        pytest.param(('"technique":"Naked Single"', '"technique":"Naked Singles"'), id="another-technique"),
    ],
)
def test_a_single_that_does_not_read_as_its_template_is_moved_word_by_word(change: tuple[str, str]) -> None:
    step = {
        "technique": "Naked Single",
        "score": 4,
        "placements": [{"cell": "r4c7", "digit": 1}],
        "eliminations": [],
        "cells": ["r4c7"],
        "houses": [],
        "digits": [1],
        "explanation": "The row, column and box of r4c7 already hold every digit except 1, so r4c7 = 1.",
    }
    text = orjson.dumps(step).decode().replace(*change)
    changed = orjson.loads(text)
    assert MOVE.names().path_json(text) == orjson.dumps(MOVE.step(changed)).decode()


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"technique":"Naked Single"}', id="a-step-cut-short"),
        pytest.param('{"technique":"X","score":1}x', id="not-a-step's-end"),
        pytest.param('{"score":1}', id="no-technique-first"),
    ],
)
def test_text_that_is_not_a_path_as_the_pack_writes_it_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        MOVE.names().path_json(text)
    with pytest.raises(ValueError):
        MOVE.path_json(text)
