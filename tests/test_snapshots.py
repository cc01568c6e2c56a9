"""The demo pool shipped in snapshots/ is genuine: graded by today's grader, in the promised mix."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sudokupool.config import BUNDLED_SNAPSHOTS
from sudokupool.sudoku.grader import grade
from tests.helpers import demo_records


@pytest.fixture(scope="module")
def demo() -> list[dict[str, Any]]:
    return demo_records()


def test_the_demo_pool_has_the_promised_size_and_mix(demo: list[dict[str, Any]]) -> None:
    counts = Counter(record["difficulty"] for record in demo)
    assert len(demo) >= 2000
    assert min(counts[name] for name in ("Easy", "Medium", "Hard", "Expert")) >= 250
    assert {record["symmetry"] for record in demo} == {"rotational-180"}
    assert Path(sorted(BUNDLED_SNAPSHOTS.glob("pool-*.ndjson.gz"))[-1]).stat().st_size < 8 * 1024 * 1024


def test_the_demo_pool_matches_the_current_grader(demo: list[dict[str, Any]]) -> None:
    fields = ("difficulty", "difficulty_level", "score", "tier", "stars", "hardest_technique", "techniques")
    for record in demo[:: len(demo) // 60]:
        graded = grade(record["puzzle"])
        assert graded.solved
        assert {name: getattr(graded, name) for name in fields} == {name: record[name] for name in fields}
        assert graded.solve_path == record["solve_path"]
