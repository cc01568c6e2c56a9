"""The scale's oracle (``bench.grading``): Spearman of bands of a key from prefix sums, and the best bands."""

from __future__ import annotations

import itertools
import random

import pytest

from bench.grading import Banding, best_bands, spearman


def banded(keys: list[float], cuts: tuple[float, ...]) -> list[float]:
    return [float(sum(key >= cut for cut in cuts)) for key in keys]


def sample(seed: int, n: int) -> tuple[list[float], list[float]]:
    rng = random.Random(seed)
    ratings = [round(rng.uniform(5, 9), 1) for _ in range(n)]
    keys = [float(round(r * 300 + rng.gauss(0, 200))) for r in ratings]  # a noisy score, with ties
    return keys, ratings


@pytest.mark.parametrize("seed", range(5))
def test_a_banding_ranks_as_spearman_of_the_band_numbers(seed: int) -> None:
    keys, ratings = sample(seed, 120)
    banding = Banding.of(keys, ratings)
    rng = random.Random(seed)
    for _ in range(20):
        cuts = tuple(sorted(rng.sample(sorted(set(keys)), 4)))
        assert banding.rho(cuts) == pytest.approx(spearman(banded(keys, cuts), ratings))


def test_the_best_bands_of_few_keys_are_the_best_of_every_cut() -> None:
    keys, ratings = sample(7, 80)
    keys = [float(k // 200) for k in keys]  # at most BAND_CANDIDATES distinct keys: the search is exhaustive
    figure, cuts = best_bands([Banding.of(keys, ratings)], 4)
    every = sorted(set(keys))[1:]
    brute = max(spearman(banded(keys, c), ratings) for c in itertools.combinations(every, 3))
    assert figure == pytest.approx(brute)
    assert spearman(banded(keys, cuts), ratings) == pytest.approx(figure)


def test_bands_of_the_rating_itself_rank_perfectly_once_there_are_as_many_as_its_values() -> None:
    ratings = [5.0, 5.5, 6.0, 6.5, 7.0] * 4
    figure, cuts = best_bands([Banding.of(ratings, ratings)], 5)
    assert figure == pytest.approx(1.0) and cuts == (5.5, 6.0, 6.5, 7.0)
    fewer, _ = best_bands([Banding.of(ratings, ratings)], 2)
    assert fewer < 0.9


def test_one_set_of_bands_for_several_sets_is_judged_by_the_worst_of_them() -> None:
    low = [1.0, 2.0, 3.0, 4.0] * 3
    high = [7.0, 8.0, 9.0, 10.0] * 3
    sets = [Banding.of(low, low), Banding.of(high, high)]
    figure, cuts = best_bands(sets, 3)
    assert figure == pytest.approx(min(s.rho(cuts) for s in sets))
    assert any(c <= 4 for c in cuts) and any(c > 4 for c in cuts)  # each set gets a cut inside its range
