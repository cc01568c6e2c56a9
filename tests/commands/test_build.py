from __future__ import annotations

import errno
import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sudokupool.cli import main
from sudokupool.exporting import writer as writer_module
from sudokupool.exporting.orders import puzzle_seed
from sudokupool.pool.export import PUBLIC_FIELD_NAMES, parse_record
from sudokupool.storage.naming import is_export_name, pack_key
from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.generator import generate
from sudokupool.sudoku.grader import grade
from sudokupool.sudoku.ids import canonical_id, puzzle_id
from sudokupool.sudoku.replay import replay
from sudokupool.sudoku.solver import count_solutions
from sudokupool.sudoku.symmetry import symmetry_class
from tests.factories import read_export


def build(out: Path, *args: str) -> tuple[int, Path]:
    out.mkdir()
    code = main(["build", "--out", str(out), *args])
    files = sorted(out.glob("pool-*.ndjson*"))
    assert len(files) == 1
    return code, files[0]


def test_build_writes_a_valid_export(tmp_path: Path) -> None:
    code, path = build(tmp_path / "out", "--count", "12", "--seed", "7", "--jobs", "2")
    assert code == 0
    assert path.name.startswith("pool-") and path.name.endswith("Z.ndjson.gz")
    lines = read_export(path)
    assert len(lines) == 12
    records: list[dict[str, Any]] = [msgspec.to_builtins(parse_record(line)) for line in lines]
    assert len({r["canonical_id"] for r in records}) == 12
    for record in records:
        assert list(record)[: len(PUBLIC_FIELD_NAMES)] == list(PUBLIC_FIELD_NAMES)
        assert count_solutions(record["puzzle"]) == 1
        assert record["canonical"] == canonical_form(record["puzzle"])
        assert record["canonical_id"] == canonical_id(record["canonical"])
        assert record["puzzle_id"] == puzzle_id(record["puzzle"])
        assert record["symmetry"] == symmetry_class(record["puzzle"])
        assert record["symmetry"] != "none"
        assert record["source"] == "sudokupool-build/2.6.0"
        assert record["tags"] == []
        assert record["volume"] is None
        assert record["used_at"] is None
        assert generate(record["seed"]).puzzle == record["puzzle"]
        assert replay(record["puzzle"], record["solution"], record["solve_path"]) == []


def test_build_is_deterministic_across_job_counts(tmp_path: Path) -> None:
    _, one = build(tmp_path / "a", "--count", "6", "--seed", "3", "--jobs", "1")
    _, two = build(tmp_path / "b", "--count", "6", "--seed", "3", "--jobs", "2")
    first = [parse_record(line) for line in read_export(one)]
    second = [parse_record(line) for line in read_export(two)]
    assert [r.puzzle for r in first] == [r.puzzle for r in second]
    # Puzzle seeds come from (build seed, index) and are kept in index order.
    candidates = [puzzle_seed(3, i) for i in range(60)]
    positions = [candidates.index(r.seed) for r in first]
    assert positions == sorted(positions)


def test_quota_mode_and_plain_file(tmp_path: Path) -> None:
    out = tmp_path / "pool.ndjson"
    code = main(
        [
            "build",
            "--per-difficulty",
            "2",
            "--difficulty",
            "easy,Medium",
            "--out",
            str(out),
            "--seed",
            "1",
            "--jobs",
            "1",
        ]
    )
    assert code == 0
    records = [parse_record(line) for line in out.read_bytes().splitlines()]
    assert sorted(r.difficulty for r in records) == ["Easy", "Easy", "Medium", "Medium"]


def test_a_build_short_of_its_target_writes_no_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pool.ndjson.gz"
    out.write_bytes(b"the previous export")
    args = ["--per-difficulty", "1000", "--out", str(out), "--seed", "1", "--jobs", "1", "--time-limit", "1e-9"]
    assert main(["build", *args]) == 1
    assert "time limit" in capsys.readouterr().err
    assert out.read_bytes() == b"the previous export"
    assert len(read_export(tmp_path / "pool.ndjson.gz.partial")) < 4000


