"""Crafted packs with right checksums: refused at load or before a body is sent, named by ``check``, and
the service serves the export's records instead, answers unknown ids at once and logs no traceback."""

from __future__ import annotations

import array
import logging
import os
import random
import shutil
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest

from sudokupool.cli import main
from sudokupool.loading.loader import load_export, parse_export
from sudokupool.loading.packing import write_pack
from sudokupool.loading.verify import pack_problem
from sudokupool.pool import pack
from sudokupool.pool.pack import PackError, map_file
from sudokupool.pool.pool import DamagedRecord, Pool, PoolInfo
from sudokupool.pool.validate import MAX_RUN, all_below, longest_run
from sudokupool.storage.local import LocalStore
from tests.factories import write_export
from tests.helpers import wait_until
from tests.hostile_packs import CRAFTS, craft, read, set_body, write
from tests.servers import run_server

pytestmark = pytest.mark.anyio

EXPORT = "pool-20260101T000000Z.ndjson.gz"
#: Each craft refused when the pack is loaded, and the section the refusal names.
REFUSED_AT_LOAD = {
    "full-id-table": "section table: no free slot",
    "1-gib-body": "section checks: a body inflates to more than SUDOKUPOOL_MAX_RECORD_BYTES",
    "1-gib-body-small-length": "section offsets: a body is longer than deflate makes of its recorded length",
    "bad-solution": "section solutions: a solution is not 81 digits 1-9",
    "out-of-range-lists": "section by_difficulty: an index of level 1 is past the last record",
    "bad-grid": "section puzzles: a grid is not 81 characters of 1-9 and '.'",
    "out-of-range-choices": "section choices: a record number is past the last record",
    "bad-stars": "section stars: a value above 5",
}


@pytest.fixture(scope="module")
def good_pack(tmp_path_factory: pytest.TempPathFactory, records: list[dict[str, Any]]) -> Path:
    directory = tmp_path_factory.mktemp("good")
    write_export(directory / EXPORT, records)
    import asyncio

    path, _ = asyncio.run(write_pack(directory / EXPORT))
    return path


def crafted(directory: Path, good_pack: Path, name: str) -> Path:
    """``directory`` with the good export and its pack rewritten by the craft ``name``; the pack's path."""
    shutil.copy(good_pack.with_name(EXPORT), directory / EXPORT)
    path = directory / good_pack.name
    shutil.copy(good_pack, path)
    craft(path, name)
    return path


def mapped(path: Path) -> Pool:
    export = path.with_name(EXPORT)
    return Pool.from_pack(map_file(path), PoolInfo("", EXPORT, export.stat().st_size, 0))


