from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from sudokupool.cli import main
from tests.factories import write_export


def test_a_good_export_passes(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson.gz", records[:10])
    assert main(["check", str(path), "--canonical"]) == 0
    assert "loaded 10 puzzles, skipped 0" in capsys.readouterr().out


def test_bad_lines_are_reported_with_line_numbers(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    broken_path = dict(records[2])
    steps = [dict(step) for step in broken_path["solve_path"]]
    steps[0] = {**steps[0], "placements": [{"cell": "r1c1", "digit": 0}]}
    broken_path["solve_path"] = steps
    wrong_id = {**records[3], "canonical_id": "0000000000000"}
    extra = (orjson.dumps(broken_path), orjson.dumps(wrong_id), b"garbage")
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson", records[:2], extra_lines=extra)
    assert main(["check", str(path), "--canonical"]) == 1
    out = capsys.readouterr().out
    assert "line 3: bad-solve-path" in out
    assert "line 4: wrong-canonical-id" in out
    assert "line 5: invalid-json" in out
    assert "loaded 2 puzzles, skipped 3" in out


def test_a_missing_file_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.ndjson")]) == 1
    assert "no such file" in capsys.readouterr().err
