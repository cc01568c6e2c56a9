"""Forcing chains and forcing nets: what follows from assuming one candidate true.

From an assumption ``cell = digit`` the solver fills in what singles force, step by step, and keeps
for every fact the facts it came from. Two outcomes give a step:

- **Contradiction**: the assumption leads to a cell with no candidate, a house with no place for a
  digit, or a cell forced two ways; so the assumed candidate is false.
- **Verity**: every candidate of one cell (or every place of a digit in one house) leads to the same
  fact; one of them is true, so the fact is.

It is a *forcing chain* (HoDoKu: 500) when every inference rests on one earlier fact: a cell left
with two candidates or a house with two places for a digit, as in an alternating chain; otherwise a
*forcing net* (700), where a single may need several earlier facts. The first proof found is taken:
the assumptions are made cell by cell, cells with the fewest candidates first, and the search stops at
the first contradiction, or at the first cell whose candidates complete a verity.

Two stronger nets follow, tried only when those find nothing (so only the hardest puzzles meet
them), both named and scored as HoDoKu's forcing nets:

- a net whose assumptions also follow **locked candidates** (a digit's places in a box all on one
  line, or in a line all in one box, leave the rest of the other house); the step then names the
  cells that hold the digit, so its proof can be checked from its cells;
- a **nested** net: inside an assumption, when nothing else follows, a candidate whose own
  assumption leads by singles to a contradiction is removed, and the propagation goes on; the first
  contradiction found is taken, cells with the fewest candidates first. This finishes the hardest
  published puzzles (Inkala's, Easter Monster) without Brute Force.
"""

from __future__ import annotations

from collections import ChainMap, deque
from collections.abc import Iterable, MutableMapping

from sudokupool.sudoku.candidates import BIT, DIGITS_OF, POPCOUNT, Candidates
from sudokupool.sudoku.grid import BOX_OF, COL_OF, HOUSE_MASK, HOUSES, PEER_MASK, ROW_OF, cell_name, house_name
from sudokupool.sudoku.techniques.memo import kept
from sudokupool.sudoku.techniques.step import Step, join

# A fact: (kind, cell, digit) with kind 1 for "cell holds digit", 0 for "cell does not hold digit",
# 2 for "the argument looks at this candidate of this cell": the places of a digit locked candidates
# rest on, the cells a nested assumption went through. Kind 2 facts only make a step name its cells.
Fact = tuple[int, int, int]
MAX_BRANCHES = 4


EMPTY_GRID = Candidates.from_puzzle("." * 81)
_HOUSES_OF = tuple((ROW_OF[c], 9 + COL_OF[c], 18 + BOX_OF[c]) for c in range(81))
# The hot loop's lookups: by ``cell * 10 + digit`` the keys ``house * 10 + digit`` of the cell's row,
# column and box; each cell's bit.
_KEYS = tuple(tuple(h * 10 + d for h in _HOUSES_OF[c]) if d else () for c in range(81) for d in range(10))
_CELL_BIT = tuple(1 << c for c in range(81))
# The facts "cell is not digit" and "cell is digit", by ``cell * 10 + digit``, made once.
_NOT = tuple((0, c, d) for c in range(81) for d in range(10))
_IS = tuple((1, c, d) for c in range(81) for d in range(10))


class Tally:
    """Per house and digit (index ``house * 10 + digit``): how many cells hold the digit as a
    candidate, which ones, and whether the digit is already placed there; and each digit's cells as
    an 81-bit mask. Shared by every run on one grid (a nested run uses its outer run's)."""

    __slots__ = ("cells_of", "counts", "hidden_why", "placed", "places")

    def __init__(self, cg: Candidates) -> None:
        self.counts = [0] * 270
        self.placed = [False] * 270
        # The cells of the house holding the digit as a candidate, in house order; and, by
        # ``index * 81 + cell``, the facts a hidden single in that cell rests on (the digit is gone from
        # the house's other places), filled as the runs meet them.
        self.places: list[list[int]] = [[] for _ in range(270)]
        self.hidden_why: dict[int, tuple[Fact, ...]] = {}
        counts, places, placed = self.counts, self.places, self.placed
        for h, house in enumerate(HOUSES):
            for c in house:
                for d in DIGITS_OF[cg.cands[c]]:
                    counts[h * 10 + d] += 1
                    places[h * 10 + d].append(c)
                if cg.values[c]:
                    placed[h * 10 + cg.values[c]] = True
        self.cells_of = [0] * 10
        for c, m in enumerate(cg.cands):
            for d in DIGITS_OF[m]:
                self.cells_of[d] |= _CELL_BIT[c]