@pytest.mark.parametrize(("name", "reason"), [pytest.param(n, r, id=n) for n, r in REFUSED_AT_LOAD.items()])
async def test_a_crafted_pack_is_refused_with_one_line_and_the_export_is_parsed(
    tmp_path: Path, good_pack: Path, name: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    crafted(tmp_path, good_pack, name)
    store = LocalStore(tmp_path)
    export = (await store.list_exports(1)).latest
    assert export is not None and export.pack is not None
    with caplog.at_level(logging.WARNING):
        pool, report = await load_export(store, export, loaded_at=77)
    assert not report.packed
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.startswith(f"refused pack {tmp_path}/pool-20260101T000000Z.pack: {reason}")
    assert line.endswith("; loading the export instead")
    parsed, _ = await parse_export(store, export, loaded_at=77)
    assert [pool.body(i) for i in range(len(pool))] == [parsed.body(i) for i in range(len(parsed))]


def test_a_pack_read_apart_and_written_again_is_the_same_bytes(tmp_path: Path, good_pack: Path) -> None:
    """The crafts change only what they mean to: the layout, version and checksums are the writer's."""
    path = tmp_path / good_pack.name
    header, sections = read(good_pack)
    assert set(sections) == set(pack.SECTIONS)
    write(path, header, sections)
    assert path.read_bytes() == good_pack.read_bytes()
    assert mapped_at(path, good_pack).header.sections == header.sections


def mapped_at(path: Path, good_pack: Path) -> Pool:
    export = good_pack.with_name(EXPORT)
    return Pool.from_pack(map_file(path), PoolInfo("", EXPORT, export.stat().st_size, 0))


def test_the_structure_of_a_good_pack_passes_and_bounds_every_probe(good_pack: Path) -> None:
    pool = mapped(good_pack)
    assert pool.verify() is None
    _, sections = read(good_pack)
    assert 1 <= longest_run(bytes(sections["table"])) <= MAX_RUN
    assert pool.find("0000000000000") is None


def test_an_id_table_with_one_free_slot_ends_every_lookup(tmp_path: Path, good_pack: Path) -> None:
    path = tmp_path / good_pack.name
    shutil.copy(good_pack, path)
    header, sections = read(path)
    table = memoryview(sections["table"]).cast("I")
    free = [slot for slot in range(len(table)) if not table[slot]]
    for slot in free[1:]:
        table[slot] = 1
    table.release()
    write(path, header, sections)
    shutil.copy(good_pack.with_name(EXPORT), tmp_path / EXPORT)
    # 127 filled slots of 128: within the bound, and every lookup of an unknown id ends at the free one.
    pool = mapped(path)
    assert pool.find("0000000000000") is None
    assert pool.find("ZZZZZZZZZZZZZ") is None


def test_a_run_of_filled_slots_longer_than_a_pack_may_have_is_refused() -> None:
    table = bytearray(4 * 1024)
    table[4 : 4 * (MAX_RUN + 2)] = b"\x01\x00\x00\x00" * (MAX_RUN + 1)
    with pytest.raises(PackError, match="a run of filled slots longer than the 512"):
        longest_run(bytes(table))
    table[4 * (MAX_RUN + 1) : 4 * (MAX_RUN + 2)] = bytes(4)
    assert longest_run(bytes(table)) == MAX_RUN
    # Round from the last slot to the first: one run.
    wrapped = b"\x00\x01\x00\x00" * 3 + bytes(8) + b"\x00\x00\x00\x02" * 2
    assert longest_run(wrapped) == 5
    with pytest.raises(PackError, match="no free slot"):
        longest_run(b"\x01\x00\x00\x00" * 8)


@pytest.mark.parametrize("count", [0, 1, 2, 7, 8, 1000, 32769])
def test_all_below_agrees_with_max_at_every_bound(count: int) -> None:
    draw = random.Random(count)
    for top in (1, 2, 999_999, 1_000_000, 2**31, 2**32 - 1):
        values = array.array("I", (draw.randrange(top + 1) for _ in range(count)))
        if count:
            values[draw.randrange(count)] = top  # the largest value anywhere, also in the last (odd) place
        view = memoryview(values.tobytes()).cast("I")
        largest = max(values, default=-1)
        for limit in {1, top - 1, top, top + 1, 2**32} - {0}:
            assert all_below(view, limit) == (largest < limit), (top, limit)


def test_sections_that_overlap_are_refused(tmp_path: Path, good_pack: Path) -> None:
    path = tmp_path / good_pack.name
    data = bytearray(good_pack.read_bytes())
    header = pack.read_header(bytes(data), len(data))
    at = header.sections["etags"][0]
    sections = {**header.sections, "puzzles": (at, header.sections["puzzles"][1])}
    from dataclasses import replace

    data[: pack.HEADER_SIZE] = replace(header, sections=sections).to_bytes()
    path.write_bytes(data)
    with pytest.raises(PackError, match="sections overlap"):
        pack.read_header(bytes(data), len(data))


def test_a_body_that_inflates_past_its_recorded_length_is_never_sent(tmp_path: Path, good_pack: Path) -> None:
    # Within every bound at load: 16 MiB of spaces in 16 KB of deflate (zlib's best), recorded as 2,000 bytes.
    path = tmp_path / good_pack.name
    shutil.copy(good_pack, path)
    shutil.copy(good_pack.with_name(EXPORT), tmp_path / EXPORT)
    header, sections = read(path)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = compressor.compress(b" " * (16 << 20)) + compressor.flush(zlib.Z_SYNC_FLUSH)
    set_body(sections, 3, member, 2000, 0)
    write(path, header, sections)
    pool = mapped(path)
    tracemalloc.start()
    try:
        with pytest.raises(DamagedRecord):
            pool.gzip_body(3)
        with pytest.raises(DamagedRecord):
            pool.body(3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # inflated no further than the recorded length: not the 16 MiB the member holds
    assert pool.verify() == 3
    assert pool.body(2)  # the others are served


def test_foreign_json_passes_the_structure_but_is_never_sent(tmp_path: Path, good_pack: Path) -> None:
    pool = mapped(crafted(tmp_path, good_pack, "foreign-json"))
    with pytest.raises(DamagedRecord):
        pool.gzip_body(0)
    assert pool.verify() == 0


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in CRAFTS])
async def test_publish_check_of_its_own_pack_refuses_every_craft(tmp_path: Path, good_pack: Path, name: str) -> None:
    """``publish`` checks the pack it uploads without parsing the export again: structure and every body."""
    crafted(tmp_path, good_pack, name)
    problem = await pack_problem(tmp_path / good_pack.name, tmp_path / EXPORT, contents=False)
    reason = REFUSED_AT_LOAD.get(name, "puzzle 0's body is not the record the pack says it is")
    assert problem is not None and problem.startswith(reason)


