"""The engine against the real service (``sudokupool serve``, as the Procfile starts it): grids the pool holds in
other layouts, live grades equal to ``sudokupool grade --json``, hints, and what they cost in the rate limit."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from sudokupool.sudoku.replay import replay
from sudokupool.sudoku.transform import random_transform
from tests.factories import write_export
from tests.helpers import free_port
from tests.servers import in_one_window, run_server

pytestmark = pytest.mark.slow

# Not in the test pool: Sudoku Exchange's SE-rated sample (bench/data).
LIVE = "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......"


@pytest.fixture
def exports(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    directory = tmp_path / "exports"
    directory.mkdir()
    write_export(directory / "pool-20260101T000000Z.ndjson", records[:20])
    return directory


def test_the_engine_over_http_matches_the_pool_and_the_command_line(
    tmp_path: Path, exports: Path, records: list[dict[str, Any]]
) -> None:
    record = records[2]
    moved = random_transform(random.Random(7)).apply(record["puzzle"])
    graded = subprocess.run(
        [sys.executable, "-m", "sudokupool", "grade", "--json", LIVE], capture_output=True, check=True, timeout=120
    )
    expected = orjson.loads(graded.stdout)

    def attempt() -> list[tuple[str, int, int]]:
        settings = {"SUDOKUPOOL_EXPORTS": str(exports), "SUDOKUPOOL_METRICS_PORT": str(free_port())}
        with (
            run_server(settings, tmp_path / "server.log") as server,
            httpx.Client(base_url=server.url, timeout=60) as client,
        ):
            seen = []
            response = client.get(f"/api/v2/grids/{moved}")
            seen.append(("in-pool", response.status_code, int(response.headers["x-ratelimit-remaining"])))
            body = response.json()
            assert body["in_pool"] is True and body["canonical_id"] == record["canonical_id"]
            assert body["puzzle"] == moved
            assert replay(moved, body["solution"], body["solve_path"]) == []
            response = client.get(f"/api/v2/grids/{LIVE}")
            seen.append(("live", response.status_code, int(response.headers["x-ratelimit-remaining"])))
            body = response.json()
            assert body.pop("in_pool") is False
            body.pop("canonical_id")
            assert body == expected
            response = client.get(f"/api/v2/grids/{LIVE}")
            seen.append(("cached", response.status_code, int(response.headers["x-ratelimit-remaining"])))
            response = client.get(f"/api/v2/puzzles/{record['canonical_id']}/hint", params={"board": record["puzzle"]})
            seen.append(("hint", response.status_code, int(response.headers["x-ratelimit-remaining"])))
            assert response.json()["step"] == record["solve_path"][0]
            response = client.get("/api/v2/grids/" + "." * 81)
            seen.append(("several", response.status_code, int(response.headers["x-ratelimit-remaining"])))
            return seen

    # 60 a minute: a lookup 1, a live grade 10, a cached answer 1, a hint 5, a grade that ends in a 422 10.
    assert in_one_window(attempt) == [
        ("in-pool", 200, 59),
        ("live", 200, 49),
        ("cached", 200, 48),
        ("hint", 200, 43),
        ("several", 422, 33),
    ]


HARD = (
    "52...6.........7.13...........4..8..6......5...........418.........3..2...87.....",
    "6.....8.3.4.7.................5.4.7.3..2.....1.6.......2.....5.....8.6......1....",
    "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......",
)


def test_past_its_budget_or_its_queue_a_grade_is_a_503_and_lookups_go_on(
    tmp_path: Path, exports: Path, records: list[dict[str, Any]]
) -> None:
    moved = random_transform(random.Random(8)).apply(records[3]["puzzle"])
    settings = {
        "SUDOKUPOOL_EXPORTS": str(exports),
        "SUDOKUPOOL_METRICS_PORT": str(free_port()),
        "SUDOKUPOOL_WORK_BUDGET_SECONDS": "0.001",
    }
    with (
        run_server(settings, tmp_path / "budget.log") as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        response = client.get(f"/api/v1/grids/{HARD[0]}")
        assert response.status_code == 503
        assert int(response.headers["retry-after"]) >= 1
        assert response.json() == {"error": "this grade or hint took longer than the server allows; retry later"}
        assert client.get(f"/api/v1/grids/{moved}").json()["in_pool"] is True
    settings = {
        "SUDOKUPOOL_EXPORTS": str(exports),
        "SUDOKUPOOL_METRICS_PORT": str(free_port()),
        "SUDOKUPOOL_WORK_QUEUE": "0",
        "SUDOKUPOOL_WORK_PROCESSES": "1",
    }
    with run_server(settings, tmp_path / "queue.log") as server:
        statuses: list[int] = []
        busy: list[httpx.Response] = []

        def ask(grid: str) -> None:
            response = httpx.get(f"{server.url}/api/v1/grids/{grid}", timeout=120)
            statuses.append(response.status_code)
            if response.status_code == 503:
                busy.append(response)

        threads = [threading.Thread(target=ask, args=(grid,)) for grid in HARD]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert 200 in statuses and 503 in statuses
        assert int(busy[0].headers["retry-after"]) >= 1
        assert busy[0].json()["error"].startswith("the server is busy with other grades and hints")
        assert httpx.get(f"{server.url}/api/v1/grids/{moved}", timeout=30).json()["in_pool"] is True
