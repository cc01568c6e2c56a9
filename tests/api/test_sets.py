"""``/api/v2/puzzles?count=N``: sets of distinct puzzles in a seeded order, in process and on the real service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from sudokupool.api.sets import set_cost
from tests.factories import make_records, write_export
from tests.servers import run_server

pytestmark = pytest.mark.anyio


def ids(body: dict[str, Any]) -> list[str]:
    return [puzzle["canonical_id"] for puzzle in body["puzzles"]]


async def test_a_set_says_its_seed_offset_and_next_offset(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/puzzles", params={"count": 7, "seed": 99, "offset": 5})

    assert response.status_code == 200
    assert response.headers["cache-control"].startswith("public, max-age=")
    body = response.json()
    assert (body["seed"], body["offset"], body["next_offset"], body["total"]) == (99, 5, 12, 40)
    assert len(set(ids(body))) == 7
    assert all(len(puzzle["puzzle"]) == 81 and "solution" not in puzzle for puzzle in body["puzzles"])


async def test_without_a_seed_one_is_drawn_named_and_not_cached(client: httpx.AsyncClient) -> None:
    first = await client.get("/api/v2/puzzles", params={"count": 10})
    second = await client.get("/api/v2/puzzles", params={"count": 10})

    assert first.status_code == second.status_code == 200
    assert first.headers["cache-control"] == "no-store"
    assert first.json()["seed"] != second.json()["seed"]
    again = await client.get("/api/v2/puzzles", params={"count": 10, "seed": first.json()["seed"]})
    assert ids(again.json()) == ids(first.json())


async def test_the_gzip_and_identity_bodies_are_the_same_set(client: httpx.AsyncClient) -> None:
    query = {"count": 12, "seed": 5, "difficulty": "easy"}
    coded = await client.get("/api/v2/puzzles", params=query, headers={"Accept-Encoding": "gzip"})
    plain = await client.get("/api/v2/puzzles", params=query, headers={"Accept-Encoding": "identity"})

    assert coded.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    assert coded.json() == plain.json()
    assert all(puzzle["difficulty"] == "Easy" for puzzle in plain.json()["puzzles"])


async def test_each_record_in_a_set_is_the_record_by_id(client: httpx.AsyncClient) -> None:
    body = (await client.get("/api/v2/puzzles", params={"count": 5, "seed": 3})).json()

    for puzzle in body["puzzles"]:
        assert (await client.get(f"/api/v2/puzzles/{puzzle['canonical_id']}")).json() == puzzle


async def test_random_with_a_seed_is_the_sets_first(client: httpx.AsyncClient) -> None:
    query = {"seed": 77, "max_clues": "29"}
    first = (await client.get("/api/v2/puzzles", params={**query, "count": 1})).json()
    random = (await client.get("/api/v2/puzzles/random", params=query)).json()

    assert random["canonical_id"] == ids(first)[0]
    assert random["clue_count"] <= 29


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param("count=0", "count must be a whole number from 1 to 50", id="count-0"),
        pytest.param("count=51", "count must be a whole number from 1 to 50", id="count-51"),
        pytest.param("count=", "count must be a whole number from 1 to 50", id="count-empty"),
        pytest.param("count=-1", "count must be a whole number from 1 to 50", id="count-negative"),
        pytest.param("count=1e1", "count must be a whole number from 1 to 50", id="count-float"),
        pytest.param("seed=-1", "seed must be a whole number from 0 to 9007199254740991", id="seed-negative"),
        pytest.param("seed=9007199254740992", "seed must be a whole number", id="seed-big"),
        pytest.param("seed=", "seed must be a whole number", id="seed-empty"),
        pytest.param("offset=3", "offset needs a seed", id="offset-without-seed"),
        pytest.param("seed=1&offset=x", "offset must be a whole number", id="offset-bad"),
        pytest.param("seed=1&offset=", "offset must be a whole number", id="offset-empty"),
        pytest.param("min_clues=", "min_clues must be a whole number from 0 to 81", id="min-clues-empty"),
        pytest.param("max_clues=82", "max_clues must be a whole number from 0 to 81", id="max-clues-82"),
        pytest.param("min_clues=30&max_clues=29", "min_clues must not be above max_clues", id="clues-crossed"),
        pytest.param("symmetry=", "symmetry must be one of none, rotational-180", id="symmetry-empty"),
        pytest.param("symmetry=round", "symmetry must be one of none, rotational-180", id="symmetry-bad"),
        pytest.param("difficulty=", "difficulty must be one of", id="difficulty-empty"),
    ],
)
@pytest.mark.parametrize("path", ["/api/v1/puzzles", "/api/v1/puzzles/random", "/api/v1/puzzles/random/image"])
async def test_bad_values_are_a_400_saying_why(client: httpx.AsyncClient, path: str, query: str, message: str) -> None:
    if path != "/api/v1/puzzles" and query.startswith(("count", "seed=1&offset", "offset")):
        return  # not parameters of random
    response = await client.get(f"{path}?{query}")

    assert response.status_code == 400
    assert response.json()["error"].startswith(message)


async def test_nothing_matching_is_a_404_and_past_the_end_is_empty(client: httpx.AsyncClient) -> None:
    none = await client.get("/api/v2/puzzles", params={"min_clues": 80})
    assert none.status_code == 404
    assert none.json() == {"error": "no puzzle matches min_clues=80"}

    past = await client.get("/api/v2/puzzles", params={"seed": 1, "offset": 40, "count": 5})
    assert past.status_code == 200
    assert past.json()["puzzles"] == [] and past.json()["next_offset"] is None


@pytest.mark.parametrize(
    ("count", "cost"),
    [pytest.param(c, k, id=str(c)) for c, k in ((None, 1), (1, 1), (10, 1), (11, 2), (20, 2), (49, 5), (50, 5))],
)
def test_a_set_costs_a_request_per_ten_puzzles(count: int | None, cost: int) -> None:
    query = b"" if count is None else b"count=%d&seed=1" % count
    assert set_cost({"query_string": query}) == cost
    assert cost <= (count or 1)


async def test_the_rate_limit_counts_the_cost(client: httpx.AsyncClient) -> None:
    first = await client.get("/api/v2/puzzles", params={"count": 50})
    second = await client.get("/api/v2/puzzles", params={"count": 3})

    remaining = int(first.headers["x-ratelimit-remaining"])
    assert int(second.headers["x-ratelimit-remaining"]) == remaining - 1
    assert remaining <= 60 - 5


# The real service


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export of 80 records (for sets of 50 that are not the whole pool)."""
    directory = tmp_path_factory.mktemp("many")
    write_export(directory / "pool-20261122T100000Z.ndjson.gz", make_records(80))
    return directory


