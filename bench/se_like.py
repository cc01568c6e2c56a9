"""A Sudoku-Explainer-like rating by a second solve, for the experiment of ``python -m bench se-like``.

Sudoku Explainer (SE) rates a puzzle by the hardest of its steps, always taking the step it rates lowest; it has
no ALS moves, Sue de Coq, finned fish or grouped nodes, so above its basic techniques everything is a chain, and a
chain's rating grows with its length. This solve uses only the grader's finders that SE has an equivalent of, rates
each step on SE's published scale (the ratings are SE's as Sukaku Explainer's wiki lists them, "Difficulty ratings
in Sudoku Explainer v1.2.1"; no SE code is used), takes at every state the lowest-rated step it finds, and rates
the puzzle by the largest. The chain searches here are this module's own (breadth first over the grader's AIC
graph, restricted to SE's three kinds of chain); the forcing chains and nets are the grader's ``Run``.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable

from sudokupool.sudoku.candidates import BIT, DIGITS_OF, POPCOUNT, Candidates
from sudokupool.sudoku.grid import HOUSES, PEER_MASK
from sudokupool.sudoku.techniques import (
    aic,
    als,
    fish,
    forcing,
    intersections,
    memo,
    single_digit,
    subsets,
    uniqueness,
    wings,
)
from sudokupool.sudoku.techniques.singles import full_house, hidden_single, naked_single
from sudokupool.sudoku.techniques.step import Step, length_steps


@dataclasses.dataclass(frozen=True)
class Table:
    """SE's base ratings of the chaining techniques, how a chain's length is counted, and which extra searches
    run. The defaults are the table chosen on the sample and held-out sets (the best lowest of their two
    Spearman figures with ties ordered by score); SE's own bases for X-, Y- and XY-chains would be 6.5-6.6, 6.6-6.7
    and 7.0, with the chain's targets counted (``chain_extra`` 2), and no Turbot Fish."""

    x_cycle: float = 6.5
    x_chain: float = 6.5
    y_cycle: float = 6.6
    y_chain: float = 6.6
    xy_cycle: float = 6.6
    xy_chain: float = 6.6
    forcing_chain: float = 7.0  # a contradiction, or a verity of two branches (SE's binary chains)
    nishio: float = 7.5
    multiple: float = 8.0  # a verity of three or more branches (SE's cell and region forcing chains)
    dynamic: float = 8.5  # forcing nets (SE's dynamic forcing chains)
    dynamic_plus: float = 9.0  # nets following locked candidates
    nested: float = 9.5
    chain_extra: int = 0  # nodes counted besides the chain's own (SE's targets at both ends would be 2)
    net_nodes_per_cell: float = 2.0  # a net's nodes per cell it names
    nishio_nodes_per_placement: float = 2.0
    use_nishio: bool = True
    shortest_forcing: bool = True  # the lowest-rated forcing step of all, not the first found
    ape: float = (
        0.0  # aligned pair exclusion (SE: 6.2); 0 leaves it out: here it changed no figure and cost half the time
    )
    ate: float = 7.5  # aligned triplet exclusion; 0 leaves it out
    # Finned and sashimi X-Wings, Swordfish, Jellyfish (SE has none; Sukaku Explainer's later versions do); 0: out
    finned_2: float = 0.0
    finned_3: float = 0.0
    finned_4: float = 0.0
    # Skyscraper, 2-String Kite, Turbot Fish and Empty Rectangle (Sukaku Explainer's "Turbot Fish"); 0: out
    turbot: float = 4.3
    # ALS-XZ as Sukaku Explainer's WXYZ-, VWXYZ-... Wings: ALS_BASE + ALS_PER_CELL for each cell past 4; 0: out
    als_base: float = 0.0
    als_per_cell: float = 0.2
    split_contradictions: bool = True  # a chain's empty cell or house rates as multiple forcing chains

    def length(self, nodes: float) -> float:
        return 0.1 * length_steps(int(nodes))


# (rating, finder): SE's basic techniques in the order of their ratings, each our finder of the same pattern.
BASIC: tuple[tuple[float, Callable[[Candidates], Step | None]], ...] = (
    (2.6, intersections.pointing),
    (2.8, intersections.claiming),
    (3.0, subsets.naked_pair),
    (3.2, fish.x_wing),
    (3.4, subsets.hidden_pair),
    (3.6, subsets.naked_triple),
    (3.8, fish.swordfish),
    (4.0, subsets.hidden_triple),
    (4.2, wings.xy_wing),
    (4.4, wings.xyz_wing),
    (4.5, uniqueness.uniqueness_1),
    (4.5, uniqueness.uniqueness_2),
    (4.5, uniqueness.uniqueness_4),
    (4.6, uniqueness.uniqueness_3),
    (5.0, subsets.naked_quadruple),
    (5.2, fish.jellyfish),
    (5.4, subsets.hidden_quadruple),
    (5.6, uniqueness.bug_plus_1),
)


