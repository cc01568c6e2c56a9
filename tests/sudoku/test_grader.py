from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import orjson
import pytest

from sudokupool.sudoku.candidates import POPCOUNT, Candidates
from sudokupool.sudoku.grader import TIERS, grade, grade_within, stars_of, tier_of
from sudokupool.sudoku.grid import cell_name, parse_grid
from sudokupool.sudoku.replay import replay
from sudokupool.sudoku.solver import solve, solved_by_singles
from sudokupool.sudoku.technique_table import LEVEL, SCORES
from sudokupool.sudoku.techniques.last_resort import brute_force
from sudokupool.sudoku.techniques.step import LENGTHY, difficulty, length_steps

TIER_NAMES = [name for _, name in TIERS]


def path_score(path: list[dict[str, object]]) -> int:
    """The score, worked out from the solve path alone (technique and cells of each step)."""
    difficulties = [difficulty(str(step["technique"]), len(step["cells"])) for step in path]  # type: ignore[arg-type]
    top = max(difficulties)
    # How many steps as hard as the hardest, each counted by its share of the hardest's difficulty, past the first.
    count = sum(difficulties) // top - 1
    return 10 * top + sum(d for d in difficulties if d >= 200) // 10 + min(99, count)


# (puzzle, solution, difficulty, hardest technique), found by the generator and checked by replay.
KNOWN = [
    pytest.param(
        "003020600900305001001806400008102900700000008006708200002609500800203009005010300",
        "483921657967345821251876493548132976729564138136798245372689514814253769695417382",
        "Easy",
        "Naked Single",
        id="classic-easy",
    ),
    pytest.param(
        ".23....91..95..67.7..1........82.....7.9.5.8.....61........6..9.58..43..24....51.",
        "523678491189542673764193258431827965672935184895461732317256849958714326246389517",
        "Easy",
        "Hidden Single",
        id="easy-hidden-single",
    ),
    pytest.param(
        ".5..6.....18.9....7.91.5.8..7.5..4.2.........9.3..6.1..3.8.72.9....5.83.....3..7.",
        "354768921218394657769125384671583492825941763943276518536817249197452836482639175",
        "Medium",
        "Locked Candidates Type 1 (Pointing)",
        id="medium-pointing",
    ),
    pytest.param(
        "......6...928....3...2...7.528.....4..7...9..3.....561.5...6...7....125...1......",
        "873194625692857413415263879528619734167435982349728561254386197736941258981572346",
        "Medium",
        "Naked Pair",
        id="medium-naked-pair",
    ),
    pytest.param(
        "6.45....2...4...9.....71.4...716..83.51...96.36..497...8.61.....4...8...9....46.8",
        "614593872873426195529871346497165283251387964368249751785612439146938527932754618",
        "Hard",
        "X-Wing",
        id="hard-x-wing",
    ),
    pytest.param(
        "......2....95..4......17.9.9..7.314.8...5...3.174.9..5.2.36......8..27....6......",
        "651948237279536481483217596965723148842651973317489625724365819538192764196874352",
        "Hard",
        "XY-Wing",
        id="hard-xy-wing",
    ),
    # Once only an XY-Chain finished it; a Uniqueness Test 1 and an XYZ-Wing, tried first in
    # HoDoKu's order, make it Hard.
    pytest.param(
        "4....5.8...2.6.71.8....1..31.3.....8...8.3...7.....3.99..6....2.27.4.8...3.5....7",
        "471235986352968714869471253193754628246893175785126349914687532527349861638512497",
        "Hard",
        "XYZ-Wing",
        id="hard-uniqueness-then-xyz-wing",
    ),
    # From the Sudoku Exchange puzzle bank (public domain), SE 6.2.
    pytest.param(
        "1...5.9.7......3..58.2.9.....86.14..6.......2..23.58.....7.6.93..9......2.6.4...1",
        None,
        "Expert",
        "AIC",
        id="expert-aic",
    ),
]


@pytest.mark.parametrize(("puzzle", "solution", "difficulty", "hardest"), KNOWN)
def test_grade_known_puzzles(puzzle: str, solution: str | None, difficulty: str, hardest: str) -> None:
    solution = solution or solve(puzzle)
    assert solution is not None
    g = grade(puzzle)
    assert g.solved
    assert g.difficulty == difficulty
    assert g.difficulty_level == ("Easy", "Medium", "Hard", "Expert").index(difficulty) + 1
    assert g.hardest_technique == hardest
    assert g.score == path_score(g.solve_path)
    assert g.tier == tier_of(g.score)
    assert g.stars == stars_of(g.score)
    assert g.techniques == list(dict.fromkeys(step["technique"] for step in g.solve_path))
    assert replay(puzzle, solution, g.solve_path) == []


