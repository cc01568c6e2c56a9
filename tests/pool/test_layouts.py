from __future__ import annotations

import random
from typing import Any

from sudokupool.pool.layouts import MAX_CANDIDATES, MAX_PROBES, LayoutIndex
from sudokupool.pool.pool import Pool
from sudokupool.sudoku.layouts import layout_key
from sudokupool.sudoku.transform import random_transform
from tests.pool.test_grids import Grids


def test_every_record_is_a_candidate_for_each_of_its_layouts(pool: Pool, records: list[dict[str, Any]]) -> None:
    index = LayoutIndex(len(pool))
    rng = random.Random(3)
    for number, record in enumerate(records):
        asked = random_transform(rng).apply(record["puzzle"])
        candidates, complete = index.candidates(pool, layout_key(asked))
        assert number in candidates
        assert complete
    # A key no record has: none, and that settles it.
    assert index.candidates(pool, layout_key("1" + "." * 80)) == ([], True)


def test_the_index_is_built_a_chunk_a_lookup_and_says_when_it_is_whole() -> None:
    grids = Grids([("1" * n).ljust(81, ".") for n in range(17, 27)])
    index = LayoutIndex(len(grids), chunk=4)
    assert index.candidates(grids, layout_key(grids.grids[7])) == ([], False)  # records 0-3 indexed
    assert index.candidates(grids, layout_key(grids.grids[2])) == ([2], False)  # and 4-7
    assert not index.complete
    assert index.candidates(grids, layout_key(grids.grids[9])) == ([9], True)  # and 8-9: every one
    assert [index.candidates(grids, layout_key(grid))[0] for grid in grids.grids] == [[n] for n in range(10)]


def test_a_pool_of_many_records_with_one_key_is_looked_up_in_bounded_time() -> None:
    # Every record the same grid in another order of its rows within the first band: one key.
    rows = ["123......", "...456...", "......789"] + ["." * 9] * 6
    grids = Grids(
        ["".join([*(rows[i] for i in order), *rows[3:]]) for order in ([0, 1, 2], [1, 0, 2], [2, 1, 0]) * 200]
    )
    index = LayoutIndex(len(grids))
    key = layout_key(grids.grids[0])
    while not index.complete:
        index.candidates(grids, key)
    candidates, settled = index.candidates(grids, key)
    assert len(candidates) == MAX_CANDIDATES and not settled
    assert all(layout_key(grids.grids[n]) == key for n in candidates)
    # A key whose slot lies in the run of those records: past the probes' bound it is not settled either.
    assert ([], False) in (index.candidates(grids, key) for key in range(1 << 12))
    assert len(grids) > MAX_PROBES
