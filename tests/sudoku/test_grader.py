from __future__ import annotations

import pytest

from sudokupool.sudoku.grader import LEVEL, grade, stars_of, tier_of
from sudokupool.sudoku.grid import GridError, cell_name
from sudokupool.sudoku.replay import replay
from sudokupool.sudoku.techniques import SCORES

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
    pytest.param(
        "4....5.8...2.6.71.8....1..31.3.....8...8.3...7.....3.99..6....2.27.4.8...3.5....7",
        "471235986352968714869471253193754628246893175785126349914687532527349861638512497",
        "Expert",
        "XY-Chain",
        id="expert-xy-chain",
    ),
]


@pytest.mark.parametrize(("puzzle", "solution", "difficulty", "hardest"), KNOWN)
def test_grade_known_puzzles(puzzle: str, solution: str, difficulty: str, hardest: str) -> None:
    g = grade(puzzle)
    assert g.solved
    assert g.difficulty == difficulty
    assert g.difficulty_level == ("Easy", "Medium", "Hard", "Expert").index(difficulty) + 1
    assert g.hardest_technique == hardest
    assert g.score == sum(step["score"] for step in g.solve_path)  # type: ignore[misc]
    assert g.tier == tier_of(g.score)
    assert g.stars == stars_of(g.score)
    assert g.techniques == list(dict.fromkeys(step["technique"] for step in g.solve_path))
    assert replay(puzzle, solution, g.solve_path) == []


@pytest.mark.parametrize(("puzzle", "solution", "difficulty", "hardest"), KNOWN)
def test_every_empty_cell_is_placed_by_exactly_one_single(
    puzzle: str, solution: str, difficulty: str, hardest: str
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


def test_stuck_puzzle_is_not_solved() -> None:
    # This one needs techniques beyond the grader's set.
    g = grade("......1....21.6349....8..5....4....69.5.6.2.36....3....7..4....2619.58....8......")
    assert not g.solved
    assert g.difficulty is None
    assert g.difficulty_level is None
    assert g.tier is None
    assert g.stars is None
    assert g.hardest_technique is None


def test_puzzle_with_two_solutions_is_not_solved() -> None:
    assert not grade("." * 81).solved


def test_clashing_givens_raise() -> None:
    with pytest.raises(GridError):
        grade("11" + "." * 79)


@pytest.mark.parametrize(
    ("score", "tier", "stars"),
    [
        pytest.param(0, "Warm-up", 1, id="zero"),
        pytest.param(249, "Warm-up", 1, id="249"),
        pytest.param(250, "Gentle", 1, id="250"),
        pytest.param(400, "Moderate", 2, id="400"),
        pytest.param(600, "Tricky", 3, id="600"),
        pytest.param(900, "Tough", 4, id="900"),
        pytest.param(1300, "Fiendish", 5, id="1300"),
        pytest.param(5000, "Diabolical", 5, id="5000"),
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


def test_generated_puzzles_replay_cleanly() -> None:
    from sudokupool.sudoku.generator import generate

    for seed in range(40):
        g = generate(seed)
        result = grade(g.puzzle)
        if result.solved:
            assert replay(g.puzzle, g.solution, result.solve_path) == [], seed
        else:
            # A stuck path is still sound as far as it goes: no errors but the unfilled cells.
            errors = replay(g.puzzle, g.solution, result.solve_path)
            assert len(errors) == 1 and errors[0].startswith("the path leaves"), seed
