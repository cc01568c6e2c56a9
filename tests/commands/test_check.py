from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from sudokupool.cli import main
from sudokupool.sudoku.canonical import invariants
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
    out, err = capsys.readouterr()
    assert "line 3: bad-solve-path" in out
    assert "line 4: wrong-canonical-id" in out
    assert "line 5: invalid-json" in out
    assert err.startswith(
        f"sudokupool check: cannot load export {path}: 3 bad lines of 5 read, more than "
        "SUDOKUPOOL_MAX_BAD_LINES=0.1% allows; the first is line 3: bad-solve-path: step 1 (Naked Single): "
    )
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("option", "environ", "code"),
    [
        pytest.param([], {}, 1, id="default"),
        pytest.param(["--max-bad-lines", "1"], {}, 1, id="count-below"),
        pytest.param(["--max-bad-lines", "2"], {}, 0, id="count"),
        pytest.param([], {"SUDOKUPOOL_MAX_BAD_LINES": "40%"}, 0, id="share-from-the-environment"),
        pytest.param([], {"SUDOKUPOOL_MAX_BAD_LINES": "39%"}, 1, id="share-below"),
        pytest.param(["--max-bad-lines", "2"], {"SUDOKUPOOL_MAX_BAD_LINES": "0"}, 0, id="option-wins"),
    ],
)
def test_check_applies_the_services_bound_on_bad_lines(
    tmp_path: Path,
    records: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    option: list[str],
    environ: dict[str, str],
    code: int,
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson", records[:3], extra_lines=(b"[]", b"{"))
    assert main(["check", str(path), *option]) == code
    out, err = capsys.readouterr()
    assert "line 4: not-an-object" in out
    assert "line 5: invalid-json" in out
    if code:
        assert err.count("\n") == 1
        assert "2 bad lines of 5 read, more than SUDOKUPOOL_MAX_BAD_LINES=" in err
    else:
        assert err == ""
        assert "loaded 3 puzzles, skipped 2" in out


def test_a_record_nested_too_deep_is_a_bad_line_not_a_traceback(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    record = dict(records[1])
    record["solve_path"] = [{**record["solve_path"][0], "explanation": "@deep@"}, *record["solve_path"][1:]]
    line = orjson.dumps(record).replace(b'"@deep@"', b"[" * 300 + b"]" * 300)
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson", records[:1], extra_lines=(line,))
    assert main(["check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "line 2: bad-step: solve_path step 1 explanation: Expected `str`, got `array`\n"
    assert err.startswith("sudokupool check: cannot load export")
    assert "the first is line 2: bad-step" in err


def test_a_bad_bound_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "x.ndjson"), "--max-bad-lines", "lots"]) == 2
    assert capsys.readouterr().err == (
        "sudokupool check: --max-bad-lines='lots' is not a count or a percentage; expected a count of lines "
        "such as 10, or a percentage of them from 0% to 100% such as 0.1%\n"
    )


def test_a_missing_file_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.ndjson")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_a_record_past_the_time_limit_is_a_timed_out_line(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sudokupool.sudoku import solver

    real = solver.solutions

    def slow_for_the_third(grid: str, limit: int = 2, *, deadline: float | None = None) -> tuple[int, str | None]:
        # What a search that runs out of time does: the third record's never settles.
        if grid == records[2]["puzzle"]:
            raise solver.TimeLimitExceeded
        return real(grid, limit, deadline=deadline)

    monkeypatch.setattr(solver, "solutions", slow_for_the_third)
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson", records[:4])
    assert main(["check", str(path), "--time-per-puzzle", "2.5", "--max-bad-lines", "1"]) == 0
    out, err = capsys.readouterr()
    assert "line 3: timed-out: uniqueness not settled within the time limit of 2.5 s\n" in out
    assert "loaded 3 puzzles, skipped 1" in out
    assert err == ""


@pytest.mark.parametrize("value", ["0", "-1", "inf", "nan"])
def test_a_time_limit_must_be_positive_seconds(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    assert main(["check", str(tmp_path / "x.ndjson"), "--time-per-puzzle", value]) == 2
    assert capsys.readouterr().err.startswith(
        "sudokupool check: --time-per-puzzle must be a positive number of seconds"
    )


def test_check_fast_catches_ids_that_are_not_the_grids(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    first = records[0]
    other = next(r for r in records[5:] if invariants(r["puzzle"]) != invariants(first["puzzle"]))
    # Another puzzle claiming the first one's ids (canonical form and share code: the first is not in the
    # export, so the id is not a repeat); a made-up share code; a made-up puzzle_id.
    claims = {**other, "canonical": first["canonical"], "canonical_id": first["canonical_id"]}
    made_up = {**records[2], "canonical_id": "0000000000000"}
    wrong_grid_id = {**records[3], "puzzle_id": "0000000000000"}
    extra = tuple(orjson.dumps(r) for r in (claims, made_up, wrong_grid_id))
    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson", [records[4]], extra_lines=extra)
    assert main(["check", str(path), "--fast", "--max-bad-lines", "3"]) == 0
    out = capsys.readouterr().out
    assert "line 2: wrong-canonical: canonical is not a form of puzzle (the clues differ)\n" in out
    assert "line 3: wrong-canonical-id: canonical_id is not the share code of canonical\n" in out
    assert "line 4: wrong-puzzle-id: puzzle_id is not the id of puzzle\n" in out
    assert "loaded 1 puzzle, skipped 3" in out
