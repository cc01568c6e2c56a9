"""The scale's oracle (``bench.grading``): Spearman of bands of a key from prefix sums, and the best bands."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from bench.grading import Banding, best_bands, spearman, stars_within, window


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


def test_a_window_holds_the_cuts_that_leave_at_most_80_percent_on_either_side() -> None:
    scores = list(range(10))  # 0..9
    assert window(scores, list(range(-1, 12))) == [2, 3, 4, 5, 6, 7, 8]


def stars(score: int, cuts: tuple[int, ...]) -> int:
    return 1 + sum(score >= cut for cut in cuts)


def test_the_stars_under_the_rules_are_the_best_of_every_scale_that_keeps_them() -> None:
    rng = random.Random(3)
    levels = {"Easy": list(range(0, 5)), "Medium": list(range(10, 15)), "Hard": list(range(20, 25))}
    levels["Expert"] = list(range(30, 40))
    rated: dict[str, tuple[list[int], list[float]]] = {}
    for name in ("a", "b", "out"):
        se = [round(rng.uniform(5, 9), 1) for _ in range(30)]
        rated[name] = ([int(14 + 6 * (r - 5) + rng.gauss(0, 2)) for r in se], se)
    found = stars_within(levels, rated, {"out"})
    assert found is not None
    figure, cuts = found

    def keeps_the_rules(c: tuple[int, ...]) -> bool:
        for scores in levels.values():
            if max(Counter(stars(s, c) for s in scores).values()) > 0.8 * len(scores):
                return False
        for name in ("a", "b"):
            high = [stars(s, c) for s, r in zip(*rated[name], strict=True) if r >= 6]
            if max(Counter(high).values()) > 0.6 * len(high):
                return False
        return True

    def worst(c: tuple[int, ...]) -> float:
        return min(spearman([float(stars(s, c)) for s in rated[n][0]], rated[n][1]) for n in ("a", "b"))

    # Any cut scale sorts the scores as one whose cuts are scores: try every four of them.
    keys = sorted({s for scores in levels.values() for s in scores} | {s for n in ("a", "b") for s in rated[n][0]})
    every = [c for c in itertools.combinations(keys, 4) if keeps_the_rules(c)]
    assert keeps_the_rules(cuts) and figure == pytest.approx(worst(cuts))
    assert figure == pytest.approx(max(map(worst, every)))
