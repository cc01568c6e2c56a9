"""The keyed shuffle behind a set's seeded order."""

from __future__ import annotations

import itertools

import pytest

from sudokupool.pool.shuffle import Shuffle


@pytest.mark.parametrize(
    "size", [pytest.param(n, id=str(n)) for n in (0, 1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 1000, 4097)]
)
def test_every_position_lands_on_a_distinct_value(size: int) -> None:
    shuffle = Shuffle(b"key", size)

    values = [shuffle[i] for i in range(size)]

    assert sorted(values) == list(range(size))


def test_the_key_fixes_the_order_and_another_key_gives_another() -> None:
    first = [Shuffle(b"seed 1", 500)[i] for i in range(500)]

    assert first == [Shuffle(b"seed 1", 500)[i] for i in range(500)]
    assert first != [Shuffle(b"seed 2", 500)[i] for i in range(500)]
    assert first != list(range(500))


def test_an_order_is_shuffled_not_shifted() -> None:
    values = [Shuffle(b"k", 10_000)[i] for i in range(10_000)]

    # Consecutive positions land far apart: fewer than 1 % of steps are to a neighbour.
    near = sum(abs(a - b) <= 1 for a, b in itertools.pairwise(values))
    assert near < 100
    # Each tenth of the range gets about a tenth of the first thousand positions.
    tenths = [sum(1 for v in values[:1000] if k * 1000 <= v < (k + 1) * 1000) for k in range(10)]
    assert min(tenths) > 60 and max(tenths) < 140


def test_positions_out_of_range_are_an_index_error() -> None:
    shuffle = Shuffle(b"k", 3)

    with pytest.raises(IndexError):
        shuffle[3]
    with pytest.raises(IndexError):
        shuffle[-1]
