"""Is a step justified by the cells it names? A check that knows no technique, only the rules.

A step's pattern is its ``cells`` plus the cells it fills or clears. Within the pattern we look for
any way to fill its empty cells from their current candidates such that no two cells that see each
other share a digit, and every house whose candidates for a digit all lie in the pattern gets that
digit. Each elimination is justified when no such filling puts its digit in its cell, and each
placement when none leaves its digit out. The search is a relaxation of the whole puzzle (it drops
every cell outside the pattern), so "no filling" proves the step from the named cells alone, whatever
technique it claims: a chain's eliminations are justified by the chain's cells, a fish's by its base
cells, an ALS move by its sets.

Uniqueness techniques argue from the puzzle having one solution: for them the first four ``cells``
are a rectangle of unfilled cells that may not end up holding just two digits (a deadly pattern,
which could be swapped into a second solution). BUG+1 is checked on its own terms, and Brute Force
(placing the solution's digit when nothing else applies) needs no pattern.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from sudokupool.sudoku.candidates import BIT, DIGITS_OF, POPCOUNT, Candidates
from sudokupool.sudoku.grid import BOX_OF, COL_OF, HOUSES, PEERS, ROW_OF, cell_name

UNIQUENESS: Final = frozenset(
    {
        "Uniqueness Test 1",
        "Uniqueness Test 2",
        "Uniqueness Test 3",
        "Uniqueness Test 4",
        "Uniqueness Test 5",
        "Uniqueness Test 6",
        "Hidden Rectangle",
    }
)
UNCHECKED: Final = frozenset({"Brute Force"})
BUG: Final = "Bivalue Universal Grave + 1"
# A pattern this large is not searched (the grader's largest nets stay well below it).
MAX_PATTERN: Final = 81


class _Relaxation:
    """The puzzle restricted to a set of cells, searched for any consistent filling."""

    def __init__(self, cg: Candidates, pattern: Iterable[int], deadly: Sequence[int]) -> None:
        values = cg.values
        self.cells = sorted(c for c in set(pattern) if not values[c])
        members = set(self.cells)
        self.base = {c: cg.cands[c] for c in self.cells}
        self.peers = {c: [p for p in self.cells if p in PEERS[c]] for c in self.cells}
        # Only houses that meet the pattern can have all their places for a digit inside it.
        self.musts: list[tuple[int, list[int]]] = []
        cands = cg.cands
        for house in {h for c in members for h in (ROW_OF[c], 9 + COL_OF[c], 18 + BOX_OF[c])}:
            spots_of: dict[int, list[int]] = {}
            for c in HOUSES[house]:
                for digit in DIGITS_OF[cands[c]]:
                    spots_of.setdefault(BIT[digit], []).append(c)
            for bit, spots in spots_of.items():
                if members.issuperset(spots):
                    self.musts.append((bit, spots))
        self.deadly = list(deadly) if deadly and members.issuperset(deadly) else []

    def feasible(self, forced: dict[int, int]) -> bool:
        domains = dict(self.base)
        for cell, mask in forced.items():
            if cell in domains:
                domains[cell] &= mask
        return self._search(domains)

    def _propagate(self, domains: dict[int, int]) -> bool:
        settled: set[int] = set()
        changed = True
        while changed:
            changed = False
            for cell in self.cells:
                mask = domains[cell]
                if not mask:
                    return False
                if cell not in settled and POPCOUNT[mask] == 1:
                    settled.add(cell)
                    for peer in self.peers[cell]:
                        if domains[peer] & mask:
                            domains[peer] &= ~mask
                            if not domains[peer]:
                                return False
                            changed = True
            for bit, spots in self.musts:
                holders = [c for c in spots if domains[c] & bit]
                if not holders:
                    return False
                if len(holders) == 1 and domains[holders[0]] != bit:
                    domains[holders[0]] = bit
                    changed = True
        return True

    def _search(self, domains: dict[int, int]) -> bool:
        if not self._propagate(domains):
            return False
        open_cells = [c for c in self.cells if POPCOUNT[domains[c]] > 1]
        if not open_cells:
            # A filling is a way out unless it leaves the rectangle a deadly pattern.
            return not (self.deadly and len({domains[c] for c in self.deadly}) == 2)
        cell = min(open_cells, key=lambda c: POPCOUNT[domains[c]])
        mask = domains[cell]
        while mask:
            bit = mask & -mask
            mask ^= bit
            trial = dict(domains)
            trial[cell] = bit
            if self._search(trial):
                return True
        return False


def _moves(step: dict[str, object], key: str) -> list[tuple[int, int]]:
    out = []
    items = step.get(key)
    for item in items if isinstance(items, list) else []:
        name, digit = item["cell"], item["digit"]
        out.append(((int(name[1]) - 1) * 9 + int(name[3]) - 1, digit))
    return out


def _cells(step: dict[str, object]) -> list[int]:
    names = step.get("cells")
    return [(int(n[1]) - 1) * 9 + int(n[3]) - 1 for n in names] if isinstance(names, list) else []


def _bug_problems(cg: Candidates, placements: list[tuple[int, int]]) -> list[str]:
    if len(placements) != 1:
        return ["BUG+1 places exactly one digit"]
    cell, digit = placements[0]
    cands = list(cg.cands)
    empty = [c for c in range(81) if not cg.values[c]]
    if POPCOUNT[cands[cell]] != 3 or any(POPCOUNT[cands[c]] != 2 for c in empty if c != cell):
        return ["BUG+1 needs every unfilled cell but one to hold two candidates, and that one three"]
    cands[cell] &= ~BIT[digit]
    for house in HOUSES:
        for d in range(1, 10):
            count = sum(1 for c in house if cands[c] & BIT[d])
            if count not in (0, 2):
                return [f"without {digit} in {cell_name(cell)}, {d} is not twice in every house: not a BUG"]
    return []


def _single_problems(cg: Candidates, placements: list[tuple[int, int]]) -> list[str]:
    """The one-cell case of the relaxation, without building it: a naked or a hidden single."""
    ((cell, digit),) = placements
    bit = BIT[digit]
    cands = cg.cands
    if cg.values[cell] or not cands[cell] & bit or cands[cell] == bit:
        return []
    for house in (ROW_OF[cell], 9 + COL_OF[cell], 18 + BOX_OF[cell]):
        if not any(cands[c] & bit for c in HOUSES[house] if c != cell):
            return []
    return [f"its cells do not force {digit} into {cell_name(cell)}"]


def unjustified(cg: Candidates, step: dict[str, object]) -> list[str]:
    """What ``step`` (a solve-path object, well formed) claims that its cells do not prove, on ``cg``."""
    technique = step.get("technique")
    if technique in UNCHECKED:
        return []
    placements = _moves(step, "placements")
    eliminations = _moves(step, "eliminations")
    if technique == BUG:
        return _bug_problems(cg, placements)
    cells = _cells(step)
    pattern = set(cells) | {c for c, _ in placements} | {c for c, _ in eliminations}
    if len(pattern) == 1 and placements and not eliminations:
        return _single_problems(cg, placements)
    if len(pattern) > MAX_PATTERN:
        return ["the pattern is too large to check"]
    deadly = cells[:4] if technique in UNIQUENESS else []
    relaxation = _Relaxation(cg, pattern, deadly)
    problems = []
    for cell, digit in eliminations:
        if cg.values[cell] or not cg.cands[cell] & BIT[digit]:
            continue  # replay reports these
        if relaxation.feasible({cell: BIT[digit]}):
            problems.append(f"its cells do not rule out {digit} in {cell_name(cell)}")
    for cell, digit in placements:
        if cg.values[cell] or not cg.cands[cell] & BIT[digit]:
            continue
        if relaxation.feasible({cell: ~BIT[digit]}):
            problems.append(f"its cells do not force {digit} into {cell_name(cell)}")
    return problems