async def test_publish_check_of_its_own_pack_passes_a_good_one(good_pack: Path) -> None:
    assert await pack_problem(good_pack, good_pack.with_name(EXPORT), contents=False) is None


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in CRAFTS])
def test_check_names_what_is_wrong_with_a_crafted_pack(
    tmp_path: Path, good_pack: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    crafted(tmp_path, good_pack, name)
    assert main(["check", str(tmp_path / EXPORT)]) == 1
    out = capsys.readouterr().out
    reason = REFUSED_AT_LOAD.get(name, "puzzle 0's body is not the record the pack says it is")
    assert f"pack pool-20260101T000000Z.pack: {reason}" in out


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in CRAFTS])
def test_the_service_serves_the_exports_records_beside_a_crafted_pack(
    tmp_path: Path, good_pack: Path, records: list[dict[str, Any]], name: str
) -> None:
    crafted(tmp_path, good_pack, name)
    env = {"SUDOKUPOOL_EXPORTS": str(tmp_path), "SUDOKUPOOL_LIMIT_ANONYMOUS": "100000"}
    with run_server(env, tmp_path / "server.log") as server, httpx.Client(base_url=server.url) as client:
        # At once: within the client's timeout, where a lookup that never ends would have run out.
        missing = client.get("/api/v2/puzzles/0000000000000", timeout=5)
        assert missing.status_code == 404
        assert missing.json() == {"error": "no puzzle has that id"}
        # Every record as the export has it, in both encodings (a crafted body is refused before it is
        # sent; the pack with it is refused in the background and the export served instead).
        answers: list[httpx.Response] = []

        def every_record_served() -> bool:
            answers[:] = [client.get(f"/api/v2/puzzles/{r['canonical_id']}") for r in records]
            return all(a.status_code == 200 for a in answers)

        wait_until(every_record_served, "every record answered 200", seconds=30, log=server.output)
        for record, answer in zip(records, answers, strict=True):
            assert answer.status_code == 200
            body = answer.json()
            assert body["puzzle"] == record["puzzle"]
            assert body["solve_path"] == record["solve_path"]
            solution = client.get(f"/api/v2/puzzles/{record['canonical_id']}/solution")
            assert solution.json()["solution"] == record["solution"]
        identity = client.get(f"/api/v2/puzzles/{records[0]['canonical_id']}", headers={"Accept-Encoding": ""})
        assert identity.json()["canonical_id"] == records[0]["canonical_id"]
        assert client.get("/api/v2/stats").json()["total"] == len(records)
    output = server.output()
    assert "Traceback" not in output
    assert output.count("refused pack") == 1
    assert f"refused pack {tmp_path}/pool-20260101T000000Z.pack: " in output


@pytest.mark.slow
@pytest.mark.parametrize(
    "how",
    [
        pytest.param("truncate", id="truncated-to-4k"),
        pytest.param("overwrite", id="written-in-place"),
    ],
)
def test_a_pack_changed_under_the_service_faults_nothing(
    tmp_path: Path, good_pack: Path, records: list[dict[str, Any]], how: str
) -> None:
    shutil.copy(good_pack.with_name(EXPORT), tmp_path / EXPORT)
    path = tmp_path / good_pack.name
    shutil.copy(good_pack, path)
    env = {"SUDOKUPOOL_EXPORTS": str(tmp_path), "SUDOKUPOOL_LIMIT_ANONYMOUS": "100000"}
    with run_server(env, tmp_path / "server.log") as server, httpx.Client(base_url=server.url) as client:
        assert client.get(f"/api/v2/puzzles/{records[0]['canonical_id']}").status_code == 200
        if how == "truncate":
            os.truncate(path, 4096)
        else:  # as `cp other.pack pool-X.pack` and `rsync --inplace` do: the same file, other bytes
            with path.open("r+b") as file:
                file.write(bytes(path.stat().st_size))
        for record in records:
            for encoding in ("gzip", ""):
                answer = client.get(f"/api/v2/puzzles/{record['canonical_id']}", headers={"Accept-Encoding": encoding})
                assert answer.status_code == 200
                assert answer.json()["puzzle"] == record["puzzle"]
        assert client.get("/api/v2/puzzles/random").status_code == 200
        assert server.process.poll() is None
    assert "Traceback" not in server.output()


def swap_lists(path: Path) -> None:
    """The first entries of the first two difficulty lists trade places: every index still names a record."""
    header, sections = read(path)
    lists = memoryview(sections["by_difficulty"]).cast("I")
    first, second = 0, header.counts[0]
    lists[first], lists[second] = lists[second], lists[first]
    lists.release()
    write(path, header, sections)


def swap_table(path: Path) -> None:
    """Two filled slots of the id table with a free slot between them trade their records: every entry still
    names a record, and a lookup of the first one's id stops at the free slot before it reaches it. (Two slots
    of one run of filled slots could trade and still be found, as the table's key, drawn anew for every pack,
    would have it.)"""
    header, sections = read(path)
    table = memoryview(sections["table"]).cast("I")
    filled = [slot for slot in range(len(table)) if table[slot]]
    one = filled[0]
    two = next(slot for slot in filled if not all(table[one:slot]))
    table[one], table[two] = table[two], table[one]
    table.release()
    write(path, header, sections)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        pytest.param(swap_lists, "its list of Easy puzzles differs from the export's", id="difficulty-lists"),
        pytest.param(swap_table, "the id index does not find", id="id-table"),
    ],
)
def test_check_finds_index_entries_that_the_structure_allows(
    tmp_path: Path, good_pack: Path, change: Any, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(good_pack.with_name(EXPORT), tmp_path / EXPORT)
    path = tmp_path / good_pack.name
    shutil.copy(good_pack, path)
    change(path)
    mapped(path)  # within the structure: served
    assert main(["check", str(tmp_path / EXPORT)]) == 1
    assert problem in capsys.readouterr().out