def test_a_build_short_of_its_target_leaves_no_export_name_in_the_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--count", "50", "--seed", "1", "--jobs", "1", "--time-limit", "1e-9"]
    assert main(["build", "--out", f"{tmp_path}/", *args]) == 1
    [partial] = tmp_path.iterdir()
    assert partial.name.endswith(".ndjson.gz.partial") and not is_export_name(partial.name)
    assert len(gzip.decompress(partial.read_bytes()).splitlines()) == 1
    assert f"what was made is in {partial.name}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--difficulty", "trivial"], id="unknown-difficulty"),
        pytest.param(["--count", "0"], id="zero-count"),
        pytest.param(["--jobs", "0"], id="zero-jobs"),
        pytest.param(["--per-difficulty", "0"], id="zero-per-difficulty"),
        pytest.param(["--time-limit=-1"], id="negative-time-limit"),
        pytest.param(["--time-limit", "0"], id="zero-time-limit"),
        pytest.param(["--time-limit", "nan"], id="nan-time-limit"),
        pytest.param(["--time-limit", "inf"], id="infinite-time-limit"),
    ],
)
def test_bad_arguments(tmp_path: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--out", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sudokupool build:") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("fifo", id="fifo"),
        pytest.param("link-to-fifo", id="link-to-fifo"),
        pytest.param("dangling-link", id="dangling-link"),
    ],
)
def test_an_output_that_is_not_a_file_or_directory_is_refused(
    tmp_path: Path, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A FIFO stands for any special file (a device such as /dev/null): the test must be harmless even where
    # the build would replace it.
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link-to-fifo").symlink_to(tmp_path / "fifo")
    (tmp_path / "dangling-link").symlink_to(tmp_path / "nowhere")
    out = tmp_path / target
    assert main(["build", "--out", str(out), "--count", "1", "--jobs", "1"]) == 2
    assert capsys.readouterr().err == f"sudokupool build: --out {out} is not a regular file or a directory\n"
    assert (tmp_path / "fifo").is_fifo()
    assert (tmp_path / "link-to-fifo").readlink() == tmp_path / "fifo"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling-link", "fifo", "link-to-fifo"]


def test_a_link_to_a_file_is_written_through(tmp_path: Path) -> None:
    (tmp_path / "exports").mkdir()
    target = tmp_path / "exports" / "current.ndjson"
    target.write_bytes(b"")
    link = tmp_path / "pool.ndjson"
    link.symlink_to(target)
    assert main(["build", "--out", str(link), "--count", "1", "--seed", "5", "--jobs", "1"]) == 0
    assert link.is_symlink() and link.readlink() == target
    assert len(read_export(target)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exports", "pool.ndjson"]
    assert [p.name for p in (tmp_path / "exports").iterdir()] == ["current.ndjson"]


def test_an_unwritable_output_directory_is_refused_before_any_work(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--out", "/proc/pool.ndjson", "--count", "1", "--jobs", "1"]) == 2
    assert capsys.readouterr().err.startswith("sudokupool build: cannot write in /proc: ")


def test_a_write_error_removes_the_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(record: dict[str, Any]) -> bytes:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writer_module, "record_line", full)
    assert main(["build", "--out", str(tmp_path), "--count", "1", "--seed", "5", "--jobs", "1"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"sudokupool build: cannot write the export in {tmp_path}: No space left on device"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_records_are_on_disk_before_the_build_ends(tmp_path: Path) -> None:
    # A build far too long to finish: its first records must be readable, in order, while it runs; stopped, it
    # leaves nothing behind.
    command = [sys.executable, "-m", "sudokupool", "build", "--count", "100000", "--seed", "9", "--jobs", "1"]
    process = subprocess.Popen(
        [*command, "--out", str(tmp_path / "pool.ndjson")],
        stderr=subprocess.PIPE,
        # A job started in the background (as CI may run this suite) inherits SIGINT ignored, and Python then
        # leaves it so: the build would not stop (tests/test_cli.py does the same).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        lines: list[bytes] = []
        while len(lines) < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
            growing = list(tmp_path.glob(".sudokupool-*.ndjson.tmp"))
            if growing:
                lines = growing[0].read_bytes().split(b"\n")[:-1]  # complete lines only
        assert len(lines) >= 3, "no records on disk after 60 s"
        seeds = [parse_record(line).seed for line in lines]
        candidates = [puzzle_seed(9, i) for i in range(200)]
        assert [candidates.index(seed) for seed in seeds] == sorted(candidates.index(seed) for seed in seeds)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert list(tmp_path.iterdir()) == []


def test_the_streamed_pack_is_the_one_check_accepts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, path = build(tmp_path / "out", "--count", "5", "--seed", "11", "--jobs", "1")
    assert code == 0
    assert path.with_name(pack_key(path.name)).is_file()
    capsys.readouterr()
    assert main(["check", str(path)]) == 0
    assert "pack" in capsys.readouterr().out


def test_missing_directories_of_an_output_file_are_made(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "pool-20260101T000000Z.ndjson.gz"
    assert main(["build", "--out", str(out), "--count", "1", "--seed", "5", "--jobs", "1"]) == 0
    assert len(read_export(out)) == 1


def test_an_output_path_ending_in_a_slash_is_a_directory(tmp_path: Path) -> None:
    out = tmp_path / "pools"
    assert main(["build", "--out", f"{out}/", "--count", "1", "--seed", "5", "--jobs", "1"]) == 0
    assert out.is_dir()
    [path] = (p for p in out.iterdir() if not p.name.endswith(".pack"))
    assert path.name.startswith("pool-") and path.name.endswith("Z.ndjson.gz")
    assert path.with_name(pack_key(path.name)).is_file()  # its pack beside it


def test_missing_parents_of_an_output_directory_are_made(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    assert main(["build", "--out", f"{out}/", "--count", "1", "--seed", "5", "--jobs", "1"]) == 0
    [path] = (p for p in out.iterdir() if not p.name.endswith(".pack"))
    assert path.name.startswith("pool-") and len(read_export(path)) == 1


def test_an_output_under_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").write_text("a file")
    assert main(["build", "--out", f"{tmp_path}/a/pools/", "--count", "1"]) == 2
    assert "cannot make the directories of --out" in capsys.readouterr().err


def test_tags_and_volume_only_when_asked(tmp_path: Path) -> None:
    args = ("--count", "2", "--seed", "7", "--jobs", "1", "--tag", "demo", "--tag", "shard-1", "--volume", "demo")
    code, path = build(tmp_path / "out", *args)
    assert code == 0
    for line in read_export(path):
        record = msgspec.to_builtins(parse_record(line))
        assert record["tags"] == ["demo", "shard-1"] and record["volume"] == "demo"


def test_help_names_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    assert "(default rotational-180)" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        main(["keys", "new", "--help"])
    assert "default keyed" in " ".join(capsys.readouterr().out.split())


def test_canonical_command(capsys: pytest.CaptureFixture[str]) -> None:
    puzzle = "1..456...4......2...912...6.1...5.....5..729.8..6....43.....9.2....6......82...75"
    assert main(["canonical", puzzle.replace(".", "0")]) == 0
    out = capsys.readouterr().out
    form = "........1..2..3.4..5.16.2.....7...84..96.17..7..4.9.....8.9..3..3.....9..94..76.."
    assert f"canonical:    {form}\n" in out
    assert f"canonical_id: {canonical_id(form)}\n" in out
    assert f"puzzle_id:    {puzzle_id(puzzle)}\n" in out
    assert "symmetry:     none\n" in out


@pytest.mark.parametrize(
    "text",
    [pytest.param("12", id="short"), pytest.param("11" + "." * 79, id="clash"), pytest.param("x" * 81, id="bad-char")],
)
def test_canonical_command_rejects(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["canonical", text]) == 2
    assert capsys.readouterr().err.startswith("sudokupool canonical:")


def _records(path: Path) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(parse_record(line)) for line in read_export(path)]


def test_technique_keeps_only_paths_that_use_every_one_named(tmp_path: Path) -> None:
    code, path = build(
        tmp_path / "out",
        "--count",
        "2",
        "--seed",
        "4",
        "--jobs",
        "1",
        "--technique",
        "x-wing",
        "--technique",
        "naked pair",
    )
    assert code == 0
    records = _records(path)
    assert len(records) == 2
    for record in records:
        assert {"X-Wing", "Naked Pair"} <= {step["technique"] for step in record["solve_path"]}
        assert {"X-Wing", "Naked Pair"} <= set(record["techniques"])
        assert record["difficulty"] in ("Hard", "Expert")


def _is_minimal(puzzle: str) -> bool:
    # Written apart from the builder's check: every clue in turn blanked, its solutions counted by the solver.
    for cell, digit in enumerate(puzzle):
        if digit != "." and count_solutions(puzzle[:cell] + "." + puzzle[cell + 1 :], 2) == 1:
            return False
    return True


@pytest.mark.parametrize("symmetry", [pytest.param("none", id="none"), pytest.param("rotational-180", id="180")])
def test_minimal_keeps_only_puzzles_with_no_clue_to_spare(tmp_path: Path, symmetry: str) -> None:
    count = "3" if symmetry == "none" else "1"
    code, path = build(
        tmp_path / "out", "--count", count, "--seed", "2", "--jobs", "1", "--minimal", "--symmetry", symmetry
    )
    assert code == 0
    records = _records(path)
    assert len(records) == int(count)
    for record in records:
        assert count_solutions(record["puzzle"], 2) == 1
        assert _is_minimal(record["puzzle"])
    if symmetry != "none":
        assert records[0]["symmetry"] != "none"  # the pattern keeps its symmetry


def test_without_minimal_a_symmetric_build_keeps_puzzles_with_a_clue_to_spare(tmp_path: Path) -> None:
    # The check above would pass on a builder that only ever makes minimal puzzles; this one does not.
    code, path = build(tmp_path / "out", "--count", "6", "--seed", "2", "--jobs", "1")
    assert code == 0
    assert not all(_is_minimal(record["puzzle"]) for record in _records(path))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--technique", "Wing It"], "unknown technique 'Wing It' (choose from Full House,", id="unknown"),
        pytest.param(["--technique", "xwing"], "unknown technique 'xwing' (did you mean 'X-Wing'?)\n", id="close"),
        pytest.param(
            ["--technique", "hidden singel"],
            "unknown technique 'hidden singel' (did you mean 'Hidden Single'?)\n",
            id="typo",
        ),
        pytest.param(["--difficulty", "hrad"], "unknown difficulty 'hrad' (did you mean 'Hard'?)\n", id="difficulty"),
        pytest.param(
            ["--difficulty", "easy,zzz"],
            "unknown difficulty 'zzz' (choose from easy, medium, hard, expert)\n",
            id="far",
        ),
        pytest.param(
            ["--technique", "X-Wing", "--difficulty", "easy,medium"],
            "a path with X-Wing is Hard or harder, but --difficulty keeps only Easy, Medium",
            id="too-easy",
        ),
    ],
)
def test_impossible_orders_are_refused(
    tmp_path: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build", "--out", str(tmp_path), *args]) == 2
    assert capsys.readouterr().err.startswith(f"sudokupool build: {message}")
    assert list(tmp_path.iterdir()) == []


LEVELS = {"easy": 1, "medium": 2, "hard": 3, "expert": 4}


def _check_graded(record: dict[str, Any], level: str) -> None:
    """The record is unique, of ``level``, graded exactly as the grader grades it, and made by its seed."""
    assert record["difficulty"] == level.capitalize()
    assert count_solutions(record["puzzle"], 2) == 1
    g = grade(record["puzzle"])
    assert (g.difficulty, g.difficulty_level, g.score, g.tier, g.stars) == (
        record["difficulty"],
        record["difficulty_level"],
        record["score"],
        record["tier"],
        record["stars"],
    )
    assert (g.hardest_technique, g.techniques, g.solve_path, g.solution) == (
        record["hardest_technique"],
        record["techniques"],
        record["solve_path"],
        record["solution"],
    )
    # Reproducible: the generator steered to the record's level, with its seed and the build's symmetry.
    assert generate(record["seed"], "rotational-180", LEVELS[level]).puzzle == record["puzzle"]


@pytest.mark.parametrize("level", ["easy", "medium", "hard", "expert"])
def test_a_steered_build_keeps_only_the_level_asked_for(tmp_path: Path, level: str) -> None:
    code, path = build(tmp_path / "out", "--count", "3", "--seed", "6", "--jobs", "1", "--difficulty", level)
    assert code == 0
    records = _records(path)
    assert len(records) == 3
    for record in records:
        _check_graded(record, level)
    if level == "easy":  # every dig steered toward Easy ends Easy: the first three puzzles are kept
        assert [r["seed"] for r in records] == [puzzle_seed(6, i) for i in range(3)]
    if level != "easy":  # steered: not what the plain dig makes from the same seed
        assert any(generate(r["seed"]).puzzle != r["puzzle"] for r in records)


def test_a_steered_build_is_the_same_on_any_number_of_jobs(tmp_path: Path) -> None:
    args = ["--count", "3", "--difficulty", "medium", "--seed", "6"]
    _, one = build(tmp_path / "one", *args, "--jobs", "1")
    _, two = build(tmp_path / "two", *args, "--jobs", "2")
    assert [r["puzzle"] for r in _records(one)] == [r["puzzle"] for r in _records(two)]


def test_a_steered_build_honours_technique_and_minimal(tmp_path: Path) -> None:
    code, path = build(
        tmp_path / "tech", "--count", "2", "--seed", "4", "--jobs", "1", "--difficulty", "hard", "--technique", "x-wing"
    )
    assert code == 0
    for record in _records(path):
        _check_graded(record, "hard")
        assert "X-Wing" in record["techniques"]
    code, path = build(
        tmp_path / "minimal", "--count", "3", "--seed", "4", "--jobs", "1", "--difficulty", "medium", "--minimal",
        "--symmetry", "none",
    )  # fmt: skip
    assert code == 0
    records = _records(path)
    assert len(records) == 3
    for record in records:
        assert record["difficulty"] == "Medium" and record["symmetry"] != "rotational-180"
        assert count_solutions(record["puzzle"], 2) == 1
        assert _is_minimal(record["puzzle"])
        assert generate(record["seed"], "none", 2).puzzle == record["puzzle"]


def test_a_build_for_hard_levels_keeps_the_puzzles_a_full_build_keeps(tmp_path: Path) -> None:
    # Several levels are not steered: work stopped early on unwanted puzzles must not change which are kept.
    _, everything = build(tmp_path / "all", "--count", "40", "--seed", "6", "--jobs", "1")
    _, hard = build(tmp_path / "hard", "--count", "3", "--seed", "6", "--jobs", "1", "--difficulty", "hard,expert")
    wanted = [r for r in _records(everything) if r["difficulty"] in ("Hard", "Expert")]
    got = _records(hard)
    assert [r["puzzle"] for r in got] == [r["puzzle"] for r in wanted[:3]]
    assert [r["solve_path"] for r in got] == [r["solve_path"] for r in wanted[:3]]


def test_quotas_that_fill_keep_the_puzzles_a_full_build_keeps(tmp_path: Path) -> None:
    # Once Easy's quota is full, later Easy puzzles are not graded to the end; what is kept must not change,
    # whatever the number of processes.
    _, everything = build(tmp_path / "all", "--count", "40", "--seed", "6", "--jobs", "1")
    args = ["--per-difficulty", "2", "--difficulty", "easy,hard", "--seed", "6"]
    _, one = build(tmp_path / "one", *args, "--jobs", "1")
    _, two = build(tmp_path / "two", *args, "--jobs", "2")
    records = _records(everything)
    wanted = [r for r in records if r["difficulty"] == "Easy"][:2] + [r for r in records if r["difficulty"] == "Hard"][
        :2
    ]
    order = [r["puzzle"] for r in records]
    expected = sorted((r["puzzle"] for r in wanted), key=order.index)
    assert [r["puzzle"] for r in _records(one)] == expected
    assert [r["puzzle"] for r in _records(two)] == expected


def test_the_export_and_its_pack_get_the_permissions_of_any_new_file(tmp_path: Path) -> None:
    code, path = build(tmp_path / "out", "--count", "1", "--seed", "5", "--jobs", "1")
    assert code == 0
    (tmp_path / "plain").touch()  # what the umask gives a new file here (not tempfile's private 0600)
    expected = (tmp_path / "plain").stat().st_mode
    assert path.stat().st_mode == expected
    assert path.with_name(pack_key(path.name)).stat().st_mode == expected


def test_an_export_past_the_size_limit_says_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SUDOKUPOOL_MAX_EXPORT_BYTES", "2048")
    code, path = build(tmp_path / "out", "--count", "1", "--seed", "5", "--jobs", "1")
    assert code == 0  # written all the same: the limit is the loader's
    inflated = len(gzip.decompress(path.read_bytes()))
    assert inflated > 2048
    err = capsys.readouterr().err
    assert (
        f"sudokupool build: the export inflates to {inflated} bytes, more than SUDOKUPOOL_MAX_EXPORT_BYTES=2048: "
        "set SUDOKUPOOL_MAX_EXPORT_BYTES=1073741824 (or more) wherever it is served, checked or packed\n"
    ) in err
    monkeypatch.setenv("SUDOKUPOOL_MAX_EXPORT_BYTES", str(1 << 30))
    build(tmp_path / "again", "--count", "1", "--seed", "5", "--jobs", "1")
    assert "SUDOKUPOOL_MAX_EXPORT_BYTES" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("tag", "hint"),
    [
        pytest.param("Demo", " (such as 'demo')", id="upper-case"),
        pytest.param("", "", id="empty"),
        pytest.param("x" * 33, "", id="too-long"),
        pytest.param("two words", "", id="space"),
    ],
)
def test_a_tag_no_record_may_carry_is_one_line_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tag: str, hint: str
) -> None:
    assert main(["build", "--count", "1", "--tag", "ok", "--tag", tag, "--out", f"{tmp_path}/", "--jobs", "1"]) == 2
    assert capsys.readouterr().err == (
        f"sudokupool build: --tag {tag!r}: a tag must be lower-case [a-z0-9-], 1 to 32 characters{hint}\n"
    )
    assert list(tmp_path.iterdir()) == []


def _seeds(path: Path) -> list[int]:
    return [parse_record(line).seed for line in read_export(path)]


def test_shards_draw_on_disjoint_puzzles_of_one_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shards = []
    for index in range(3):
        monkeypatch.setenv("JOB_COMPLETION_INDEX", str(index))
        code, path = build(tmp_path / f"env{index}", "--count", "3", "--seed", "5", "--shards", "3", "--jobs", "1")
        assert code == 0
        shards.append(_seeds(path))
    monkeypatch.delenv("JOB_COMPLETION_INDEX")
    # Shard I takes the build's puzzles I, I+3, I+6...: its seeds are those, in that order.
    for index, seeds in enumerate(shards):
        candidates = [puzzle_seed(5, k * 3 + index) for k in range(60)]
        positions = [candidates.index(seed) for seed in seeds]
        assert positions == sorted(positions)
    assert len({seed for seeds in shards for seed in seeds}) == 9
    # The flag gives the same shard as the Job's variable.
    _, again = build(tmp_path / "flag1", "--count", "3", "--seed", "5", "--shards", "3", "--shard", "1", "--jobs", "2")
    assert _seeds(again) == shards[1]


def test_one_shard_is_the_whole_build(tmp_path: Path) -> None:
    _, whole = build(tmp_path / "whole", "--count", "4", "--seed", "9", "--jobs", "1")
    _, shard = build(tmp_path / "shard", "--count", "4", "--seed", "9", "--shards", "1", "--shard", "0", "--jobs", "1")
    assert _seeds(whole) == _seeds(shard)


@pytest.mark.parametrize(
    ("args", "environ", "message"),
    [
        pytest.param(["--shard", "0", "--seed", "1"], {}, "--shard needs --shards", id="shard-without-shards"),
        pytest.param(["--shards", "3", "--shard", "0"], {}, "--shards needs --seed", id="no-seed"),
        pytest.param(
            ["--shards", "3", "--seed", "1"], {}, "--shards needs --shard or JOB_COMPLETION_INDEX", id="no-index"
        ),
        pytest.param(
            ["--shards", "3", "--seed", "1"], {"JOB_COMPLETION_INDEX": "x"}, "is not a shard number", id="bad-env"
        ),
        pytest.param(
            ["--shards", "3", "--seed", "1"],
            {"JOB_COMPLETION_INDEX": "3"},
            "not between 0 and 2",
            id="env-out-of-range",
        ),
        pytest.param(["--shards", "3", "--seed", "1", "--shard", "-1"], {}, "not between 0 and 2", id="negative"),
        pytest.param(
            ["--shards", "0", "--seed", "1", "--shard", "0"], {}, "--shards must be at least 1", id="zero-shards"
        ),
    ],
)
def test_bad_shards_are_refused_before_any_work(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    environ: dict[str, str],
    message: str,
) -> None:
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert main(["build", "--out", str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sudokupool build:") and message in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()
