from __future__ import annotations

import errno
import gzip
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sudokupool.cli import main
from sudokupool.commands import build as build_command
from sudokupool.commands.build import puzzle_seed
from sudokupool.loading.export import PUBLIC_FIELD_NAMES, parse_record
from sudokupool.naming import is_export_name, pack_key
from sudokupool.sudoku.canonical import canonical_form
from sudokupool.sudoku.generator import generate
from sudokupool.sudoku.ids import canonical_id, puzzle_id
from sudokupool.sudoku.replay import replay
from sudokupool.sudoku.solver import count_solutions
from sudokupool.sudoku.symmetry import symmetry_class


def read_export(path: Path) -> list[bytes]:
    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    return data.splitlines()


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
        assert record["source"] == "sudokupool-build/2.5.0"
        assert record["tags"] == ["demo"]
        assert record["volume"] == "demo"
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

    monkeypatch.setattr(build_command, "record_line", full)
    assert main(["build", "--out", str(tmp_path), "--count", "1", "--seed", "5", "--jobs", "1"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith(f"sudokupool build: cannot write {tmp_path}/pool-")
    assert err[-1].endswith(".ndjson.gz: No space left on device")
    assert list(tmp_path.iterdir()) == []


def test_missing_output_directory(tmp_path: Path) -> None:
    assert main(["build", "--out", str(tmp_path / "nowhere" / "pool.ndjson.gz"), "--count", "1"]) == 2


def test_an_output_path_ending_in_a_slash_is_a_directory(tmp_path: Path) -> None:
    out = tmp_path / "pools"
    assert main(["build", "--out", f"{out}/", "--count", "1", "--seed", "5", "--jobs", "1"]) == 0
    assert out.is_dir()
    [path] = (p for p in out.iterdir() if not p.name.endswith(".pack"))
    assert path.name.startswith("pool-") and path.name.endswith("Z.ndjson.gz")
    assert path.with_name(pack_key(path.name)).is_file()  # its pack beside it


def test_a_directory_path_whose_parent_is_missing_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["build", "--out", f"{tmp_path}/nowhere/pools/", "--count", "1"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()


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