@pytest.mark.parametrize(("puzzle", "solution", "difficulty", "hardest"), KNOWN)
def test_every_empty_cell_is_placed_by_exactly_one_single(
    puzzle: str, solution: str | None, difficulty: str, hardest: str
) -> None:
    g = grade(puzzle)
    placed = [p["cell"] for step in g.solve_path for p in step["placements"]]  # type: ignore[attr-defined]
    empty = [cell_name(i) for i, ch in enumerate(puzzle) if ch in ".0"]
    assert sorted(placed) == sorted(empty)
    for step in g.solve_path:
        if step["placements"]:
            assert LEVEL[str(step["technique"])] == 1
            assert len(step["placements"]) == 1  # type: ignore[arg-type]
            assert step["eliminations"] == []
        else:
            assert step["eliminations"]


def test_step_object_has_the_export_fields() -> None:
    g = grade(KNOWN[2].values[0])  # type: ignore[arg-type]
    step = next(s for s in g.solve_path if s["technique"] == "Locked Candidates Type 1 (Pointing)")
    assert list(step) == [
        "technique",
        "score",
        "placements",
        "eliminations",
        "cells",
        "houses",
        "digits",
        "explanation",
    ]
    assert step["score"] == 50
    assert isinstance(step["explanation"], str) and step["explanation"].endswith(".")


def test_easy_path_uses_only_singles() -> None:
    g = grade(KNOWN[0].values[0])  # type: ignore[arg-type]
    assert set(g.techniques) <= {"Full House", "Naked Single", "Hidden Single"}
    assert g.solve_path[0]["explanation"] == (
        "The row, column and box of r5c6 already hold every digit except 4, so r5c6 = 4."
    )


# Arto Inkala's "world's hardest sudoku" (SE 10.5) and Easter Monster (SE 11.9): twice and once on
# their paths no forcing net of singles applies; nets that follow locked candidates and nested nets
# finish them, so neither needs Brute Force.
BEYOND = "8..........36......7..9.2...5...7.......457.....1...3...1....68..85...1..9....4.."
EASTER_MONSTER = "1.......2.9.4...5...6...7...5.9.3.......7.......85..4.7.....6...3...9.8...2.....1"


@pytest.mark.parametrize("puzzle", [BEYOND, EASTER_MONSTER], ids=["inkala", "easter-monster"])
def test_the_hardest_known_puzzles_get_a_human_style_path(puzzle: str) -> None:
    g = grade(puzzle)
    assert g.status == "solved"
    assert g.reason is None
    solution = solve(puzzle)
    assert solution is not None
    assert replay(puzzle, solution, g.solve_path) == []
    assert "Brute Force" not in g.techniques
    assert g.hardest_technique == "Forcing Net Contradiction"
    assert any("since assuming" in str(step["explanation"]) for step in g.solve_path)
    assert g.score == path_score(g.solve_path)
    assert g.score >= 10 * 700 + sum(step["score"] for step in g.solve_path if step["score"] >= 500) // 10  # type: ignore[misc]
    assert (g.difficulty, g.tier, g.stars) == ("Expert", "Diabolical", 5)


def test_brute_force_places_the_solution_digit_in_the_tightest_cell() -> None:
    solution = solve(BEYOND)
    assert solution is not None
    cg = Candidates.from_puzzle(BEYOND)
    step = brute_force(cg, solution)
    ((cell, digit),) = step.placements
    assert digit == int(solution[cell])
    assert POPCOUNT[cg.cands[cell]] == min(POPCOUNT[cg.cands[c]] for c in cg.empty_cells())
    assert step.score == 10000
    assert step.to_dict()["explanation"] == (
        f"No pattern applies here, so try the candidates of {cell_name(cell)}: only {digit} leads to a "
        f"solution, so {cell_name(cell)} = {digit}."
    )


@pytest.mark.parametrize(
    ("puzzle", "status", "reason"),
    [
        pytest.param("." * 80, "invalid", "a grid has 81 cells, got 80", id="too-short"),
        pytest.param("." * 82, "invalid", "a grid has 81 cells, got 82", id="too-long"),
        pytest.param(
            "x" + "." * 80,
            "invalid",
            "a grid holds only the digits 1-9 and '.' or '0' for empty cells",
            id="bad-character",
        ),
        pytest.param("11" + "." * 79, "invalid", "the givens clash: digit 1 appears twice in row 1", id="clash-row"),
        pytest.param(
            "1" + "." * 8 + "1" + "." * 71,
            "invalid",
            "the givens clash: digit 1 appears twice in column 1",
            id="clash-column",
        ),
        pytest.param(
            "1" + "." * 9 + "1" + "." * 70,
            "invalid",
            "the givens clash: digit 1 appears twice in box 1",
            id="clash-box",
        ),
        # r1c9 needs a 9 (row 1 holds 1-8), but column 9 already has one: no clash, no solution.
        pytest.param("12345678." + "........9" + "." * 63, "no-solution", "no grid completes these givens", id="none"),
        pytest.param("." * 81, "multiple-solutions", "the givens allow more than one solution", id="empty"),
    ],
)
def test_ungradable_puzzles_say_why_and_carry_no_score(puzzle: str, status: str, reason: str) -> None:
    g = grade(puzzle)
    assert g.status == status
    assert g.reason == reason
    assert not g.solved
    assert (g.difficulty, g.difficulty_level, g.score, g.tier, g.stars, g.hardest_technique) == (None,) * 6
    assert (g.techniques, g.solve_path) == ([], [])


