from __future__ import annotations

from pencil import Pencil, moves

from sudokupool.sudoku.candidates import DIGITS_OF, Candidates
from sudokupool.sudoku.justify import unjustified
from sudokupool.sudoku.techniques.forcing import Run, _verity, forcing_chain, forcing_net


def test_forcing_chain_contradiction() -> None:
    # r1c1 and r1c2 hold 1/2; if r1c3 were 1, r1c1 would be 2 and r1c2 would have nothing left.
    p = Pencil().set("r1c1", (1, 2)).set("r1c2", (1, 2)).set("r1c3", (1, 2, 3))
    step = forcing_chain(p.cg)
    assert step is not None
    assert step.technique == "Forcing Chain Contradiction"
    assert step.score == 500
    assert moves(step.eliminations) == {("r1c3", 1)}
    assert step.explanation == (
        "If r1c3 were 1, then r1c1 = 2, and r1c2 would have no candidate left; so r1c3 is not 1."
    )
    assert unjustified(p.cg, step.to_dict()) == []


def xy_ring() -> Pencil:
    # r5c5 is 4 or 6; r5c1 holds 4/7, r5c9 6/7 and r5c3 7/8.
    return Pencil().set("r5c5", (4, 6)).set("r5c1", (4, 7)).set("r5c9", (6, 7)).set("r5c3", (7, 8))


def test_the_shortest_proof_wins() -> None:
    # r5c2 = 4 would force r5c1 = 7 and r5c5 = 6, leaving r5c9 nothing: seven facts. Every other
    # contradiction or verity takes at least as many, and r5c2 comes first.
    p = xy_ring()
    step = forcing_chain(p.cg)
    assert step is not None
    assert step.technique == "Forcing Chain Contradiction"
    assert moves(step.eliminations) == {("r5c2", 4)}
    assert step.explanation == (
        "If r5c2 were 4, then r5c1 = 7 and r5c5 = 6, and r5c9 would have no candidate left; so r5c2 is not 4."
    )
    assert unjustified(p.cg, step.to_dict()) == []


def test_forcing_chain_verity() -> None:
    # Whichever of 4 and 7 r5c1 holds, r5c5 or r5c9 becomes 6, and both see r5c8.
    p = xy_ring()
    runs = {(c, d): Run(p.cg, c, d, chain=True) for c in range(81) for d in DIGITS_OF[p.cg.cands[c]]}
    found = _verity(p.cg, runs, "Forcing Chain")
    assert found is not None
    size, step = found
    assert step.technique == "Forcing Chain Verity"
    assert moves(step.eliminations) == {("r5c8", 6)}
    assert size == 8
    assert step.explanation == (
        "Whichever of 4 or 7 r5c1 holds, r5c8 is not 6 (if r5c1 = 4: r5c5 = 6; if r5c1 = 7: r5c9 = 6); "
        "so r5c8 is not 6."
    )
    assert unjustified(p.cg, step.to_dict()) == []


# Arto Inkala's puzzle, published in 2012 as "the world's hardest sudoku" (SE 10.5).
INKALA = "8..........36......7..9.2...5...7.......457.....1...3...1....68..85...1..9....4.."


def test_forcing_net_where_no_chain_is_left() -> None:
    from sudokupool.sudoku.grader import grade

    g = grade(INKALA)
    index = next(i for i, s in enumerate(g.solve_path) if s["technique"].startswith("Forcing Net"))  # type: ignore[union-attr]
    cg = Candidates.from_puzzle(INKALA)
    for s in g.solve_path[:index]:
        for m in s["placements"]:  # type: ignore[attr-defined]
            cg.place((int(m["cell"][1]) - 1) * 9 + int(m["cell"][3]) - 1, m["digit"])
        for m in s["eliminations"]:  # type: ignore[attr-defined]
            cg.eliminate((int(m["cell"][1]) - 1) * 9 + int(m["cell"][3]) - 1, m["digit"])
    assert forcing_chain(cg) is None
    step = forcing_net(cg)
    assert step is not None
    assert step.to_dict() == g.solve_path[index]
    assert step.score == 700
    assert unjustified(cg, step.to_dict()) == []