# The facts "cell is not d" for each d of a mask, by ``cell * 512 + mask``: what a naked single rests on.
_GONE: dict[int, tuple[Fact, ...]] = {}


def _gone(cell: int, mask: int) -> tuple[Fact, ...]:
    key = cell * 512 + mask
    facts = _GONE.get(key)
    if facts is None:
        facts = _GONE[key] = tuple((0, cell, d) for d in DIGITS_OF[mask])
    return facts


class Run:
    """The consequences of one assumption, with where each fact came from."""

    __slots__ = (
        "base",
        "cands",
        "cells_of",
        "contradiction",
        "held_back",
        "nested_out",
        "order",
        "parents",
        "tally",
        "values",
    )

    def __init__(
        self,
        cg: Candidates,
        cell: int,
        digit: int,
        *,
        chain: bool,
        tally: Tally | None = None,
        locked: bool = False,
        nested: bool = False,
        inside: tuple[Run, list[int], list[bool]] | None = None,
    ) -> None:
        self.order: list[Fact] = []  # placements in the order they were derived
        self.nested_out: list[Fact] = []  # eliminations a nested assumption's contradiction gave
        self.contradiction: tuple[str, tuple[Fact, ...]] | None = None
        # True when a chain run met a single the chain rule does not allow: only then can the net run
        # of the same assumption differ from it.
        self.held_back = False
        if inside is None:
            tally = tally or Tally(cg)
            self.tally = tally
            self.base = cg.cands
            self.cands = list(cg.cands)
            self.values = list(cg.values)
            self.cells_of = list(tally.cells_of)  # kept equal to ``cands``, by digit
            self.parents: MutableMapping[Fact, tuple[Fact, ...]] = {}
            counts, placed, base_counts = list(tally.counts), list(tally.placed), tally.counts
        else:
            # A nested assumption, made inside the state ``outer`` reached: its facts rest on the outer
            # run's facts, which it reads through but never changes.
            outer, counts, placed = inside
            self.tally = outer.tally
            self.base = outer.base
            self.cands = list(outer.cands)
            self.values = list(outer.values)
            self.cells_of = list(outer.cells_of)
            self.parents = ChainMap({}, outer.parents)
            counts, placed, base_counts = list(counts), list(placed), counts
        self._propagate(cell, digit, chain, counts, placed, base_counts, locked, nested)

    def _eliminated(self, cell: int, digits: Iterable[int]) -> tuple[Fact, ...]:
        return tuple((0, cell, d) for d in digits if (0, cell, d) in self.parents)

    def _propagate(
        self,
        start: int,
        digit: int,
        chain: bool,
        counts: list[int],
        placed: list[bool],
        base_counts: list[int],
        locked: bool,
        nested: bool,
    ) -> None:
        queue: deque[tuple[int, int, tuple[Fact, ...]]] = deque([(start, digit, ())])
        self._singles(queue, counts, placed, chain, base_counts)
        while (
            locked
            and self.contradiction is None
            and (self._locked_candidates(queue, counts, placed) or (nested and self._nested(queue, counts, placed)))
        ):
            self._singles(queue, counts, placed, chain, base_counts)

    def _nested(self, queue: deque[tuple[int, int, tuple[Fact, ...]]], counts: list[int], placed: list[bool]) -> bool:
        """Remove the first candidate whose own assumption, made inside this one, leads by singles to a
        contradiction (a nested forcing net). True when it removed something."""
        cands = self.cands
        for cell in sorted((c for c in range(81) if cands[c]), key=lambda c: (POPCOUNT[cands[c]], c)):
            for d in DIGITS_OF[cands[cell]]:
                inner = Run(EMPTY_GRID, cell, d, chain=False, inside=(self, counts, placed))
                if inner.contradiction is None:
                    continue
                self.nested_out.append((0, cell, d))
                self._remove(cell, d, inner.grounds(), queue, counts, placed)
                return True
        return False

    def grounds(self) -> tuple[Fact, ...]:
        """For a nested run's contradiction: the outer facts it rests on, and every cell it looks at
        (as kind-2 facts, so that the step names them)."""
        assert isinstance(self.parents, ChainMap) and self.contradiction is not None
        own = self.parents.maps[0]
        outer: set[Fact] = set()
        looked: set[Fact] = set()
        seen: set[Fact] = set()
        stack = list(self.contradiction[1])
        while stack:
            fact = stack.pop()
            if fact in seen:
                continue
            seen.add(fact)
            if fact in own:
                looked.add((2, fact[1], fact[2]))
                stack.extend(own[fact])
            elif fact[0] == 2:
                looked.add(fact)
            else:
                outer.add(fact)
        return tuple(sorted(outer)) + tuple(sorted(looked))

    def _singles(
        self,
        queue: deque[tuple[int, int, tuple[Fact, ...]]],
        counts: list[int],
        placed: list[bool],
        chain: bool,
        base_counts: list[int],
    ) -> None:
        cands, values, base, parents, cells_of = self.cands, self.values, self.base, self.parents, self.cells_of
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
            fact = _IS[cell * 10 + d]
            parents[fact] = why
            self.order.append(fact)
            values[cell] = d
            row, col, box = _KEYS[cell * 10 + d]
            placed[row] = placed[col] = placed[box] = True
            cell_bit = _CELL_BIT[cell]
            cells_of[d] ^= cell_bit
            own = cands[cell] & ~bit
            cands[cell] = 0
            peers = PEER_MASK[cell] & cells_of[d]
            because = (fact,)
            # The cell's other digits go first, then the digit from its peers in cell order; one
            # candidate at a time, so counts and candidates always agree. The row's, column's and
            # box's counts are written out: the hottest lines of a forcing search.
            for e in DIGITS_OF[own]:
                cells_of[e] ^= cell_bit
                parents[_NOT[cell * 10 + e]] = because
                row, col, box = _KEYS[cell * 10 + e]
                n = counts[row] = counts[row] - 1
                if n < 2 and not placed[row] and not self._house_single(row, e, n, queue, chain, base_counts):
                    return
                n = counts[col] = counts[col] - 1
                if n < 2 and not placed[col] and not self._house_single(col, e, n, queue, chain, base_counts):
                    return
                n = counts[box] = counts[box] - 1
                if n < 2 and not placed[box] and not self._house_single(box, e, n, queue, chain, base_counts):
                    return
            notbit = ~bit
            while peers:
                low = peers & -peers
                peers ^= low
                p = low.bit_length() - 1
                cells_of[d] ^= low
                left = cands[p] = cands[p] & notbit
                parents[_NOT[p * 10 + d]] = because
                if not left and not values[p]:
                    self._contra(
                        f"{cell_name(p)} would have no candidate left", None, self._eliminated(p, DIGITS_OF[base[p]])
                    )
                    return
                if POPCOUNT[left] == 1:
                    if not chain or POPCOUNT[base[p]] == 2:
                        # Every candidate the run removed has its fact, so the single rests on all of them.
                        queue.append((p, DIGITS_OF[left][0], _gone(p, base[p] & ~left)))
                    else:
                        self.held_back = True
                row, col, box = _KEYS[p * 10 + d]
                n = counts[row] = counts[row] - 1
                if n < 2 and not placed[row] and not self._house_single(row, d, n, queue, chain, base_counts):
                    return
                n = counts[col] = counts[col] - 1
                if n < 2 and not placed[col] and not self._house_single(col, d, n, queue, chain, base_counts):
                    return
                n = counts[box] = counts[box] - 1
                if n < 2 and not placed[box] and not self._house_single(box, d, n, queue, chain, base_counts):
                    return

    def _house_single(
        self,
        k: int,
        e: int,
        n: int,
        queue: deque[tuple[int, int, tuple[Fact, ...]]],
        chain: bool,
        base_counts: list[int],
    ) -> bool:
        """After a removal left ``n`` (0 or 1) places for digit ``e`` in house ``k // 10``: record the
        contradiction (False), or queue the hidden single (when it counts) and return True."""
        h = k // 10
        if not n:
            ebit, base, parents = BIT[e], self.base, self.parents
            why_h = tuple((0, c, e) for c in HOUSES[h] if base[c] & ebit and (0, c, e) in parents)
            self._contra(f"{house_name(h)} would have no place for {e}", None, why_h)
            return False
        if not chain or base_counts[k] == 2:
            spot = (HOUSE_MASK[h] & self.cells_of[e]).bit_length() - 1
            hidden_why = self.tally.hidden_why
            rests_on = hidden_why.get(k * 81 + spot)
            if rests_on is None:
                rests_on = hidden_why[k * 81 + spot] = tuple((0, c, e) for c in self.tally.places[k] if c != spot)
            queue.append((spot, e, rests_on))
        else:
            self.held_back = True
        return True

    def _locked_candidates(
        self, queue: deque[tuple[int, int, tuple[Fact, ...]]], counts: list[int], placed: list[bool]
    ) -> bool:
        """Apply the first locked candidates (pointing or claiming) the run's state allows: a digit's
        places in a house all lie in one other house, so the digit goes from that house's other cells.
        True when it removed something (its singles are queued), or found a contradiction."""
        cands, base = self.cands, self.base
        for h in range(27):
            house = HOUSES[h]
            for e in range(1, 10):
                k = h * 10 + e
                if placed[k] or counts[k] < 2:
                    continue
                ebit = BIT[e]
                spots = [c for c in house if cands[c] & ebit]
                lines: tuple[set[int], ...] = (
                    ({ROW_OF[c] for c in spots}, {9 + COL_OF[c] for c in spots})
                    if h >= 18
                    else ({18 + BOX_OF[c] for c in spots},)
                )
                for other in lines:
                    if len(other) != 1:
                        continue
                    (o,) = other
                    targets = [c for c in HOUSES[o] if cands[c] & ebit and c not in spots]
                    if not targets:
                        continue
                    why = tuple((0, c, e) for c in house if base[c] & ebit and not cands[c] & ebit)
                    why += tuple((2, c, e) for c in spots)
                    for t in targets:
                        if not self._remove(t, e, why, queue, counts, placed):
                            return True
                    return True
        return False

    def _remove(
        self,
        cell: int,
        e: int,
        why: tuple[Fact, ...],
        queue: deque[tuple[int, int, tuple[Fact, ...]]],
        counts: list[int],
        placed: list[bool],
    ) -> bool:
        """Remove candidate ``e`` from ``cell`` because of ``why``, queueing the singles it leaves;
        False on a contradiction."""
        cands, base = self.cands, self.base
        ebit = BIT[e]
        if not cands[cell] & ebit:
            return True
        cands[cell] &= ~ebit
        self.cells_of[e] ^= _CELL_BIT[cell]
        self.parents[(0, cell, e)] = why
        left = cands[cell]
        if not left:
            self._contra(
                f"{cell_name(cell)} would have no candidate left", None, self._eliminated(cell, DIGITS_OF[base[cell]])
            )
            return False
        if POPCOUNT[left] == 1:
            queue.append((cell, DIGITS_OF[left][0], self._eliminated(cell, DIGITS_OF[base[cell] & ~left])))
        for h in _HOUSES_OF[cell]:
            k = h * 10 + e
            counts[k] -= 1
            if placed[k] or counts[k] > 1:
                continue
            house = HOUSES[h]
            if not counts[k]:
                why_h = tuple((0, c, e) for c in house if base[c] & ebit and (0, c, e) in self.parents)
                self._contra(f"{house_name(h)} would have no place for {e}", None, why_h)
                return False
            spot = next(c for c in house if cands[c] & ebit)
            queue.append((spot, e, tuple((0, c, e) for c in house if base[c] & ebit and c != spot)))
        return True

    def _contra(self, text: str, fact: Fact | None, why: tuple[Fact, ...]) -> None:
        self.contradiction = (text, why + ((fact,) if fact is not None else ()))

    def support(self, facts: Iterable[Fact]) -> set[Fact]:
        """Every fact ``facts`` rest on, back to the assumption."""
        seen: set[Fact] = set()
        stack = list(facts)
        while stack:
            fact = stack.pop()
            if fact in seen:
                continue
            seen.add(fact)
            stack.extend(self.parents.get(fact, ()))
        return seen

    def proof(self, support: set[Fact]) -> list[Fact]:
        """The facts of ``support``: placements in the order they were derived, then the others sorted.
        Every placement a run's facts rest on is one the run derived, so the proof is as long as the
        support, and the searches compare supports before they put one in order."""
        return [f for f in self.order if f in support] + sorted(f for f in support if f[0] != 1)