def test_a_puzzle_past_the_time_limit_is_timed_out_with_no_score() -> None:
    g = grade(str(KNOWN[0].values[0]), time_limit=1e-9)
    assert g.status == "timed-out"
    assert g.reason == "not graded within the time limit of 1e-09 s"
    assert (g.difficulty, g.score, g.solution, g.solve_path) == (None, None, None, [])
    assert grade(str(KNOWN[0].values[0]), time_limit=3600).solved


def test_zeros_are_empty_cells() -> None:
    puzzle = str(KNOWN[0].values[0])
    assert grade(puzzle) == grade(puzzle.replace("0", "."))
    assert grade(puzzle).status == "solved"


@pytest.mark.parametrize(
    ("score", "tier", "stars"),
    [
        pytest.param(0, "Warm-up", 1, id="zero"),
        pytest.param(139, "Warm-up", 1, id="139"),
        pytest.param(140, "Gentle", 1, id="140"),
        pytest.param(159, "Gentle", 1, id="159"),
        pytest.param(160, "Moderate", 2, id="160"),
        pytest.param(524, "Moderate", 2, id="524"),
        pytest.param(525, "Tricky", 3, id="525"),
        pytest.param(1500, "Tough", 3, id="1500"),
        pytest.param(2499, "Tough", 3, id="2499"),
        pytest.param(2500, "Fiendish", 4, id="2500"),
        pytest.param(3129, "Fiendish", 4, id="3129"),
        pytest.param(3130, "Diabolical", 5, id="3130"),
        pytest.param(9000, "Diabolical", 5, id="9000"),
    ],
)
def test_tier_and_stars_bands(score: int, tier: str, stars: int) -> None:
    assert tier_of(score) == tier
    assert stars_of(score) == stars


def test_scores_are_hodokus() -> None:
    assert SCORES["Full House"] == 4
    assert SCORES["Naked Single"] == 4
    assert SCORES["Hidden Single"] == 14
    assert SCORES["Locked Candidates Type 1 (Pointing)"] == 50
    assert SCORES["X-Wing"] == 140
    assert SCORES["XY-Wing"] == 160
    assert SCORES["X-Chain"] == 260
    assert SCORES["XY-Chain"] == 260


def test_generated_puzzles_are_solved_and_replay_cleanly() -> None:
    from sudokupool.sudoku.generator import generate

    for seed in range(40):
        g = generate(seed)
        result = grade(g.puzzle)
        assert result.status == "solved", seed
        assert replay(g.puzzle, g.solution, result.solve_path) == [], seed


LENGTH_STEPS = [(2, 0), (4, 0), (5, 1), (6, 1), (7, 2), (8, 2), (9, 3), (12, 3), (13, 4), (16, 4), (17, 5), (24, 5)]
LENGTH_STEPS += [(25, 6), (32, 6), (33, 7), (48, 7), (49, 8), (64, 8), (65, 9), (81, 9)]


@pytest.mark.parametrize(("cells", "steps"), LENGTH_STEPS)
def test_length_steps_follow_sizes_growing_by_half_then_a_third(cells: int, steps: int) -> None:
    assert length_steps(cells) == steps


def test_a_long_chain_is_harder_than_a_short_one_of_the_same_technique() -> None:
    assert difficulty("AIC", 4) == 280
    assert difficulty("AIC", 9) == 310
    assert difficulty("Forcing Net Contradiction", 20) == 750
    assert difficulty("Almost Locked Set XY-Chain", 20) == 390
    # Techniques of fixed shape get no bonus, however many cells they name.
    assert difficulty("Finned Jellyfish", 13) == SCORES["Finned Jellyfish"]
    assert difficulty("Naked Single", 1) == 4


def test_a_w_wing_is_as_hard_as_an_xy_chain_for_the_score_only() -> None:
    assert difficulty("W-Wing", 4) == SCORES["XY-Chain"]
    assert SCORES["W-Wing"] == 150


