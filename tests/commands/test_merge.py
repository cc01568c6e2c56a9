"""``sudokupool merge``: overlapping builds joined, duplicates dropped (first kept), records unchanged, a pack."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from sudokupool.cli import main
from sudokupool.pool.export import parse_record
from sudokupool.storage.naming import is_export_name, pack_key
from sudokupool.sudoku.ids import puzzle_id


def lines_of(path: Path) -> list[bytes]:
    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    return data.splitlines()


def build(directory: Path, seed: int, count: int) -> Path:
    assert main(["build", "--out", f"{directory}/", "--count", str(count), "--seed", str(seed), "--jobs", "1"]) == 0
    [export] = (p for p in directory.iterdir() if is_export_name(p.name))
    return export


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    # a and b share a seed, so b's first 4 puzzles are a's; c has a seed of its own.
    root = tmp_path_factory.mktemp("shards")
    return build(root / "a", 1, 4), build(root / "b", 1, 7), build(root / "c", 2, 3)


def test_overlapping_builds_merge_into_one_export_and_its_pack(
    tmp_path: Path, shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, c = shards
    capsys.readouterr()
    assert main(["merge", str(a), str(b.parent), str(c), "--out", f"{tmp_path}/merged/"]) == 0
    err = capsys.readouterr().err
    [merged] = (p for p in (tmp_path / "merged").iterdir() if is_export_name(p.name))
    # Records unchanged, in input order, each puzzle once: a's, then what b adds, then c's.
    expected = lines_of(a) + lines_of(b)[4:] + lines_of(c)
    assert lines_of(merged) == expected
    assert len({parse_record(line).canonical_id for line in expected}) == 10
    assert f"{a}: 4 kept, 0 duplicates dropped\n" in err
    assert f"{b}: 3 kept, 4 duplicates dropped\n" in err
    assert f"{c}: 3 kept, 0 duplicates dropped\n" in err
    assert "wrote 10 puzzles from 3 exports (4 duplicates dropped)" in err
    assert merged.with_name(pack_key(merged.name)).is_file()
    assert main(["check", str(merged)]) == 0  # the export loads, and its pack is whole and made from it
    assert sorted(p.name for p in (tmp_path / "merged").iterdir()) == sorted([merged.name, pack_key(merged.name)])


def test_the_first_of_a_repeated_puzzle_is_kept_and_bad_lines_are_counted(
    tmp_path: Path, shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, b, _ = shards
    # The same puzzle as b's first record, with another volume: the merge keeps b's, and says so.
    first = lines_of(b)[0]
    other = first.replace(b'"volume":null', b'"volume":"other"')
    assert other != first
    odd = tmp_path / "pool-20260101T000000Z.ndjson"
    odd.write_bytes(other + b"\nnot json\n" + lines_of(b)[1] + b"\n")
    out = tmp_path / "merged.ndjson"
    assert main(["merge", str(b), str(odd), "--out", str(out)]) == 0
    assert lines_of(out) == lines_of(b)
    assert f"{odd}: 0 kept, 2 duplicates dropped, 1 bad line skipped\n" in capsys.readouterr().err
    assert not list(tmp_path.glob(".sudokupool-*"))  # no temporary file left, and no pack for a plain name
    assert not list(tmp_path.glob("*.pack"))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(lambda d: d / "nothing.ndjson", "no such file", id="missing"),
        pytest.param(lambda d: d, "holds no export", id="empty-directory"),
    ],
)
def test_inputs_that_are_not_exports_are_refused(
    tmp_path: Path, make: object, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    item = make(tmp_path)  # type: ignore[operator]
    assert main(["merge", str(item), "--out", f"{tmp_path}/out/"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sudokupool merge: ") and message in err and err.count("\n") == 1


def test_a_damaged_input_stops_the_merge_and_leaves_nothing(
    tmp_path: Path, shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _, _ = shards
    cut = tmp_path / "in" / "pool-20260101T000000Z.ndjson.gz"
    cut.parent.mkdir()
    cut.write_bytes(a.read_bytes()[:-20])
    (tmp_path / "out").mkdir()
    assert main(["merge", str(a), str(cut), "--out", f"{tmp_path}/out/"]) == 1
    assert f"sudokupool merge: cannot read {cut}: truncated gzip stream" in capsys.readouterr().err
    assert list((tmp_path / "out").iterdir()) == []


def test_a_merge_past_the_export_size_limit_says_what_to_set(
    tmp_path: Path, shards: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Merging is how an export past SUDOKUPOOL_MAX_EXPORT_BYTES is made: its inputs are not held to it.
    a, b, _ = shards
    monkeypatch.setenv("SUDOKUPOOL_MAX_EXPORT_BYTES", "2048")
    capsys.readouterr()
    assert main(["merge", str(a), str(b), "--out", f"{tmp_path}/"]) == 0
    err = capsys.readouterr().err
    assert "sudokupool merge: the export inflates to " in err
    assert "set SUDOKUPOOL_MAX_EXPORT_BYTES=1073741824 (or more)" in err


def test_puzzles_are_told_apart_by_their_grids_not_by_the_ids_they_claim(
    tmp_path: Path, shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, _, c = shards
    first, second = (orjson.loads(line) for line in lines_of(a)[:2])
    other = orjson.loads(lines_of(c)[0])
    # a's first puzzle under a made-up id; c's first puzzle claiming a's first id; a's second puzzle turned
    # over (another layout of one puzzle: the same canonical form, a grid of its own).
    made_up = {**first, "canonical_id": "0000000000000"}
    borrowed = {**other, "canonical_id": first["canonical_id"]}
    turned = "".join(second["puzzle"][r * 9 + col] for col in range(9) for r in range(9))
    solved = "".join(second["solution"][r * 9 + col] for col in range(9) for r in range(9))
    assert turned != second["puzzle"]
    transposed = {**second, "puzzle": turned, "solution": solved, "puzzle_id": puzzle_id(turned), "solve_path": None}
    odd = tmp_path / "pool-20260101T000000Z.ndjson"
    odd.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in (made_up, borrowed, transposed, other)))
    out = tmp_path / "merged.ndjson"
    assert main(["merge", str(odd), str(a), "--out", str(out), "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert f"{odd}: 2 kept, 0 duplicates dropped, 2 records with wrong ids skipped\n" in err
    # The turned-over puzzle came first, so a's second record is the duplicate; a's first is new.
    assert f"{a}: {len(lines_of(a)) - 1} kept, 1 duplicate dropped\n" in err
    merged = [parse_record(line) for line in lines_of(out)]
    assert [r.puzzle for r in merged[:2]] == [turned, other["puzzle"]]
    assert first["puzzle"] in {r.puzzle for r in merged}
    assert len({r.canonical for r in merged}) == len(merged)
    assert main(["check", str(out), "--canonical"]) == 0


def test_merging_in_several_processes_gives_the_same_export(
    tmp_path: Path, shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, c = shards
    assert main(["merge", str(a), str(b), str(c), "--out", str(tmp_path / "one.ndjson"), "--jobs", "1"]) == 0
    assert main(["merge", str(a), str(b), str(c), "--out", str(tmp_path / "two.ndjson"), "--jobs", "2"]) == 0
    assert lines_of(tmp_path / "two.ndjson") == lines_of(tmp_path / "one.ndjson")
    assert len(lines_of(tmp_path / "one.ndjson")) == 10