def _placements_text(proof: list[Fact], skip: int) -> str:
    placed = [f"{cell_name(c)} = {d}" for kind, c, d in proof if kind == 1 and c != skip]
    return join(placed) if placed else "nothing new"


def _nested_text(run: Run, proof: list[Fact]) -> str:
    used = set(proof)
    out = [f"{cell_name(c)} is not {d}" for _, c, d in run.nested_out if (0, c, d) in used]
    if not out:
        return ""
    return (
        f" (inside this case, {join(out)}, since assuming {'it' if len(out) == 1 else 'each'} leads to a contradiction)"
    )


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


def _contradiction(cell: int, digit: int, run: Run, name: str, nested: bool = False) -> Step:
    """The step that removes ``digit`` from ``cell`` because assuming it, ``run``, met a contradiction."""
    assert run.contradiction is not None
    text, why = run.contradiction
    proof = run.proof(run.support(why))
    return Step(
        f"{name} Contradiction",
        eliminations=[(cell, digit)],
        cells=_cells([proof], [cell]),
        digits=[digit],
        explanation=f"If {cell_name(cell)} were {digit}, then {_placements_text(proof, cell)}"
        f"{_nested_text(run, proof) if nested else ''}, and "
        f"{text}; so {cell_name(cell)} is not {digit}.",
    )