FINNED = (
    fish.finned_x_wing,
    fish.sashimi_x_wing,
    fish.finned_swordfish,
    fish.sashimi_swordfish,
    fish.finned_jellyfish,
    fish.sashimi_jellyfish,
)


TURBOT = (single_digit.skyscraper, single_digit.two_string_kite, single_digit.turbot_fish, single_digit.empty_rectangle)


def _successors(g: aic._Graph, kind: str) -> list[list[int]]:
    """The AIC graph's successor lists (``g.next``) restricted to SE's kind of chain: ``x`` one digit only
    (strong and weak links between cells), ``y`` strong links inside bivalue cells and weak links of one digit
    between cells, ``xy`` every link."""
    if kind == "xy":
        return g.next
    out: list[list[int]] = []
    for i in range(len(g.strong)):
        d, cell = g.digit[i], g.cells[i]
        if kind == "x":
            out.append([2 * j + 1 for j in g.strong[i] if g.digit[j] == d])
            out.append([2 * j for j in g.weak[i] if g.digit[j] == d])
        else:
            out.append([2 * j + 1 for j in g.strong[i] if g.cells[j] == cell])
            out.append([2 * j for j in g.weak[i] if g.digit[j] == d and g.cells[j] != cell])
    return out


def shortest_chain(cg: Candidates, kind: str) -> tuple[int, bool, Step] | None:
    """The shortest AIC or continuous nice loop of ``kind`` that changes something: its node count, whether it
    is a loop, and its step."""
    g = aic._graph(cg, grouped=False)
    succ = _successors(g, kind)
    best: tuple[int, bool, list[tuple[int, int]], list[tuple[int, int]]] | None = None
    # The nodes whose "true" state makes each node false: a chain ending there closes a loop on it.
    closers: list[set[int]] = [set() for _ in g.strong]
    for j in range(len(g.strong)):
        for state in succ[2 * j + 1]:
            closers[state >> 1].add(j)
    for start in range(len(g.strong)):
        if not succ[2 * start]:
            continue
        back = closers[start]
        parent: dict[int, int] = {2 * start: -1}
        frontier = [2 * start]
        depth = 1
        limit = aic.MAX_NODES if best is None else best[0] - 1
        found = None
        while frontier and found is None and depth < limit:
            depth += 1
            nxt = []
            for state in frontier:
                for child in succ[state]:
                    if child in parent:
                        continue
                    parent[child] = state
                    nxt.append(child)
                    if not child & 1 or depth < 4:
                        continue
                    end = child >> 1
                    nodes = aic.chain_nodes(parent, child)
                    placements, elim = aic._conclude(g, cg, start, end)
                    if (placements or elim) and (end == start or len(set(nodes)) == len(nodes)):
                        found = (depth, False, placements, elim)
                        break
                    if depth > 4 and end in back and len(set(nodes)) == len(nodes):
                        elim = aic._loop_eliminations(g, cg, nodes)
                        if elim:
                            found = (depth, True, [], elim)
                            break
                if found is not None:
                    break
            frontier = nxt
        if found is not None:
            best = found
    if best is None:
        return None
    depth, loop, placements, elim = best
    # ``cells`` holds only the node count, for the dump.
    return depth, loop, Step(f"{kind} chain", placements=placements, eliminations=elim, cells=[-1] * depth)


