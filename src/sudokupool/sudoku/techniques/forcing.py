"""Forcing chains and forcing nets: what follows from assuming one candidate true.

From an assumption ``cell = digit`` the solver fills in what singles force, step by step, and keeps
for every fact the facts it came from. Two outcomes give a step:

- **Contradiction**: the assumption leads to a cell with no candidate, a house with no place for a
  digit, or a cell forced two ways; so the assumed candidate is false.
- **Verity**: every candidate of one cell (or every place of a digit in one house) leads to the same
  fact; one of them is true, so the fact is.

It is a *forcing chain* (HoDoKu: 500) when every inference rests on one earlier fact: a cell left
with two candidates or a house with two places for a digit, as in an alternating chain; otherwise a
*forcing net* (700), where a single may need several earlier facts. The shortest proof is chosen.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from sudokupool.sudoku.candidates import BIT, DIGITS_OF, PEER_LISTS, POPCOUNT, Candidates
from sudokupool.sudoku.grid import BOX_OF, COL_OF, HOUSES, ROW_OF, cell_name, house_name
from sudokupool.sudoku.techniques.step import Step, join

# A fact: (kind, cell, digit) with kind 1 for "cell holds digit", 0 for "cell does not hold digit".
Fact = tuple[int, int, int]
MAX_BRANCHES = 4


_HOUSES_OF = tuple((ROW_OF[c], 9 + COL_OF[c], 18 + BOX_OF[c]) for c in range(81))


class Tally:
    """Per house and digit (index ``house * 10 + digit``): how many cells hold the digit as a
    candidate, and whether the digit is already placed there. Shared by every run on one grid."""

    __slots__ = ("counts", "placed")

    def __init__(self, cg: Candidates) -> None:
        self.counts = [0] * 270
        self.placed = [False] * 270
        for h, house in enumerate(HOUSES):
            for c in house:
                for d in DIGITS_OF[cg.cands[c]]:
                    self.counts[h * 10 + d] += 1
                if cg.values[c]:
                    self.placed[h * 10 + cg.values[c]] = True


class Run:
    """The consequences of one assumption, with where each fact came from."""

    __slots__ = ("base", "cands", "contradiction", "order", "parents", "values")

    def __init__(self, cg: Candidates, cell: int, digit: int, *, chain: bool, tally: Tally | None = None) -> None:
        self.base = cg.cands
        self.cands = list(cg.cands)
        self.values = list(cg.values)
        self.parents: dict[Fact, tuple[Fact, ...]] = {}
        self.order: list[Fact] = []  # placements in the order they were derived
        self.contradiction: tuple[str, tuple[Fact, ...]] | None = None
        self._propagate(cell, digit, chain, tally or Tally(cg))

    def _eliminated(self, cell: int, digits: Iterable[int]) -> tuple[Fact, ...]:
        return tuple((0, cell, d) for d in digits if (0, cell, d) in self.parents)

    def _propagate(self, start: int, digit: int, chain: bool, tally: Tally) -> None:
        cands, values, base, parents = self.cands, self.values, self.base, self.parents
        base_counts = tally.counts
        counts = list(base_counts)
        placed = list(tally.placed)
        queue: deque[tuple[int, int, tuple[Fact, ...]]] = deque([(start, digit, ())])
        while queue:
            cell, d, why = queue.popleft()
            bit = BIT[d]
            if values[cell]:
                if values[cell] != d:
                    self._contra(
                        f"{cell_name(cell)} would be both {values[cell]} and {d}", (1, cell, values[cell]), why
                    )
                    return
                continue
            if not cands[cell] & bit:
                self._contra(f"{cell_name(cell)} would be {d}, which it cannot hold", (0, cell, d), why)
                return
            fact = (1, cell, d)
            parents[fact] = why
            self.order.append(fact)
            values[cell] = d
            for h in _HOUSES_OF[cell]:
                placed[h * 10 + d] = True
            removed = [(cell, e) for e in DIGITS_OF[cands[cell] & ~bit]]
            cands[cell] = 0
            removed += [(p, d) for p in PEER_LISTS[cell] if cands[p] & bit]
            for p, e in removed:
                # Remove and count one candidate at a time, so counts and candidates always agree.
                cands[p] &= ~BIT[e]
                parents[(0, p, e)] = (fact,)
                if p != cell:
                    left = cands[p]
                    if not left and not values[p]:
                        self._contra(
                            f"{cell_name(p)} would have no candidate left",
                            None,
                            self._eliminated(p, DIGITS_OF[base[p]]),
                        )
                        return
                    if POPCOUNT[left] == 1 and (not chain or POPCOUNT[base[p]] == 2):
                        queue.append((p, DIGITS_OF[left][0], self._eliminated(p, DIGITS_OF[base[p] & ~left])))
                ebit = BIT[e]
                for h in _HOUSES_OF[p]:
                    k = h * 10 + e
                    counts[k] -= 1
                    if placed[k] or counts[k] > 1:
                        continue
                    house = HOUSES[h]
                    if not counts[k]:
                        why_h = tuple((0, c, e) for c in house if base[c] & ebit and (0, c, e) in parents)
                        self._contra(f"{house_name(h)} would have no place for {e}", None, why_h)
                        return
                    if not chain or base_counts[k] == 2:
                        spot = next(c for c in house if cands[c] & ebit)
                        why_h = tuple((0, c, e) for c in house if base[c] & ebit and c != spot)
                        queue.append((spot, e, why_h))

    def _contra(self, text: str, fact: Fact | None, why: tuple[Fact, ...]) -> None:
        self.contradiction = (text, why + ((fact,) if fact is not None else ()))

    def proof(self, facts: Iterable[Fact]) -> list[Fact]:
        """Every fact ``facts`` rest on, back to the assumption."""
        seen: set[Fact] = set()
        stack = list(facts)
        while stack:
            fact = stack.pop()
            if fact in seen:
                continue
            seen.add(fact)
            stack.extend(self.parents.get(fact, ()))
        return [f for f in self.order if f in seen] + sorted(f for f in seen if f[0] == 0)


def _placements_text(proof: list[Fact], skip: int) -> str:
    placed = [f"{cell_name(c)} = {d}" for kind, c, d in proof if kind and c != skip]
    return join(placed) if placed else "nothing new"


def _either(words: Iterable[str]) -> str:
    items = list(words)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _cells(proofs: Iterable[list[Fact]], first: Iterable[int]) -> list[int]:
    out = list(dict.fromkeys(first))
    for proof in proofs:
        for _, cell, _ in proof:
            if cell not in out:
                out.append(cell)
    return out


def _contradiction(cg: Candidates, runs: dict[tuple[int, int], Run], name: str) -> tuple[int, Step] | None:
    best: tuple[int, Step] | None = None
    for (cell, digit), run in runs.items():
        if run.contradiction is None:
            continue
        text, why = run.contradiction
        proof = run.proof(why)
        if best is not None and len(proof) >= best[0]:
            continue
        step = Step(
            f"{name} Contradiction",
            eliminations=[(cell, digit)],
            cells=_cells([proof], [cell]),
            digits=[digit],
            explanation=f"If {cell_name(cell)} were {digit}, then {_placements_text(proof, cell)}, and "
            f"{text}; so {cell_name(cell)} is not {digit}.",
        )
        best = (len(proof), step)
    return best


def _verity(cg: Candidates, runs: dict[tuple[int, int], Run], name: str) -> tuple[int, Step] | None:
    cands = cg.cands
    groups: list[tuple[str, list[tuple[int, int]]]] = []
    for cell in range(81):
        if 2 <= POPCOUNT[cands[cell]] <= MAX_BRANCHES:
            groups.append(
                (
                    f"Whichever of {_either(str(d) for d in DIGITS_OF[cands[cell]])} {cell_name(cell)} holds",
                    [(cell, d) for d in DIGITS_OF[cands[cell]]],
                )
            )
    for h, house in enumerate(HOUSES):
        for digit in range(1, 10):
            spots = [c for c in house if cands[c] & BIT[digit]]
            if 2 <= len(spots) <= MAX_BRANCHES:
                groups.append(
                    (
                        f"Wherever the {digit} of {house_name(h)} goes ({_either(cell_name(c) for c in spots)})",
                        [(c, digit) for c in spots],
                    )
                )
    best: tuple[int, Step] | None = None
    for intro, branches in groups:
        branch_runs = [runs[b] for b in branches]
        if any(r.contradiction is not None for r in branch_runs):
            continue  # a contradiction step is found separately
        common = set(branch_runs[0].parents)
        for r in branch_runs[1:]:
            common &= set(r.parents)
        for fact in common:
            kind, cell, digit = fact
            if kind == 1 and cg.values[cell]:
                continue
            if kind == 0 and not cands[cell] & BIT[digit]:
                continue
            if kind == 1 and (cell, digit) in branches:
                continue
            proofs = [r.proof([fact]) for r in branch_runs]
            size = sum(len(p) for p in proofs)
            if best is not None and size >= best[0]:
                continue
            outcome = f"{cell_name(cell)} = {digit}" if kind else f"{cell_name(cell)} is not {digit}"
            cases = "; ".join(
                f"if {cell_name(c)} = {d}: {_placements_text(p, c)}"
                for (c, d), r, p in zip(branches, branch_runs, proofs, strict=True)
            )
            step = Step(
                f"{name} Verity",
                placements=[(cell, digit)] if kind else [],
                eliminations=[] if kind else [(cell, digit)],
                cells=_cells(proofs, [c for c, _ in branches]),
                digits=sorted({digit, *(d for _, d in branches)}),
                explanation=f"{intro}, {outcome} ({cases}); so {outcome}.",
            )
            best = (size, step)
    return best


def _forcing(cg: Candidates, *, chain: bool) -> Step | None:
    name = "Forcing Chain" if chain else "Forcing Net"
    tally = Tally(cg)
    runs = {(c, d): Run(cg, c, d, chain=chain, tally=tally) for c in range(81) for d in DIGITS_OF[cg.cands[c]]}
    found = [x for x in (_contradiction(cg, runs, name), _verity(cg, runs, name)) if x is not None]
    if not found:
        return None
    return min(found, key=lambda x: x[0])[1]


def forcing_chain(cg: Candidates) -> Step | None:
    """A contradiction or verity reached by inferences that each rest on one earlier fact."""
    return _forcing(cg, chain=True)


def forcing_net(cg: Candidates) -> Step | None:
    """A contradiction or verity reached by singles that may rest on several earlier facts."""
    return _forcing(cg, chain=False)