def _assumption_order(cg: Candidates) -> list[int]:
    """The empty cells in the order the searches assume their candidates: fewest candidates first,
    ties by cell."""
    return sorted(cg.empty_cells(), key=lambda c: (POPCOUNT[cg.cands[c]], c))


def _groups(cg: Candidates, tally: Tally, branches_max: int) -> list[tuple[int, list[tuple[int, int]]]]:
    """The branches a verity can rest on: each cell's candidates and each house's places of a digit
    (two to ``branches_max`` of them), with the house (-1 for a cell) for the step's wording."""
    cands = cg.cands
    groups: list[tuple[int, list[tuple[int, int]]]] = []
    for cell in range(81):
        if 2 <= POPCOUNT[cands[cell]] <= branches_max:
            groups.append((-1, [(cell, d) for d in DIGITS_OF[cands[cell]]]))
    for h in range(27):
        for digit in range(1, 10):
            spots = tally.places[h * 10 + digit]
            if 2 <= len(spots) <= branches_max:
                groups.append((h, [(c, digit) for c in spots]))
    return groups


def _verity(
    cg: Candidates,
    runs: dict[tuple[int, int], Run],
    groups: Iterable[tuple[int, list[tuple[int, int]]]],
    name: str,
    facts: dict[tuple[int, int], set[Fact]],
) -> Step | None:
    """The shortest verity of ``groups``, whose branches have all been run and found no contradiction.
    ``facts`` keeps each run's facts as a set, made once: a run is a branch of up to four groups. (A
    copy of such a set has the same layout as the set itself, so ``common`` holds its facts in the same
    order.)"""
    cands = cg.cands
    best: tuple[int, Step] | None = None
    for h, branches in groups:
        branch_runs = [runs[b] for b in branches]
        for b, r in zip(branches, branch_runs, strict=True):
            if b not in facts:
                facts[b] = set(r.parents)
        common = set(facts[branches[0]])
        for b in branches[1:]:
            common &= facts[b]
        for fact in common:
            kind, cell, digit = fact
            if kind == 1 and cg.values[cell]:
                continue
            if kind == 0 and not cands[cell] & BIT[digit]:
                continue
            if kind == 1 and (cell, digit) in branches:
                continue
            supports = [r.support([fact]) for r in branch_runs]
            size = sum(len(support) for support in supports)
            if best is not None and size >= best[0]:
                continue
            proofs = [r.proof(support) for r, support in zip(branch_runs, supports, strict=True)]
            outcome = f"{cell_name(cell)} = {digit}" if kind else f"{cell_name(cell)} is not {digit}"
            cases = "; ".join(
                f"if {cell_name(c)} = {d}: {_placements_text(p, c)}"
                for (c, d), r, p in zip(branches, branch_runs, proofs, strict=True)
            )
            if h < 0:
                cell0 = branches[0][0]
                intro = f"Whichever of {_either(str(d) for _, d in branches)} {cell_name(cell0)} holds"
            else:
                d0 = branches[0][1]
                intro = f"Wherever the {d0} of {house_name(h)} goes ({_either(cell_name(c) for c, _ in branches)})"
            step = Step(
                f"{name} Verity",
                placements=[(cell, digit)] if kind else [],
                eliminations=[] if kind else [(cell, digit)],
                cells=_cells(proofs, [c for c, _ in branches]),
                digits=sorted({digit, *(d for _, d in branches)}),
                explanation=f"{intro}, {outcome} ({cases}); so {outcome}.",
            )
            best = (size, step)
    return best[1] if best is not None else None