@pytest.mark.parametrize(
    ("puzzle", "hardest"),
    [
        pytest.param(KNOWN[0].values[0], 4, id="naked-singles"),
        pytest.param(KNOWN[1].values[0], 14, id="hidden-singles"),
        pytest.param(KNOWN[4].values[0], 140, id="x-wing"),
    ],
)
def test_easier_steps_count_but_never_reach_the_next_difficulty(puzzle: str, hardest: int) -> None:
    g = grade(puzzle)
    difficulties = [difficulty(str(step["technique"]), len(step["cells"])) for step in g.solve_path]  # type: ignore[arg-type]
    assert max(difficulties) == hardest
    # Steps below 200 add nothing but their count: the hardest step's band of 100 points is never left.
    assert g.score == 10 * hardest + min(99, sum(difficulties) // hardest - 1)
    assert 10 * hardest < g.score < 10 * hardest + 100


def test_stars_and_tiers_never_fall_as_the_score_rises() -> None:
    ranks = [(stars_of(score), TIER_NAMES.index(tier_of(score))) for score in range(0, 12_000)]
    assert ranks == sorted(ranks)
    assert {stars for stars, _ in ranks} == {1, 2, 3, 4, 5}


def _demo_pool() -> list[dict[str, object]]:
    [path] = (Path(__file__).parent.parent.parent / "snapshots").glob("pool-*.ndjson.gz")
    return [orjson.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]


def test_the_demo_pool_spreads_within_each_level() -> None:
    # Each level takes many scores and two or three star values, none holding more than 80 % of it.
    records = _demo_pool()
    for level in ("Easy", "Medium", "Hard", "Expert"):
        these = [r for r in records if r["difficulty"] == level]
        assert len({r["score"] for r in these}) >= 20, level
        stars = Counter(r["stars"] for r in these)
        assert len(stars) >= 2 and max(stars.values()) <= 0.8 * len(these), (level, stars)
    for r in records:
        assert (r["tier"], r["stars"]) == (tier_of(r["score"]), stars_of(r["score"]))  # type: ignore[arg-type]


def test_no_chain_or_als_move_rates_as_hard_as_a_forcing_chain() -> None:
    # So the score's tiers still follow the technique ladder: forcing chains and nets alone reach 5000.
    for technique in LENGTHY:
        if SCORES[technique] < SCORES["Forcing Chain Contradiction"]:
            assert difficulty(technique, 81) < SCORES["Forcing Chain Contradiction"]


LONG_AIC = "3...1...5.948.567..75.3.19.8..2.7..4..7...2...2..5..6....196....3.....1.........."


def test_the_score_counts_the_length_of_the_hardest_chain() -> None:
    # SE 7.4 (Sudoku Exchange): its hardest step is an AIC through 11 cells.
    g = grade(LONG_AIC)
    aics = [step for step in g.solve_path if step["technique"] == "AIC"]
    longest = max(len(step["cells"]) for step in aics)  # type: ignore[arg-type]
    assert (g.hardest_technique, longest) == ("AIC", 11)
    # 11 cells exceed 4, 6 and 8: a difficulty of 280 + 3 × 10.
    assert max(difficulty(str(step["technique"]), len(step["cells"])) for step in g.solve_path) == 310  # type: ignore[arg-type]
    assert g.score == path_score(g.solve_path)
    assert (g.tier, g.stars) == ("Diabolical", 5)


@pytest.mark.parametrize(("puzzle", "solution", "difficulty", "hardest"), KNOWN)
def test_grading_within_a_level_stops_only_past_it(puzzle: str, solution: str, difficulty: str, hardest: str) -> None:
    full = grade(puzzle)
    for level in range(1, 5):
        within = grade_within(puzzle, level)
        assert (within is None) == (full.difficulty_level is not None and full.difficulty_level > level)
        assert within is None or within == full


@pytest.mark.parametrize(("puzzle", "solution", "difficulty", "hardest"), KNOWN)
def test_singles_alone_fill_exactly_the_puzzles_graded_with_singles(
    puzzle: str, solution: str, difficulty: str, hardest: str
) -> None:
    singles = {"Full House", "Naked Single", "Hidden Single"}
    assert solved_by_singles(parse_grid(puzzle)) == set(grade(puzzle).techniques).issubset(singles)


def test_grading_within_a_level_agrees_with_the_demo_pools_levels() -> None:
    # A grade that stops past a level tries only the finders that can give a step of that level or easier
    # (grader.REACH): on puzzles of every level it stops exactly when the puzzle is harder.
    records = _demo_pool()
    for level in ("Easy", "Medium", "Hard", "Expert"):
        for r in [r for r in records if r["difficulty"] == level][:12]:
            puzzle, known = str(r["puzzle"]), int(r["difficulty_level"])  # type: ignore[call-overload]
            for within in range(1, 5):
                graded = grade_within(puzzle, within)
                assert (graded is None) == (known > within), (puzzle, within)
                if graded is not None:
                    assert (graded.difficulty, graded.score, graded.solve_path) == (
                        r["difficulty"],
                        r["score"],
                        r["solve_path"],
                    )
