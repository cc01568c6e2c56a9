from __future__ import annotations

import gzip
import zlib
from collections import Counter
from typing import Any

import orjson

from sudokupool.pool.export import PUBLIC_FIELD_NAMES, Record, parse_record, record_line
from sudokupool.pool.pool import Pool, PoolBuilder
from tests.factories import build_pool


def test_body_is_the_public_record_with_the_pools_synced_at(pool: Pool, records: list[dict[str, Any]]) -> None:
    record = records[3]
    index = pool.find(record["canonical_id"])
    assert index == 3
    body = orjson.loads(pool.body(index))
    assert list(body) == list(PUBLIC_FIELD_NAMES)
    assert "solution" not in body
    assert body == {**{k: record[k] for k in PUBLIC_FIELD_NAMES}, "synced_at": pool.info.synced_at}


def test_record_bodies_are_held_as_gzip_members_of_the_identity_body(pool: Pool, records: list[dict[str, Any]]) -> None:
    for index, record in enumerate(records):
        member = pool.gzip_body(index)
        assert member[:2] == b"\x1f\x8b"
        body = pool.body(index)
        # Python's own gzip reads the member back byte for byte: what a client decodes is the body.
        assert gzip.decompress(member) == body
        assert orjson.loads(body)["canonical_id"] == record["canonical_id"]
        assert pool.body_length(index) == len(body)
        assert len(member) < 0.6 * len(body)


def test_solution_body_and_grids(pool: Pool, records: list[dict[str, Any]]) -> None:
    for index, record in enumerate(records):
        assert orjson.loads(pool.solution_body(index)) == {
            "canonical_id": record["canonical_id"],
            "solution": record["solution"],
        }
        assert pool.puzzle(index) == record["puzzle"]
        assert pool.solution(index) == record["solution"]


def test_find_is_case_insensitive_and_reads_crockford_aliases(pool: Pool, records: list[dict[str, Any]]) -> None:
    code = records[0]["canonical_id"]
    assert pool.find(code.lower()) == 0
    aliased = code.replace("1", "l").replace("0", "o")
    assert pool.find(aliased) == 0


def test_find_rejects_odd_ids(pool: Pool) -> None:
    for odd in ["", "../../etc/passwd", "x" * 10_000, "ÄÖÜ" * 5, "0123456789ABC"]:
        assert pool.find(odd) is None


def test_etags_are_weak_and_follow_the_body(pool: Pool) -> None:
    etag = pool.etag(0)
    body, solution = pool.body(0), pool.solution_body(0)
    assert etag == f'W/"{zlib.crc32(body):08x}{len(body):08x}"'
    assert pool.etag(0, solution=True) == f'W/"{zlib.crc32(solution):08x}{zlib.adler32(solution):08x}"'
    assert len({pool.etag(i) for i in range(len(pool))}) == len(pool)


def test_etags_change_with_synced_at(records: list[dict[str, Any]]) -> None:
    assert build_pool(records, loaded_at=1).etag(0) != build_pool(records, loaded_at=2).etag(0)


def test_pick_by_difficulty_only_returns_that_difficulty(pool: Pool, records: list[dict[str, Any]]) -> None:
    counts = Counter(r["difficulty"] for r in records)
    for difficulty, count in counts.items():
        picks = {pool.pick(difficulty) for _ in range(300)}
        assert {records[i]["difficulty"] for i in picks if i is not None} == {difficulty}
        assert pool.count(difficulty) == count


def test_pick_without_difficulty_covers_the_pool(pool: Pool) -> None:
    picks = Counter(pool.pick() for _ in range(4000))
    assert set(picks) == set(range(len(pool)))


def test_pick_in_an_empty_difficulty_is_none(records: list[dict[str, Any]]) -> None:
    pool = build_pool([r for r in records if r["difficulty"] != "Medium"])
    assert pool.pick("Medium") is None


def test_stats_body(pool: Pool, records: list[dict[str, Any]]) -> None:
    stats = orjson.loads(pool.stats_body)
    counts = Counter(r["difficulty"] for r in records)
    assert stats == {
        "total": len(records),
        "by_difficulty": {name: counts.get(name, 0) for name in ("Easy", "Medium", "Hard", "Expert")},
        "last_synced_at": pool.info.synced_at,
    }


def test_repr_stays_short_whatever_the_pool_holds(pool: Pool) -> None:
    # asyncio reprs a finished task's result; a repr spelling out the bodies cost a full copy of the pool.
    assert len(repr(pool)) < 100


def _row(record: dict[str, Any]) -> Record:
    """A record as the loader gives it to PoolBuilder.add."""
    return parse_record(record_line(record))


def test_a_repeated_id_is_skipped(records: list[dict[str, Any]]) -> None:
    # Position 5 repeats 1, position 8 repeats 0.
    rows = [*records[:6], records[1], *records[6:8], records[0], *records[8:12]]
    builder = PoolBuilder(loaded_at=7)
    assert [builder.add(_row(r)) for r in rows] == [n not in (6, 9) for n in range(len(rows))]
    one = builder.build(source="t", export_key="k", export_size=0)
    assert len(one) == 12
    assert [one.find(r["canonical_id"]) for r in records[:12]] == list(range(12))
    assert [orjson.loads(one.body(i))["canonical_id"] for i in range(12)] == [r["canonical_id"] for r in records[:12]]


def test_a_pack_holds_no_record_body_raw(records: list[dict[str, Any]]) -> None:
    builder = PoolBuilder(loaded_at=7)
    for record in records[:5]:
        builder.add(_row(record))
    pool = builder.build(source="t", export_key="k", export_size=0)
    builder.file.seek(0)
    data = builder.file.read()
    bodies, solutions = (
        data[at : at + length] for at, length in map(pool.header.sections.get, ("bodies", "solutions"))
    )
    for record in records[:5]:
        assert record["puzzle"].encode() not in bodies
        assert record["solution"].encode() in solutions
    assert pool.header.sections["etags"][1] == 8 * 5  # the solutions' ETags; a record's is its gzip trailer


def test_duplicates_keep_no_bytes(records: list[dict[str, Any]]) -> None:
    # One record repeated through a 4 GB export kept every repeat's prepared body: 4.26 GB for one puzzle.
    builder = PoolBuilder(loaded_at=7)
    assert [builder.add(_row(r)) for r in records[:3]] == [True] * 3
    assert [builder.add(_row(r)) for r in records[:3]] == [False] * 3
    added = [builder.add(_row(r)) for r in [records[1], records[3], records[0], records[4], records[3]]]
    assert added == [False, True, False, True, False]
    pool = builder.build(source="tests", export_key="k", export_size=0)
    clean = PoolBuilder(loaded_at=7)
    for record in records[:5]:
        clean.add(_row(record))
    expected = clean.build(source="tests", export_key="k", export_size=0)
    assert len(pool) == 5
    # Nothing of a duplicate is written to the pack: the same bytes as the pool without them.
    assert len(pool.header.sections["bodies"]) == 2
    assert pool.header.sections["bodies"][1] == expected.header.sections["bodies"][1]
    assert len(pool._data) == len(expected._data)
    for index in range(5):
        assert pool.body(index) == expected.body(index)
        assert pool.solution_body(index) == expected.solution_body(index)
        assert pool.etag(index) == expected.etag(index)
        assert pool.etag(index, solution=True) == expected.etag(index, solution=True)
        assert pool.puzzle(index) == expected.puzzle(index)
        assert pool.find(records[index]["canonical_id"]) == index
    assert pool.count(records[3]["difficulty"]) == expected.count(records[3]["difficulty"])