def aligned_exclusion(cg: Candidates, size: int) -> Step | None:
    """SE's aligned pair (``size`` 2) and triplet (3) exclusion, over cells of one house: a combination of
    candidates of the cells is impossible when two of them that see each other share a digit, or when a cell
    outside them would be left with no candidate (all of its candidates are taken by base cells it sees); a
    candidate in no possible combination goes."""
    cands, empty = cg.cands, set(cg.empty_cells())
    seen: set[tuple[int, ...]] = set()
    for house in HOUSES:
        cells = [c for c in house if c in empty and POPCOUNT[cands[c]] >= 2]
        for base in itertools.combinations(cells, size):
            if base in seen:
                continue
            seen.add(base)
            # The outside cells seeing two or more base cells whose candidates those cells could take.
            watchers = []
            for x in empty:
                if x in base:
                    continue
                sees = tuple(i for i, b in enumerate(base) if PEER_MASK[b] >> x & 1)
                if len(sees) >= 2 and POPCOUNT[cands[x]] <= len(sees):
                    watchers.append((sees, cands[x]))
            if not watchers:
                continue
            possible = [0] * size
            for combo in itertools.product(*(DIGITS_OF[cands[b]] for b in base)):
                if len(set(combo)) < size:
                    continue  # the base cells of one house all see each other
                if any(m & ~sum(BIT[combo[i]] for i in sees) == 0 for sees, m in watchers):
                    continue
                for i, d in enumerate(combo):
                    possible[i] |= BIT[d]
            elim = [(b, d) for i, b in enumerate(base) for d in DIGITS_OF[cands[b] & ~possible[i]]]
            if elim:
                return Step(f"Aligned {'Pair' if size == 2 else 'Triplet'} Exclusion", eliminations=elim)
    return None


def nishio(cg: Candidates) -> tuple[int, Step] | None:
    """SE's Nishio: a candidate whose placement, followed through its digit alone (its peers lose it, a house
    left with one place for it gets it there), leaves a house with no place for it. The fewest placements."""
    best: tuple[int, Step] | None = None
    for d in range(1, 10):
        for start in cg.digit_cells(d):
            contradiction, count = _nishio_run(cg, d, start)
            if contradiction and (best is None or count < best[0]):
                best = (count, Step("Nishio", eliminations=[(start, d)], cells=[-1] * count))
    return best


