from __future__ import annotations

from typing import Any

from sudokupool.pool.grids import GridIndex
from sudokupool.pool.pool import Pool
from sudokupool.sudoku.transform import Transform


class Grids:
    def __init__(self, grids: list[str]) -> None:
        self.grids = grids

    def __len__(self) -> int:
        return len(self.grids)

    def puzzle(self, index: int) -> str:
        return self.grids[index]


def test_every_record_of_a_pool_is_found_by_its_grid_and_no_other_layout_is(
    pool: Pool, records: list[dict[str, Any]]
) -> None:
    index = GridIndex(len(pool))
    for number, record in enumerate(records):
        assert index.find(pool, record["puzzle"]) == number
    assert index.complete
    assert index.find(pool, Transform(transpose=True).apply(records[0]["puzzle"])) is None
    assert index.find(pool, "." * 81) is None


def test_the_index_is_built_a_chunk_a_lookup_and_finds_what_it_has_indexed() -> None:
    grids = Grids([f"{n:081d}" for n in range(10)])
    index = GridIndex(len(grids), chunk=4)
    assert index.find(grids, grids.grids[7]) is None  # records 0-3 indexed
    assert index.find(grids, grids.grids[2]) == 2  # and 4-7
    assert not index.complete
    assert index.find(grids, grids.grids[9]) == 9  # and 8-9: every one
    assert index.complete
    assert [index.find(grids, grid) for grid in grids.grids] == list(range(10))
    assert index.find(grids, "1" * 81) is None
