"""Choosing a puzzle: random's filters, the technique catalogue and the puzzle of the day.

Expectations are derived from the pool's own records (their stars, scores and techniques as the grader gave
them), never from particular values.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest

from sudokupool.app import create_app
from sudokupool.config import Settings
from sudokupool.pool import pack
from sudokupool.pool.choose import Filters
from sudokupool.pool.pool import Pool
from sudokupool.pool.validate import validate
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.symmetry import SYMMETRIES
from sudokupool.sudoku.technique_table import LEVEL, SCORES
from tests.factories import build_pool, make_records, write_export
from tests.servers import run_server

pytestmark = pytest.mark.anyio

PREFIXES = ["/api/v2", "/api/v1", "/api"]
DAY = 86_400
#: 2026-11-20 00:00:00 UTC.
MIDNIGHT = int(datetime(2026, 11, 20, tzinfo=UTC).timestamp())


def matches(record: dict[str, Any], query: dict[str, Any]) -> bool:
    """Whether ``record`` passes random's filters in ``query`` (the API's parameters)."""
    if "difficulty" in query and record["difficulty"].lower() != query["difficulty"].lower():
        return False
    if "technique" in query and query["technique"].lower() not in {t.lower() for t in record["techniques"]}:
        return False
    if "stars" in query and record["stars"] != int(query["stars"]):
        return False
    score = record["score"]
    if "min_score" in query and (score is None or score < int(query["min_score"])):
        return False
    if "min_clues" in query and record["clue_count"] < int(query["min_clues"]):
        return False
    if "max_clues" in query and record["clue_count"] > int(query["max_clues"]):
        return False
    if "symmetry" in query and record["symmetry"] != query["symmetry"].lower():
        return False
    return not ("max_score" in query and (score is None or score > int(query["max_score"])))


def clue_queries(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Clue ranges and symmetries over ``records``' own values, alone and with the other filters."""
    clues = sorted(r["clue_count"] for r in records)
    low, middle, high = clues[len(clues) // 4], clues[len(clues) // 2], clues[3 * len(clues) // 4]
    symmetries = sorted({r["symmetry"] for r in records})
    found: list[dict[str, Any]] = []
    for base in queries(records)[::5]:
        found += [
            {**base, "min_clues": low},
            {**base, "max_clues": middle},
            {**base, "min_clues": low, "max_clues": high},
            {**base, "min_clues": middle, "max_clues": middle},
        ]
        found += [{**base, "symmetry": s, "min_clues": low} for s in symmetries]
    found += [{"symmetry": s} for s in symmetries]
    return found


def filters_of(query: dict[str, Any]) -> Filters:
    """``query``'s filters as the API parses them."""
    levels = {name.lower(): level for level, name in enumerate(DIFFICULTIES, 1)}
    return Filters(
        levels[query["difficulty"]] if "difficulty" in query else None,
        query.get("stars"),
        query["technique"].lower() if "technique" in query else None,
        query.get("min_score"),
        query.get("max_score"),
        query.get("min_clues"),
        query.get("max_clues"),
        SYMMETRIES.index(query["symmetry"]) if "symmetry" in query else None,
    )


def queries(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Filter combinations over ``records``' own values: each difficulty with and without each filter."""
    techniques = sorted({t for r in records for t in r["techniques"]})
    scores = sorted(r["score"] for r in records)
    stars = sorted({r["stars"] for r in records})
    low, middle, high = scores[len(scores) // 4], scores[len(scores) // 2], scores[3 * len(scores) // 4]
    found: list[dict[str, Any]] = []
    for difficulty in [None, *(name.lower() for name in DIFFICULTIES)]:
        base = {} if difficulty is None else {"difficulty": difficulty}
        found += [{**base, "technique": t} for t in techniques]
        found += [{**base, "stars": s} for s in stars]
        found += [
            {**base, "min_score": low},
            {**base, "max_score": middle},
            {**base, "min_score": low, "max_score": high},
        ]
        found += [{**base, "technique": techniques[len(techniques) // 2], "stars": s, "min_score": low} for s in stars]
        found += [{**base, "min_score": middle, "max_score": middle}]
    return found


# Random's filters


def test_each_combination_counts_exactly_the_matching_records(pool: Pool, records: list[dict[str, Any]]) -> None:
    levels = {name.lower(): level for level, name in enumerate(DIFFICULTIES, 1)}
    for query in queries(records):
        technique = query["technique"].lower() if "technique" in query else None
        level = levels[query["difficulty"]] if "difficulty" in query else None
        filters = Filters(level, query.get("stars"), technique, query.get("min_score"), query.get("max_score"))
        expected = sorted(i for i, r in enumerate(records) if matches(r, query))
        assert pool.choices.count(filters) == len(expected), query
        plan = pool.choices.plan(filters)
        assert sorted(n for part in plan.parts for n in part) == expected, query


@pytest.fixture(scope="module")
def mixed_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The session's records (all rotational-180) and some of three other symmetries."""
    return [
        *records,
        *make_records(4, start=500, symmetry="none"),
        *make_records(4, start=600, symmetry="mirror-vertical"),
        *make_records(3, start=700, symmetry="diagonal-main"),
    ]


@pytest.fixture(scope="module")
def mixed_pool(mixed_records: list[dict[str, Any]]) -> Pool:
    return build_pool(mixed_records)


def test_clue_and_symmetry_combinations_count_exactly_the_matching_records(
    mixed_pool: Pool, mixed_records: list[dict[str, Any]]
) -> None:
    pool, records = mixed_pool, mixed_records
    asked = clue_queries(records)
    assert len({r["symmetry"] for r in records}) > 1 and len({r["clue_count"] for r in records}) > 3
    for query in asked:
        expected = sorted(i for i, r in enumerate(records) if matches(r, query))
        plan = pool.choices.plan(filters_of(query))
        assert plan.total == len(expected), query
        assert sorted(n for part in plan.parts for n in part) == expected, query
    # Most of them match something, and some match neither everything nor nothing.
    sizes = [pool.choices.count(filters_of(query)) for query in asked]
    assert sum(0 < size < len(records) for size in sizes) > len(asked) // 4


def test_a_deal_pages_through_every_match_exactly_once(mixed_pool: Pool, mixed_records: list[dict[str, Any]]) -> None:
    pool, records = mixed_pool, mixed_records
    for query in [{}, *clue_queries(records)[::9]]:
        filters = filters_of(query)
        expected = sorted(i for i, r in enumerate(records) if matches(r, query))
        seen: list[int] = []
        offset = 0
        while True:
            dealt, total = pool.deal(filters, 1234, offset, 3)
            assert total == len(expected)
            seen += dealt
            offset += len(dealt)
            if len(dealt) < 3 or offset >= total:
                break
        assert sorted(seen) == expected, query
        assert pool.deal(filters, 1234, 0, 50)[0] == seen[:50]
        assert pool.deal(filters, 1234, len(expected), 5)[0] == []


def test_seeds_order_the_matches_differently(pool: Pool) -> None:
    orders = {tuple(pool.deal(Filters(), seed, 0, 40)[0]) for seed in range(20)}

    assert len(orders) == 20
    assert all(sorted(order) == list(range(40)) for order in orders)


@pytest.mark.parametrize("prefix", PREFIXES)
async def test_every_pick_matches_its_filters(
    client: httpx.AsyncClient, records: list[dict[str, Any]], prefix: str
) -> None:
    by_id = {r["canonical_id"]: r for r in records}
    # /api/v2 is rate-limited (60 a minute without a key): a sample there, every combination elsewhere.
    for query in queries(records)[:: 7 if prefix == "/api/v2" else 1]:
        response = await client.get(f"{prefix}/puzzles/random", params=query)
        if not any(matches(r, query) for r in records):
            assert response.status_code == 404, query
            assert response.json()["error"].startswith("no puzzle matches ")
            continue
        assert response.status_code == 200, (query, response.text)
        assert response.headers["cache-control"] == "no-store"
        body = response.json()
        assert matches(by_id[body["canonical_id"]], query), query


async def test_filters_take_any_case_and_spaces_as_plus_or_percent(
    client: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    name = max((t for r in records for t in r["techniques"] if " " in t), key=len)
    for spelt in [name.replace(" ", "+"), quote(name), quote(name.upper()), name.lower().replace(" ", "%20")]:
        response = await client.get(f"/api/v2/puzzles/random?technique={spelt}")
        assert response.status_code == 200, spelt
        assert name in response.json()["techniques"]


async def test_other_query_parameters_are_not_filters(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/puzzles/random?page=2&format=json")
    assert response.status_code == 200


async def test_the_first_value_of_a_repeated_filter_counts(
    client: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    stars = Counter(r["stars"] for r in records).most_common(1)[0][0]
    for _ in range(10):
        response = await client.get(f"/api/v2/puzzles/random?stars={stars}&stars=9")
        assert response.status_code == 200
        assert response.json()["stars"] == stars


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("technique=X-Wingz", "unknown technique 'X-Wingz': the names are listed at /api/v2/techniques"),
        ("technique=", "unknown technique '': the names are listed at /api/v2/techniques"),
        ("stars=0", "stars must be an integer from 1 to 5"),
        ("stars=6", "stars must be an integer from 1 to 5"),
        ("stars=3.0", "stars must be an integer from 1 to 5"),
        ("stars=", "stars must be an integer from 1 to 5"),
        ("stars=%EF%BC%93", "stars must be an integer from 1 to 5"),  # a full-width 3
        ("min_score=ten", "min_score must be an integer of at most 15 digits"),
        ("max_score=1e3", "max_score must be an integer of at most 15 digits"),
        ("min_score=1_000", "min_score must be an integer of at most 15 digits"),
        ("min_score=1234567890123456", "min_score must be an integer of at most 15 digits"),
        ("max_score=+5", "max_score must be an integer of at most 15 digits"),
        ("min_score=500&max_score=499", "min_score must not be above max_score"),
        ("difficulty=hardest&stars=3", "difficulty must be one of easy, medium, hard, expert"),
    ],
)
@pytest.mark.parametrize("prefix", PREFIXES)
async def test_a_bad_filter_is_a_400_saying_why(
    client: httpx.AsyncClient, prefix: str, query: str, message: str
) -> None:
    response = await client.get(f"{prefix}/puzzles/random?{query}")
    assert response.status_code == 400
    assert response.json() == {"error": message}
    assert response.headers["content-type"] == "application/json"


async def test_nothing_matching_is_a_404_naming_the_filters(
    client: httpx.AsyncClient, records: list[dict[str, Any]]
) -> None:
    top = max(r["score"] for r in records)
    technique = next(t for t in SCORES if not any(t in r["techniques"] for r in records))
    cases = {
        f"min_score={top + 1}": f"no puzzle matches min_score={top + 1}",
        f"difficulty=EASY&technique={technique.lower()}": f"no puzzle matches difficulty=EASY, technique={technique}",
        "max_score=-1&stars=2": "no puzzle matches stars=2, max_score=-1",
    }
    for query, message in cases.items():
        response = await client.get(f"/api/v2/puzzles/random?{query}")
        assert response.status_code == 404, query
        assert response.json() == {"error": message}


async def test_picks_are_uniform_over_the_matches(records: list[dict[str, Any]]) -> None:
    """Chi-square over the matches of one filter (a fixed seed: the test cannot flake), and every match seen."""
    pool = build_pool(records)
    pool.choices._rng.seed(34)
    counts = Counter(t for r in records for t in r["techniques"])
    technique = min(counts, key=lambda name: abs(counts[name] - 15))
    query = {
        "technique": technique,
        "min_score": sorted(r["score"] for r in records if technique in r["techniques"])[1],
    }
    expected = {r["canonical_id"] for r in records if matches(r, query)}
    assert 5 <= len(expected) < len(records)
    app = create_app(Settings(), pool=pool)
    draws = 100 * len(expected)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
        seen: Counter[str] = Counter()
        for _ in range(draws):
            seen[(await client.get("/api/v1/puzzles/random", params=query)).json()["canonical_id"]] += 1
    assert set(seen) == expected
    chi_square = sum((count - 100) ** 2 / 100 for count in seen.values())
    # The 99.9th percentile of chi-square with k - 1 degrees of freedom is below k - 1 + 3.1 * sqrt(2 (k - 1)) + 6.
    freedom = len(expected) - 1
    assert chi_square < freedom + 3.1 * math.sqrt(2 * freedom) + 6


# The catalogue


@pytest.mark.parametrize("prefix", ["/api/v2", "/api/v1"])
async def test_the_catalogue_lists_every_technique_with_the_pools_counts(
    client: httpx.AsyncClient, records: list[dict[str, Any]], prefix: str
) -> None:
    response = await client.get(f"{prefix}/techniques")
    assert response.status_code == 200
    used = Counter(t for r in records for t in r["techniques"])
    assert response.json() == {
        "techniques": [
            {"name": name, "difficulty": DIFFICULTIES[LEVEL[name] - 1], "score": score, "puzzles": used[name]}
            for name, score in SCORES.items()
        ]
    }
    assert response.headers["cache-control"] == "public, max-age=3600"
    etag = response.headers["etag"]
    again = await client.get(f"{prefix}/techniques", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""


async def test_the_catalogues_etag_changes_with_the_export(records: list[dict[str, Any]]) -> None:
    tags = []
    for chosen in (records, records[:20], records[:20]):
        app = create_app(Settings(), pool=build_pool(chosen))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            tags.append((await client.get("/api/v2/techniques")).headers["etag"])
    assert tags[0] != tags[1] == tags[2]


async def test_the_catalogue_is_not_served_unversioned(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/techniques")).status_code == 404


# The puzzle of the day


def scheduled(records: list[dict[str, Any]], days: dict[int, list[int]]) -> list[dict[str, Any]]:
    """``records`` with ``used_at`` set: record ``i`` at each (day offset from MIDNIGHT -> indexes) entry,
    the later indexes of a day later in it."""
    chosen = [dict(r) for r in records]
    for offset, indexes in days.items():
        for k, i in enumerate(indexes):
            chosen[i]["used_at"] = MIDNIGHT + offset * DAY + 3600 * (len(indexes) - k)
    return chosen


async def test_a_scheduled_record_is_its_days_puzzle(client_at: Any, records: list[dict[str, Any]]) -> None:
    easy = [i for i, r in enumerate(records) if r["difficulty"] == "Easy"]
    hard = [i for i, r in enumerate(records) if r["difficulty"] in ("Hard", "Expert")]
    # Day 0: a hard record at 03:00 and an easy one at 02:00 (the earliest is the day's); day -3: one easy.
    chosen = scheduled(records, {0: [hard[0], easy[0]], -3: [easy[1]]})
    pool = build_pool(chosen)
    client = client_at(MIDNIGHT + 600, pool)
    ids = [r["canonical_id"] for r in chosen]
    today = (await client.get("/api/v2/puzzles/daily")).json()
    assert today["canonical_id"] == ids[easy[0]]
    assert today["used_at"] == chosen[easy[0]]["used_at"]
    level = chosen[hard[0]]["difficulty"].lower()
    assert (await client.get(f"/api/v2/puzzles/daily?difficulty={level}")).json()["canonical_id"] == ids[hard[0]]
    past = (await client.get("/api/v2/puzzles/daily?date=2026-11-17")).json()
    assert past["canonical_id"] == ids[easy[1]]
    # A day nothing scheduled: never a scheduled record (the pool has plenty of others).
    for offset in range(-10, 2):
        day = (date(2026, 11, 20) + timedelta(days=offset)).isoformat()
        if offset in (0, -3):
            continue
        for difficulty in ["", *DIFFICULTIES]:
            query = {"date": day, **({"difficulty": difficulty} if difficulty else {})}
            response = await client.get("/api/v1/puzzles/daily", params=query)
            assert response.status_code == 200
            body = response.json()
            assert body["used_at"] is None, (day, difficulty)
            if difficulty:
                assert body["difficulty"] == difficulty


async def test_every_day_has_a_puzzle_and_they_vary(client_at: Any, records: list[dict[str, Any]]) -> None:
    client = client_at(MIDNIGHT + 1, None)
    picks = []
    for offset in range(-29, 1):
        day = (date(2026, 11, 20) + timedelta(days=offset)).isoformat()
        picks.append((await client.get(f"/api/v1/puzzles/daily?date={day}")).json()["canonical_id"])
    # 30 hashed picks out of 40 puzzles: far from one puzzle every day.
    assert len(set(picks)) > 10


async def test_two_pools_of_one_export_agree(client_at: Any, records: list[dict[str, Any]]) -> None:
    """Two packs of one export (each with its own random id-table key) pick the same puzzle every day."""
    first, second = client_at(MIDNIGHT, build_pool(records)), client_at(MIDNIGHT, build_pool(records))
    for offset, difficulty in itertools.product(range(-5, 2), ["", "easy", "expert"]):
        day = (date(2026, 11, 20) + timedelta(days=offset)).isoformat()
        url = f"/api/v1/puzzles/daily?{urlencode({'date': day, **({'difficulty': difficulty} if difficulty else {})})}"
        one, two = await first.get(url), await second.get(url)
        assert one.status_code == two.status_code == 200
        assert one.json()["canonical_id"] == two.json()["canonical_id"]


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("date=2026-02-30", 400, "date must be a calendar date as YYYY-MM-DD"),
        ("date=2026-11-1", 400, "date must be a calendar date as YYYY-MM-DD"),
        ("date=20261120", 400, "date must be a calendar date as YYYY-MM-DD"),
        ("date=2026-11-20T00:00", 400, "date must be a calendar date as YYYY-MM-DD"),
        ("date=", 400, "date must be a calendar date as YYYY-MM-DD"),
        ("difficulty=hardest", 400, "difficulty must be one of easy, medium, hard, expert"),
        (
            "date=2026-11-22",
            404,
            "no puzzle of the day for 2026-11-22 yet: dates up to one day after today (UTC) are served",
        ),
    ],
)
async def test_daily_parameters(client_at: Any, query: str, status: int, message: str) -> None:
    client = client_at(MIDNIGHT + DAY - 1, None)
    response = await client.get(f"/api/v2/puzzles/daily?{query}")
    assert response.status_code == status
    assert response.json() == {"error": message}


@pytest.mark.parametrize("prefix", PREFIXES)
async def test_daily_is_cached_until_its_day_ends(client_at: Any, prefix: str) -> None:
    late = client_at(MIDNIGHT - 30, None)
    early = client_at(MIDNIGHT, None)
    url = f"{prefix}/puzzles/daily"
    before = await late.get(url)
    assert before.headers["cache-control"] == "public, max-age=30"
    tomorrow = await late.get(f"{url}?date=2026-11-20")
    assert tomorrow.headers["cache-control"] == f"public, max-age={30 + DAY}"
    after = await early.get(url)
    assert after.headers["cache-control"] == f"public, max-age={DAY}"
    # At midnight the default date moves on: the day that began is the one that was served as tomorrow.
    assert after.json()["canonical_id"] == tomorrow.json()["canonical_id"]
    yesterday = await early.get(f"{url}?date=2026-11-19")
    assert yesterday.json()["canonical_id"] == before.json()["canonical_id"]
    assert yesterday.headers["cache-control"] == "public, max-age=86400"
    assert after.headers["vary"] == "Accept-Encoding"
    revalidated = await early.get(url, headers={"If-None-Match": after.headers["etag"]})
    assert revalidated.status_code == 304
    assert revalidated.headers["cache-control"] == f"public, max-age={DAY}"
    assert revalidated.content == b""


async def test_daily_of_an_empty_difficulty_is_a_404(client_at: Any, records: list[dict[str, Any]]) -> None:
    client = client_at(MIDNIGHT, build_pool([r for r in records if r["difficulty"] != "Easy"]))
    response = await client.get("/api/v2/puzzles/daily?difficulty=easy")
    assert response.status_code == 404
    assert response.json() == {"error": "no Easy puzzle in the pool"}


async def test_daily_counts_as_a_play(client: httpx.AsyncClient) -> None:
    await client.get("/api/v2/puzzles/daily")
    assert (await client.get("/api/v2/stats/activity")).json()["plays"]["daily"] == 1


async def test_new_paths_are_rate_limited_on_v2_only(client: httpx.AsyncClient) -> None:
    for path in ["/puzzles/daily", "/techniques", "/puzzles/random?stars=3"]:
        assert "x-ratelimit-limit" in (await client.get(f"/api/v2{path}")).headers
        assert "x-ratelimit-limit" not in (await client.get(f"/api/v1{path}")).headers


# The pack's filter sections


def test_the_filter_sections_are_checked(records: list[dict[str, Any]]) -> None:
    pool = build_pool(scheduled(records, {0: [0, 1], 1: [2]}))
    data = bytes(pool._data[:])
    header = pool.header

    def validated(changed: bytes) -> int:
        return validate(memoryview(changed), header, max_record_bytes=Settings.max_record_bytes)

    validated(data)
    offset, _ = header.sections["stars"]
    bad = bytearray(data)
    bad[offset] = 6
    with pytest.raises(pack.PackError, match="section stars: a value above 5"):
        validated(bytes(bad))
    offset, _ = header.sections["choices"]
    bad = bytearray(data)
    bad[offset] += 1
    with pytest.raises(pack.PackError, match="lengths do not add up"):
        validated(bytes(bad))
    offset, length = header.sections["choices"]
    bad = bytearray(data)
    bad[offset + length - 4 : offset + length] = len(pool).to_bytes(4, "little")
    with pytest.raises(pack.PackError, match="section choices: a record number is past the last record"):
        validated(bytes(bad))
    offset, length = header.sections["schedule"]
    assert length == 4 * (4 + 3)  # four lengths, three records scheduled
    bad = bytearray(data)
    bad[offset + length - 4 : offset + length] = b"\xff" * 4
    with pytest.raises(pack.PackError, match="section schedule: a record number is past the last record"):
        validated(bytes(bad))
    for section, value, message in (
        ("clues", 82, "section clues: a clue count above 81"),
        ("symmetries", 10, "section symmetries: a symmetry code of 10 or more"),
    ):
        offset, _ = header.sections[section]
        bad = bytearray(data)
        bad[offset + 3] = value
        with pytest.raises(pack.PackError, match=message):
            validated(bytes(bad))
    offset, length = header.sections["clue_choices"]
    bad = bytearray(data)
    bad[offset + length - 4 : offset + length] = len(pool).to_bytes(4, "little")
    with pytest.raises(pack.PackError, match="section clue_choices: a record number is past the last record"):
        validated(bytes(bad))
    bad = bytearray(data)
    bad[offset] += 1
    with pytest.raises(pack.PackError, match="section clue_choices's lengths do not add up"):
        validated(bytes(bad))
    offset, _ = header.sections["technique_table"]
    for damage in (b"\xff\xfe", b"\t\t", b"Fu"):
        bad = bytearray(data)
        at = data.index(b"\t", offset) + 1 if damage == b"Fu" else offset
        bad[at : at + len(damage)] = damage  # not UTF-8, an empty name, a level that is no number
        with pytest.raises(pack.PackError, match="technique table: a row is not"):
            validated(bytes(bad))


def test_a_record_number_out_of_range_is_refused_where_it_is_read(records: list[dict[str, Any]]) -> None:
    pool = build_pool(records)
    offset, _ = pool.header.sections["choices"]
    lists = (1 + len(pool.choices.names)) * pack.LISTS_PER_GROUP
    data = bytearray(pool._data[:])
    data[offset + 4 * lists : offset + 4 * lists + 4] = (len(records) + 5).to_bytes(4, "little")
    # Made without validation, which refuses such a pack when it is mapped (test_the_filter_sections_are_checked).
    damaged = Pool(data, pool.header, pool.info, probes=len(pool._probes))  # type: ignore[arg-type]  # bytes stand in for the mapping
    with pytest.raises(pack.PackError, match="out of range"):
        for _ in range(200):
            damaged.choose(Filters(min_score=-1))


# On the real server


@pytest.mark.slow
def test_two_servers_of_one_export_serve_the_same_daily_and_filter(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    """Two instances (two processes, each parsing the export into its own pack) agree on every day's puzzle."""
    exports = tmp_path / "exports"
    exports.mkdir()
    write_export(exports / "pool-20261120T000000Z.ndjson.gz", records)
    env = {"SUDOKUPOOL_EXPORTS": str(exports)}
    technique = Counter(t for r in records for t in r["techniques"]).most_common()[8][0]
    with run_server(env, tmp_path / "one.log") as one, run_server(env, tmp_path / "two.log") as two:
        today = datetime.now(UTC).date()
        for offset, difficulty in itertools.product(range(-3, 2), ["", "&difficulty=medium"]):
            url = f"/api/v2/puzzles/daily?date={(today + timedelta(days=offset)).isoformat()}{difficulty}"
            first, second = httpx.get(one.url + url), httpx.get(two.url + url)
            assert first.status_code == second.status_code == 200, first.text
            assert first.json()["canonical_id"] == second.json()["canonical_id"]
        response = httpx.get(f"{one.url}/api/puzzles/random", params={"technique": technique, "stars": 5})
        expected = [r for r in records if technique in r["techniques"] and r["stars"] == 5]
        assert response.status_code == (200 if expected else 404)
        if expected:
            assert response.json()["canonical_id"] in {r["canonical_id"] for r in expected}
        catalogue = httpx.get(f"{two.url}/api/v1/techniques").json()["techniques"]
        assert {t["name"]: t["puzzles"] for t in catalogue}[technique] == sum(
            technique in r["techniques"] for r in records
        )
        assert "Traceback" not in one.output() + two.output()


async def test_a_long_query_is_answered_but_not_kept(client: httpx.AsyncClient, records: list[dict[str, Any]]) -> None:
    """Parsed queries are memoized, but only short ones: a thousand long ones would hold megabytes."""
    from sudokupool.api import query

    stars = records[0]["stars"]
    query._kept_query.cache_clear()
    kept = 0
    for n in range(5):
        response = await client.get(f"/api/v1/puzzles/random?stars={stars}&pad{n}={'x' * 4000}")
        assert response.status_code == 200
        assert response.json()["stars"] == stars
    assert query._kept_query.cache_info().currsize == kept
    await client.get(f"/api/v1/puzzles/random?stars={stars}&short=1")
    assert query._kept_query.cache_info().currsize == kept + 1