# The runs of a forcing-chain search that found nothing, with their grid: the forcing-net search,
# tried next on the same grid, takes over every run that held back no single, since its own run of
# that assumption would be the same.
_unused_chains: dict[tuple[int, ...], tuple[Tally, dict[tuple[int, int], Run]]] = kept({})


def _forcing(cg: Candidates, *, chain: bool, locked: bool = False) -> Step | None:
    """The first proof found, assuming the candidates of the cells with the fewest candidates first:
    a contradiction as soon as one assumption meets it; else, once all of a cell's candidates are run,
    the shortest verity among the groups of branches (a cell's candidates, a house's places of a
    digit) that this cell completes."""
    name = "Forcing Chain" if chain else "Forcing Net"
    key = (*cg.values, *cg.cands)
    kept = _unused_chains.pop(key, None)
    _unused_chains.clear()
    tally, earlier = kept if kept is not None else (Tally(cg), {})
    same = {} if chain or locked else {assumed: run for assumed, run in earlier.items() if not run.held_back}
    groups = _groups(cg, tally, 9 if locked else MAX_BRANCHES)
    # For each cell, the groups that have a branch in it; for each group, how many of its cells are
    # still to run.
    waiting: dict[int, list[int]] = {}
    left: list[int] = []
    for i, (_, branches) in enumerate(groups):
        cells = {c for c, _ in branches}
        left.append(len(cells))
        for c in cells:
            waiting.setdefault(c, []).append(i)
    runs: dict[tuple[int, int], Run] = {}
    facts: dict[tuple[int, int], set[Fact]] = {}
    for cell in _assumption_order(cg):
        for digit in DIGITS_OF[cg.cands[cell]]:
            run = runs[(cell, digit)] = same.get((cell, digit)) or Run(
                cg, cell, digit, chain=chain, tally=tally, locked=locked
            )
            if run.contradiction is not None:
                return _contradiction(cell, digit, run, name)
        ready = []
        for i in waiting.get(cell, ()):
            left[i] -= 1
            if not left[i]:
                ready.append(groups[i])
        verity = _verity(cg, runs, ready, name, facts)
        if verity is not None:
            return verity
    if chain:
        _unused_chains[key] = (tally, runs)
    return None


def forcing_chain(cg: Candidates) -> Step | None:
    """A contradiction or verity reached by inferences that each rest on one earlier fact."""
    return _forcing(cg, chain=True)


def forcing_net(cg: Candidates) -> Step | None:
    """A contradiction or verity reached by singles that may rest on several earlier facts."""
    return _forcing(cg, chain=False)


def locked_forcing_net(cg: Candidates) -> Step | None:
    """A forcing net whose assumptions also follow locked candidates (pointing and claiming): tried
    only when the nets of singles find nothing."""
    return _forcing(cg, chain=False, locked=True)


def nested_forcing_net(cg: Candidates) -> Step | None:
    """A forcing net contradiction whose assumption also follows locked candidates and removes what
    an assumption made inside it contradicts (a nested net). The last resort before Brute Force: the
    first contradiction found is taken, trying cells with the fewest candidates first."""
    tally = Tally(cg)
    for cell in _assumption_order(cg):
        for digit in DIGITS_OF[cg.cands[cell]]:
            run = Run(cg, cell, digit, chain=False, tally=tally, locked=True, nested=True)
            if run.contradiction is not None:
                return _contradiction(cell, digit, run, "Forcing Net", nested=True)
    return None