ENV = {"SUDOKUPOOL_LIMIT_ANONYMOUS": "100000"}


@pytest.mark.slow
def test_two_instances_give_the_same_set_and_pages_cover_a_filter_once(many: Path, tmp_path: Path) -> None:
    env = {**ENV, "SUDOKUPOOL_EXPORTS": str(many)}
    with (
        run_server(env, tmp_path / "one.log") as one,
        run_server({**env, "WEB_CONCURRENCY": "2"}, tmp_path / "two.log") as two,
    ):
        fifty = httpx.get(f"{one.url}/api/v2/puzzles", params={"count": 50}).json()
        assert len(set(ids(fifty))) == 50
        for offset in (0, 17):
            query = {"count": 20, "seed": 424242, "offset": offset}
            answers = [httpx.get(f"{server.url}/api/v2/puzzles", params=query).json() for server in (one, two, two)]
            assert ids(answers[0]) == ids(answers[1]) == ids(answers[2])
        # A small filter, paged 3 at a time: every match exactly once, then no next page.
        everything = httpx.get(f"{one.url}/api/v1/puzzles", params={"count": 50, "seed": 1}).json()
        total = httpx.get(f"{one.url}/api/v1/puzzles", params={"count": 50, "seed": 1, "offset": 50}).json()
        pool = [*everything["puzzles"], *total["puzzles"]]
        assert len({p["canonical_id"] for p in pool}) == 80
        clues = sorted(p["clue_count"] for p in pool)
        query: dict[str, Any] = {"max_clues": clues[20], "difficulty": pool[0]["difficulty"].lower()}
        expected = {
            p["canonical_id"] for p in pool if p["clue_count"] <= clues[20] and p["difficulty"] == pool[0]["difficulty"]
        }
        seen: list[str] = []
        offset: int | None = 0
        while offset is not None:
            page = httpx.get(f"{two.url}/api/v2/puzzles", params={**query, "count": 3, "seed": 8, "offset": offset})
            assert page.status_code == 200
            seen += ids(page.json())
            offset = page.json()["next_offset"]
        assert len(seen) == len(set(seen)) and set(seen) == expected


@pytest.mark.slow
def test_filters_combine_on_the_real_service(many: Path, tmp_path: Path) -> None:
    with run_server({**ENV, "SUDOKUPOOL_EXPORTS": str(many)}, tmp_path / "server.log") as server:
        all_of = httpx.get(f"{server.url}/api/v1/puzzles", params={"count": 50, "seed": 2}).json()["puzzles"]
        target = all_of[0]
        query = {
            "difficulty": target["difficulty"],
            "stars": target["stars"],
            "min_clues": target["clue_count"],
            "max_clues": target["clue_count"],
            "symmetry": target["symmetry"].upper(),
            "min_score": target["score"],
            "count": 50,
        }
        body = httpx.get(f"{server.url}/api/v2/puzzles", params=query).json()
        assert target["canonical_id"] in ids(body)
        for puzzle in body["puzzles"]:
            assert puzzle["difficulty"] == target["difficulty"] and puzzle["stars"] == target["stars"]
            assert puzzle["clue_count"] == target["clue_count"] and puzzle["symmetry"] == target["symmetry"]
            assert puzzle["score"] >= target["score"]
