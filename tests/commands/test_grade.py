"""``sudokupool grade``: statuses, text and JSON output, input order, stdin and files, jobs, progress."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

from sudokupool.cli import main
from sudokupool.commands import grade as grade_command
from sudokupool.sudoku.grader import grade
from sudokupool.sudoku.replay import replay
from sudokupool.sudoku.solver import solve

EASY = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
HARD = "6.45....2...4...9.....71.4...716..83.51...96.36..497...8.61.....4...8...9....46.8"
TWO_SOLUTIONS = "." * 81
CLASH = "11" + "." * 79
KEYS = [
    "puzzle",
    "status",
    "reason",
    "solution",
    "difficulty",
    "difficulty_level",
    "score",
    "tier",
    "stars",
    "hardest_technique",
    "techniques",
    "solve_path",
]


def test_text_output_has_the_grade_and_numbered_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", HARD]) == 0
    out = capsys.readouterr().out
    g = grade(HARD)
    assert f"puzzle:     {HARD}\n" in out
    assert "status:     solved\n" in out
    assert f"difficulty: {g.difficulty} (level {g.difficulty_level})\n" in out
    assert f"score:      {g.score}\n" in out
    assert f"tier:       {g.tier} ({g.stars} star" in out
    assert f"hardest:    {g.hardest_technique}\n" in out
    assert f"solution:   {solve(HARD)}\n" in out
    first = g.solve_path[0]
    last = g.solve_path[-1]
    width = len(str(len(g.solve_path)))
    assert f"  {1:>{width}}. {first['technique']} ({first['score']}): {first['explanation']}\n" in out
    assert f"  {len(g.solve_path)}. {last['technique']} ({last['score']}): {last['explanation']}\n" in out


def test_text_output_of_an_unsolvable_puzzle_gives_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", CLASH]) == 1
    out = capsys.readouterr().out
    assert out == (
        f"puzzle:     {CLASH}\nstatus:     invalid\nreason:     the givens clash: digit 1 appears twice in row 1\n"
    )


def test_json_is_one_object_per_input_line_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "puzzles.txt"
    path.write_text(f"{HARD} 3.2\n\n{CLASH}\n{EASY.replace('0', '.')}\n{TWO_SOLUTIONS}\nshort\n")
    assert main(["grade", "--file", str(path), "--json"]) == 1
    rows = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["puzzle"] for row in rows] == [HARD, CLASH, EASY.replace("0", "."), TWO_SOLUTIONS, "short"]
    assert [row["status"] for row in rows] == ["solved", "invalid", "solved", "multiple-solutions", "invalid"]
    assert all(list(row) == KEYS for row in rows)
    solution = solve(HARD)
    assert solution is not None
    assert replay(HARD, solution, rows[0]["solve_path"]) == []
    assert rows[0]["score"] == grade(HARD).score
    assert rows[0]["solution"] == solution
    assert [row["solution"] for row in rows[1:]] == [None, solve(EASY.replace("0", ".")), None, None]
    assert rows[1]["reason"] == "the givens clash: digit 1 appears twice in row 1"
    assert rows[3]["score"] is None and rows[3]["solve_path"] == []
    assert rows[4]["reason"] == "a grid has 81 cells, got 5"


def test_zeros_and_dots_grade_alike(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", "--json", EASY, EASY.replace("0", ".")]) == 0
    first, second = (orjson.loads(line) for line in capsys.readouterr().out.splitlines())
    assert first["status"] == "solved"
    assert {**first, "puzzle": None} == {**second, "puzzle": None}


def test_no_input_and_a_missing_file_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade"]) == 2
    assert capsys.readouterr().err.startswith("sudokupool grade: give puzzles")
    assert main(["grade", "--file", str(tmp_path / "nope.txt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sudokupool grade: cannot read {tmp_path / 'nope.txt'}") and "Traceback" not in err
    assert main(["grade", "--jobs", "0", EASY]) == 2


def _run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sudokupool", "grade", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_stdin_with_jobs_keeps_order_and_reports_progress() -> None:
    # 100 lines reach the progress threshold; two processes must still answer in input order.
    lines = [EASY, CLASH, HARD, TWO_SOLUTIONS] * 25
    done = _run("-", "--json", "--jobs", "2", stdin="\n".join(lines) + "\n")
    assert done.returncode == 1
    rows = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [row["puzzle"] for row in rows] == lines
    assert [row["status"] for row in rows[:4]] == ["solved", "invalid", "solved", "multiple-solutions"]
    assert rows[2] == rows[6]
    assert "progress: 100/100" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_subprocess_text_output_and_exit_code() -> None:
    done = _run(EASY)
    assert done.returncode == 0
    solution = solve(EASY.replace("0", "."))
    assert done.stdout.startswith(
        f"puzzle:     {EASY}\nstatus:     solved\nsolution:   {solution}\ndifficulty: Easy (level 1)\n"
    )
    assert done.stderr == ""


@pytest.mark.slow
def test_a_byte_order_mark_is_not_part_of_the_first_puzzle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + EASY.encode() + b"\n")
    assert main(["grade", "--file", str(path), "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["puzzle"] == EASY
    done = _run("-", "--json", stdin=f"\ufeff{EASY}\n")
    assert done.returncode == 0
    assert orjson.loads(done.stdout)["puzzle"] == EASY


def test_no_more_processes_than_puzzles_or_cpus(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    started: list[int] = []

    @contextmanager
    def pool(jobs: int) -> Iterator[object]:
        started.append(jobs)
        yield type("Pool", (), {"imap": staticmethod(lambda f, items, chunksize: map(f, items))})()

    monkeypatch.setattr(grade_command, "worker_pool", pool)
    assert main(["grade", "--jobs", "1000", EASY, HARD]) == 0
    assert all(jobs <= min(2, os.cpu_count() or 1) for jobs in started)
    assert started == ([2] if (os.cpu_count() or 1) >= 2 else [])


@pytest.mark.slow
@pytest.mark.parametrize("source", [pytest.param("file", id="empty-file"), pytest.param("-", id="empty-stdin")])
def test_an_empty_input_says_so(tmp_path: Path, source: str) -> None:
    (tmp_path / "empty.txt").write_text("\n\n")
    done = _run("--file", str(tmp_path / "empty.txt")) if source == "file" else _run("-")
    assert done.returncode == 0
    assert (done.stdout, done.stderr) == ("", "sudokupool grade: no puzzles read\n")


def _spaced(puzzle: str) -> str:
    """``puzzle`` written as people print it: a cell a column, a box a block, rules between bands."""
    rows = []
    for r in range(9):
        row = puzzle[r * 9 : r * 9 + 9]
        rows.append(" | ".join(" ".join(row[b * 3 : b * 3 + 3]) for b in range(3)))
        if r in (2, 5):
            rows.append("------+-------+------")
    return "\n".join(rows)


def test_pasted_grids_comments_and_empties_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Every form below is EASY (zeros kept where written as zeros; '_' read as '.'), then HARD.
    underscored = EASY.replace("0", "_")
    boxed = _spaced(EASY).replace("|", "\u2502").replace("-", "\u2500").replace("+", "\u253c")
    path = tmp_path / "pasted.txt"
    path.write_text(
        "# puzzles from the paper, one per form\n"
        f"{' '.join(EASY)}\n"  # one line, spaced: 161 characters
        f"{_spaced(EASY)}\n"
        "\n"
        f"{boxed}   # box-drawing rules\n"
        f"{underscored} 1.2   # rated, with a comment\n"
        + "\n".join(",".join(EASY[r * 9 : r * 9 + 9]) for r in range(9))
        + f"\n# a comment between puzzles\n{HARD}\n"
    )
    assert main(["grade", "--file", str(path), "--json"]) == 0
    rows = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["puzzle"] for row in rows] == [EASY, EASY, EASY, EASY.replace("0", "."), EASY, HARD]
    assert [row["status"] for row in rows] == ["solved"] * 6
    assert {row["solution"] for row in rows[:5]} == {solve(EASY.replace("0", "."))}


@pytest.mark.slow
def test_a_pasted_argument_and_a_short_grid(capsys: pytest.CaptureFixture[str]) -> None:
    # A grid pasted as one argument (line breaks included); a grid cut short by text is graded as what it has.
    assert main(["grade", "--json", _spaced(HARD.replace(".", "0"))]) == 0
    row = orjson.loads(capsys.readouterr().out)
    assert (row["puzzle"], row["status"]) == (HARD.replace(".", "0"), "solved")
    three_rows = "\n".join(_spaced(EASY).splitlines()[:3])
    done = _run("-", "--json", stdin=f"{three_rows}\nnot a grid\n{EASY}\n")
    assert done.returncode == 1
    rows = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [(row["status"], row["reason"]) for row in rows] == [
        ("invalid", "a grid has 81 cells, got 27"),
        ("invalid", "a grid has 81 cells, got 3"),
        ("solved", None),
    ]


def test_a_puzzle_past_the_time_limit_says_so_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", "--time-per-puzzle", "1e-9", "--json", EASY]) == 1
    answer = orjson.loads(capsys.readouterr().out)
    assert (answer["status"], answer["reason"]) == ("timed-out", "not graded within the time limit of 1e-09 s")


def test_a_grid_with_several_solutions_that_sinks_a_search_by_cells_is_graded(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Norvig's "hard1": a search branching on cells alone takes minutes to find its second solution.
    hard1 = ".....6....59.....82....8....45........3........6..3.54...325..6.................."
    assert main(["grade", "--time-per-puzzle", "3600", hard1]) == 1
    assert capsys.readouterr().out == (
        f"puzzle:     {hard1}\nstatus:     multiple-solutions\nreason:     the givens allow more than one solution\n"
    )


@pytest.mark.parametrize("value", ["0", "-2", "inf"])
def test_a_time_limit_must_be_positive_seconds(capsys: pytest.CaptureFixture[str], value: str) -> None:
    assert main(["grade", "--time-per-puzzle", value, EASY]) == 2
    assert capsys.readouterr().err == (
        f"sudokupool grade: --time-per-puzzle must be a positive number of seconds, not {float(value):g}\n"
    )
