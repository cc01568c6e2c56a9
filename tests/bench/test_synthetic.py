"""The benchmark pool maker's transformations keep every record valid (bench/pools.py)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

from bench.pools import compile_record, synthetic_line, token_table, tokenize_text
from sudokupool.loading.verify import check_file
from sudokupool.pool.export import parse_record, record_line
from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.ids import puzzle_id
from sudokupool.sudoku.symmetry import symmetry_class
from sudokupool.sudoku.transform import Transform, random_transform
from tests.factories import write_export


def _synthetic(records: list[dict[str, Any]], transform: Transform) -> list[dict[str, Any]]:
    table = token_table(transform)
    lines = [
        synthetic_line(compile_record(msgspec.to_builtins(parse_record(record_line(r)))), transform, table, n)
        for n, r in enumerate(records)
    ]
    return [msgspec.to_builtins(parse_record(line)) for line in lines]


@pytest.mark.anyio
@pytest.mark.parametrize("seed", [pytest.param(1, id="seed-1"), pytest.param(2, id="seed-2")])
async def test_synthetic_records_pass_check(records: list[dict[str, Any]], tmp_path: Path, seed: int) -> None:
    made = _synthetic(records, random_transform(random.Random(seed)))
    assert len({r["canonical_id"] for r in made}) == len(made)
    # A synthetic record's canonical_id is its own (synthetic_id), not the share code of its canonical form.
    report = await check_file(write_export(tmp_path / "pool-20261122T100000Z.ndjson.gz", made), share_codes=False)
    assert report.problems == []
    assert report.loaded == len(records)
    for record, source in zip(made, records, strict=True):
        assert record["canonical"] == source["canonical"] == canonical_form(record["puzzle"])
        assert record["puzzle_id"] == puzzle_id(record["puzzle"])
        assert record["symmetry"] == symmetry_class(record["puzzle"])
        assert record["tags"] == ["test", "synthetic"]


def test_transposition_renames_houses_and_digits() -> None:
    transform = Transform(transpose=True, digits=(2, 1, 3, 4, 5, 6, 7, 8, 9))
    text = "In rows 1 and 4, 1 fits only in columns 2 and 7, so those columns need their 1: remove 1 from r3c2."
    line = synthetic_line_text(text, transform)
    assert line == "In columns 1 and 4, 2 fits only in rows 2 and 7, so those rows need their 2: remove 2 from r2c3."


def synthetic_line_text(text: str, transform: Transform) -> str:
    table = token_table(transform)
    return "".join(table[ord(ch) - 0xE000] if "\ue000" <= ch <= "\ue0ff" else ch for ch in tokenize_text(text))