def _nishio_run(cg: Candidates, d: int, start: int) -> tuple[bool, int]:
    """Place ``d`` at ``start`` and follow digit ``d`` alone: (a contradiction met, placements made)."""
    bit = BIT[d]
    left = 0
    for c in range(81):
        if cg.cands[c] & bit:
            left |= 1 << c
    done = [any(cg.values[c] == d for c in HOUSES[h]) for h in range(27)]
    houses_of = [(c // 9, 9 + c % 9, 18 + (c // 27) * 3 + (c % 9) // 3) for c in range(81)]
    queue = [start]
    placed = 0
    while queue:
        c = queue.pop(0)
        if not left >> c & 1:
            return True, placed + 1
        placed += 1
        left &= ~PEER_MASK[c] & ~(1 << c)
        for h in houses_of[c]:
            done[h] = True
        for h in range(27):
            if done[h]:
                continue
            spots = [x for x in HOUSES[h] if left >> x & 1]
            if not spots:
                return True, placed
            if len(spots) == 1 and spots[0] not in queue:
                queue.append(spots[0])
    return False, placed


def forcing_steps(cg: Candidates, table: Table, chain: bool, locked: bool) -> list[tuple[int, int, Step]]:
    """Every forcing step of one kind on this grid: (branches, cells named, step); a contradiction counts one
    branch. ``shortest_forcing`` off takes only the grader's first proof."""
    name = "Forcing Chain" if chain else "Forcing Net"
    tally = forcing.Tally(cg)
    runs: dict[tuple[int, int], forcing.Run] = {}
    out: list[tuple[int, int, Step]] = []
    for cell in forcing._assumption_order(cg):
        for digit in DIGITS_OF[cg.cands[cell]]:
            run = runs[(cell, digit)] = forcing.Run(cg, cell, digit, chain=chain, tally=tally, locked=locked)
            if run.contradiction is not None:
                step = forcing._contradiction(cell, digit, run, name)
                # A cell left empty or a house left without a place rests on several chains at once (SE's
                # multiple forcing chains); a cell forced two ways, on two (SE's binary chains).
                several = "no candidate left" in run.contradiction[0] or "no place for" in run.contradiction[0]
                out.append((3 if several and chain and table.split_contradictions else 1, len(step.cells), step))
    facts: dict[tuple[int, int], set[forcing.Fact]] = {}
    for group in forcing._groups(cg, tally, 9 if locked else forcing.MAX_BRANCHES):
        if any(runs[b].contradiction is not None for b in group[1]):
            continue
        step = forcing._verity(cg, runs, [group], name, facts)
        if step is not None:
            out.append((len(group[1]), len(step.cells), step))
    return out


def rate_forcing(table: Table, kind: str, found: list[tuple[int, int, Step]]) -> tuple[float, Step] | None:
    best: tuple[float, Step] | None = None
    for branches, cells, step in found:
        if kind == "chain":
            base = table.forcing_chain if branches <= 2 else table.multiple
        else:
            base = table.dynamic if kind == "net" else table.dynamic_plus
        rating = base + table.length(cells * table.net_nodes_per_cell)
        if best is None or rating < best[0]:
            best = (rating, step)
    return best


def first_forcing(cg: Candidates, kind: str) -> list[tuple[int, int, Step]]:
    finder = {"chain": forcing.forcing_chain, "net": forcing.forcing_net, "locked": forcing.locked_forcing_net}[kind]
    step = finder(cg)
    if step is None:
        return []
    branches = 1 if step.technique.endswith("Contradiction") else 2 + (len(step.digits) > 2 and kind == "chain")
    return [(branches, len(step.cells), step)]


def chain_step(cg: Candidates, table: Table) -> tuple[float, Step]:
    """The lowest-rated chaining step: SE's X-, Y- and XY-chains and cycles, Nishio, forcing chains, nets."""
    best: tuple[float, Step] | None = None
    if table.ape:
        step = aligned_exclusion(cg, 2)
        if step is not None:
            return table.ape, step
    bases = {"x": (table.x_chain, table.x_cycle), "y": (table.y_chain, table.y_cycle)}
    bases["xy"] = (table.xy_chain, table.xy_cycle)
    for kind in ("x", "y", "xy"):
        if best is not None and best[0] <= min(bases[kind]):
            continue
        found = shortest_chain(cg, kind)
        if found is not None:
            nodes, loop, step = found
            rating = (
                bases[kind][1] + table.length(nodes)
                if loop
                else bases[kind][0] + table.length(nodes + table.chain_extra)
            )
            if best is None or rating < best[0]:
                best = (rating, step)
    if table.use_nishio and (best is None or best[0] > table.nishio):
        got = nishio(cg)
        if got is not None:
            rating = table.nishio + table.length(got[0] * table.nishio_nodes_per_placement)
            if best is None or rating < best[0]:
                best = (rating, got[1])
    if table.ate and (best is None or best[0] > table.ate):
        step = aligned_exclusion(cg, 3)
        if step is not None:
            best = (table.ate, step)
    for kind, base in (("chain", table.forcing_chain), ("net", table.dynamic), ("locked", table.dynamic_plus)):
        if best is not None and best[0] <= base:
            break
        found_forcing = forcing_steps(cg, table, kind == "chain", kind == "locked") if table.shortest_forcing else []
        if not table.shortest_forcing:
            found_forcing = first_forcing(cg, kind)
        got_f = rate_forcing(table, kind, found_forcing)
        if got_f is not None and (best is None or got_f[0] < best[0]):
            best = got_f
    if best is None:
        step = forcing.nested_forcing_net(cg)
        assert step is not None, "no step found"
        best = (table.nested + table.length(len(step.cells) * table.net_nodes_per_cell), step)
    return best


def se_like(puzzle: str, table: Table) -> tuple[float, list[tuple[float, str, int]]]:
    """The puzzle's SE-like rating and its steps' (rating, technique, size): a chain's nodes, a Nishio's
    placements, the cells any other step names."""
    memo.forget()
    cg = Candidates.from_puzzle(puzzle)
    finned = (table.finned_2, table.finned_2, table.finned_3, table.finned_3, table.finned_4, table.finned_4)
    extra = [*zip(finned, FINNED, strict=True), *((table.turbot, finder) for finder in TURBOT)]
    # Lowest rating first; the sort keeps the order of equal ratings.
    if table.als_base:
        extra.append((table.als_base, als.als_xz))
    ordered = sorted([*BASIC, *((r, f) for r, f in extra if r)], key=lambda pair: pair[0])
    ordered = [(1.0, full_house), (1.5, hidden_single), (2.3, naked_single), *ordered]
    steps: list[tuple[float, str, int]] = []
    while cg.values.count(0):
        rated: tuple[float, Step] | None = None
        for rating, finder in ordered:
            step = finder(cg)
            if step is not None:
                if step.technique == "Almost Locked Set XZ-Rule":
                    rating += table.als_per_cell * max(0, len(step.cells) - 4)
                rated = (rating, step)
                break
        if rated is None:
            rated = chain_step(cg, table)
        rating, step = rated
        for cell, digit in step.placements:
            cg.place(cell, digit)
        for cell, digit in step.eliminations:
            cg.eliminate(cell, digit)
        # SE's ratings have one decimal; rounding keeps base plus length from differing by float noise.
        steps.append((round(rating, 1), step.technique, len(step.cells)))
    return max((r for r, _, _ in steps), default=0.0), steps


__all__ = ["Table", "se_like"]
