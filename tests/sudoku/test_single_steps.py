from __future__ import annotations

from typing import Any

import orjson
import pytest

from sudokupool.sudoku.grid import BOX_OF, COL_OF, ROW_OF, cell_name, house_name
from sudokupool.sudoku.single_steps import CLOSING, FORMS, OPENING, TEMPLATES, TRANSPOSED_FORMS, step_json, table
from tests.helpers import demo_records


@pytest.fixture(scope="module")
def demo() -> list[dict[str, Any]]:
    return demo_records()


def test_every_single_of_the_demo_pool_is_in_the_table_as_it_is_written(demo: list[dict[str, Any]]) -> None:
    found, steps = table()
    singles = 0
    for record in demo[::10]:
        for step in record["solve_path"]:
            if step["technique"] not in TEMPLATES:
                continue
            text = orjson.dumps(step).decode()
            assert text.startswith(OPENING) and text.endswith(CLOSING)
            cell, digit, form = found[text[len(OPENING) : -len(CLOSING)]]
            assert steps[cell][digit - 1][form] == text[len(OPENING) : -len(CLOSING)]
            technique, _, kind = FORMS[form]
            assert (technique, cell_name(cell), digit) == (step["technique"], step["cells"][0], step["digits"][0])
            assert step["houses"] == (
                [] if kind is None else [house_name(kind * 9 + (ROW_OF, COL_OF, BOX_OF)[kind][cell])]
            )
            singles += 1
    assert singles > 10_000


def test_the_table_holds_each_form_of_each_cell_and_digit_once() -> None:
    found, steps = table()
    assert (
        len(found)
        == 81 * 9 * len(FORMS)
        == len({text for by_digit in steps for by_form in by_digit for text in by_form})
    )
    assert found[steps[40][4][2]] == (40, 5, 2)


def test_a_step_is_written_as_orjson_writes_it() -> None:
    step = {
        "technique": "Hidden Single",
        "score": 14,
        "placements": [{"cell": "r1c2", "digit": 1}],
        "eliminations": [],
        "cells": ["r1c2"],
        "houses": ["row 1"],
        "digits": [1],
        "explanation": "In row 1, 1 fits only in r1c2, so r1c2 = 1.",
    }
    assert step_json("Hidden Single", 14, "r1c2", 1, "row 1", step["explanation"]) == orjson.dumps(step).decode()
    no_house = {**step, "houses": []}
    assert step_json("Hidden Single", 14, "r1c2", 1, "", step["explanation"]) == orjson.dumps(no_house).decode()


def test_a_transposition_swaps_the_forms_of_rows_and_columns() -> None:
    for form, there in enumerate(TRANSPOSED_FORMS):
        (technique, template, kind), (technique_there, template_there, kind_there) = FORMS[form], FORMS[there]
        assert (technique, template) == (technique_there, template_there)
        assert kind_there == {None: None, 0: 1, 1: 0, 2: 2}[kind]
