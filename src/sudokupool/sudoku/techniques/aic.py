"""Alternating inference chains (AIC) and discontinuous nice loops, plain and grouped.

A node is "digit d in one of these cells": a single cell, or a group of two or three cells of one
box on one line. A strong link (one of two nodes is true) joins the only two places of a digit in a
house, or the two candidates of a bivalue cell; a weak link (not both true) joins nodes of one digit
whose cells all see each other, or two candidates of one cell. Starting from "the first node is
false" and alternating strong and weak links, a chain ending at "the last node is true" proves that
one of its two ends is true: a candidate that sees both ends goes. When both ends lie in one cell
(HoDoKu's discontinuous nice loop) the cell keeps only those two digits, or the start itself is
proved true when the chain comes back to it.

The search is breadth first from every node, so the shortest chain is found first.
"""

from __future__ import annotations

import copy

from sudokupool.sudoku.candidates import BIT, DIGITS_OF, Candidates
from sudokupool.sudoku.grid import BOX_OF, COL_OF, HOUSE_MASK, HOUSES, PEER_MASK, PEERS, ROW_OF, cell_name
from sudokupool.sudoku.techniques.memo import digit_masks, kept
from sudokupool.sudoku.techniques.step import Step, join, removal_text

MAX_NODES = 16
# The ways a house splits into the lines of a box, as masks of its cells: a row or column by box, a
# box by row and by column (as one box, a box has a single part, which makes no strong link).
_SEGMENTS = tuple(
    tuple(
        tuple(sum(1 << c for c in house if line_of[c] == line) for line in sorted({line_of[c] for c in house}))
        for line_of in ((ROW_OF, COL_OF) if h >= 18 else (BOX_OF,))
    )
    for h, house in enumerate(HOUSES)
)


class _Graph:
    """The nodes of a candidate grid and their strong and weak links.

    The single-cell nodes come first, in cell order; a grouped graph (:meth:`with_groups`) adds the
    groups after them and shares the single cells' data, so one grid's nodes are set up once for
    both searches."""

    def __init__(self, cg: Candidates) -> None:
        cands = cg.cands
        self.cells: list[tuple[int, ...]] = []
        self.digit: list[int] = []
        self.mask: list[int] = []
        self.seen: list[int] = []
        # The node of digit d in the single cell c, by ``c * 10 + d``.
        self.single = single = [-1] * 810
        for c in range(81):
            for d in DIGITS_OF[cands[c]]:
                single[c * 10 + d] = len(self.cells)
                self.cells.append((c,))
                self.digit.append(d)
                self.mask.append(1 << c)
                self.seen.append(PEER_MASK[c])
        self.n_singles = n = len(self.cells)
        # Each digit's places, as a cell bitmask.
        self.places = digit_masks(cg)
        # Weak links between single cells of one digit that see each other (in cell order), and
        # between two candidates of one cell (which never both hold).
        self.near: list[list[int]] = []
        for i in range(n):
            d = self.digit[i]
            self.near.append(self._singles(self.seen[i] & self.places[d], d))
        self.inside: list[list[int]] = [[] for _ in range(n)]
        self.strong: list[list[int]] = [[] for _ in range(n)]
        # Strong links of one digit: a house whose places for it are two single cells, in two boxes
        # for a row or column (as in the grouped graph, where a line's places are split by box).
        for d in range(1, 10):
            for h in range(27):
                spots = self.places[d] & HOUSE_MASK[h]
                if spots.bit_count() != 2:
                    continue
                low = spots & -spots
                first, second = low.bit_length() - 1, (spots ^ low).bit_length() - 1
                if h >= 18 or BOX_OF[first] != BOX_OF[second]:
                    a, b = single[first * 10 + d], single[second * 10 + d]
                    if b not in self.strong[a]:
                        self.strong[a].append(b)
                        self.strong[b].append(a)
        self._cell_links(cands)
        self.weak = [near + inside for near, inside in zip(self.near, self.inside, strict=True)]
        self._states()

    def _singles(self, reach: int, d: int) -> list[int]:
        """The single-cell nodes of digit ``d`` in the cells of the bitmask ``reach``, in cell order."""
        single, out = self.single, []
        while reach:
            low = reach & -reach
            reach ^= low
            out.append(single[(low.bit_length() - 1) * 10 + d])
        return out

    def _cell_links(self, cands: list[int]) -> None:
        """Links inside a cell: two candidates never both hold; in a bivalue cell one of them does."""
        single = self.single
        for c in range(81):
            here = [single[c * 10 + d] for d in DIGITS_OF[cands[c]]]
            for i in here:
                self.inside[i] = [j for j in here if j != i]
            if len(here) == 2:
                i, j = here
                self.strong[i].append(j)
                self.strong[j].append(i)

    def with_groups(self, cg: Candidates) -> _Graph:
        """The same grid's graph with group nodes (two or three cells of a box on one line)."""
        cands = cg.cands
        g = copy.copy(self)
        g.cells, g.digit, g.mask, g.seen = self.cells[:], self.digit[:], self.mask[:], self.seen[:]
        single = self.single
        # The group node of a digit by its cells' mask.
        group_index: dict[tuple[int, int], int] = {}
        groups_of: list[list[int]] = [[] for _ in range(10)]
        for d in range(1, 10):
            bit = BIT[d]
            for box in range(9):
                spots = [c for c in HOUSES[18 + box] if cands[c] & bit]
                for line_of in (ROW_OF, COL_OF):
                    for line in {line_of[c] for c in spots}:
                        group = tuple(c for c in spots if line_of[c] == line)
                        if len(group) < 2:
                            continue
                        m = sum(1 << c for c in group)
                        if (d, m) not in group_index:
                            group_index[(d, m)] = len(g.cells)
                            groups_of[d].append(len(g.cells))
                            g.cells.append(group)
                            g.digit.append(d)
                            g.mask.append(m)
                            seen = (1 << 81) - 1
                            for c in group:
                                seen &= PEER_MASK[c]
                            g.seen.append(seen)
        n = len(g.cells)
        mask, seen_all, digit = g.mask, g.seen, g.digit
        # Weak links between nodes of one digit: disjoint, and every cell of one sees every cell of the
        # other. In node order: the single cells, then the groups; then, for a single cell, its other
        # digits.
        far: list[list[int]] = [[] for _ in range(n)]
        for j in range(self.n_singles, n):
            d = digit[j]
            for k in self._singles(seen_all[j] & self.places[d], d):
                far[k].append(j)
        near = self.near[:]
        for i in range(self.n_singles, n):
            d, mi, si = digit[i], mask[i], seen_all[i]
            near.append(self._singles(si & self.places[d], d))
            far[i] = [j for j in groups_of[d] if j != i and not mi & mask[j] and mask[j] & ~si == 0]
        inside = self.inside + [[] for _ in range(self.n_singles, n)]
        g.weak = [a + b + c for a, b, c in zip(near, far, inside, strict=True)]
        g.strong = [[] for _ in range(n)]
        # Strong links of one digit: a house whose places for it are exactly two nodes, the first
        # one holding the house's first place.
        for d in range(1, 10):
            for h in range(27):
                held = self.places[d] & HOUSE_MASK[h]
                if held.bit_count() < 2:
                    continue
                for segments in _SEGMENTS[h]:
                    parts = [part for part in (held & segment for segment in segments) if part]
                    if len(parts) != 2:
                        continue
                    parts.sort(key=lambda part: part & -part)  # by their first cell
                    a, b = (
                        single[(part.bit_length() - 1) * 10 + d]
                        if part & (part - 1) == 0
                        else group_index.get((d, part))
                        for part in parts
                    )
                    if a is not None and b is not None and b not in g.strong[a]:
                        g.strong[a].append(b)
                        g.strong[b].append(a)
        for c in range(81):
            here = [single[c * 10 + d] for d in DIGITS_OF[cands[c]]]
            if len(here) == 2:
                i, j = here
                g.strong[i].append(j)
                g.strong[j].append(i)
        g._states()
        return g

    def _states(self) -> None:
        """The search's successors by state (node * 2 + 1 for "node true", node * 2 for "node false"):
        a false node makes its strong partners true, a true node its weak partners false."""
        self.next: list[list[int]] = []
        for i in range(len(self.strong)):
            self.next.append([2 * j + 1 for j in self.strong[i]])
            self.next.append([2 * j for j in self.weak[i]])

    def name(self, i: int) -> str:
        return "/".join(cell_name(c) for c in self.cells[i])


_graphs: dict[tuple[int, ...], list[_Graph]] = kept({})


def _graph(cg: Candidates, grouped: bool) -> _Graph:
    """The graph of ``cg``, with or without groups, kept for the last candidate state."""
    key = tuple(cg.cands)
    if key not in _graphs:
        _graphs.clear()
        _graphs[key] = [_Graph(cg)]
    kept = _graphs[key]
    if grouped and len(kept) == 1:
        kept.append(kept[0].with_groups(cg))
    return kept[-1] if grouped else kept[0]


# path, placements, eliminations, and whether the path is a continuous nice loop (closing on its start)
Found = tuple[list[int], list[tuple[int, int]], list[tuple[int, int]], bool]


def _loop_eliminations(g: _Graph, cg: Candidates, path: list[int]) -> list[tuple[int, int]]:
    """What a continuous nice loop removes: ``path`` alternates strong and weak links, starting with a
    strong one, and its last node is weakly linked back to the first. Then every link of the loop has
    exactly one true end, so each weak link acts as a strong one: a digit's weak link across cells
    removes the digit from every cell seeing both ends, a weak link inside a cell the cell's other
    digits."""
    cands = cg.cands
    own = {(c, g.digit[node]) for node in path for c in g.cells[node]}
    elim: set[tuple[int, int]] = set()
    weak = [(path[k], path[k + 1]) for k in range(1, len(path) - 1, 2)] + [(path[-1], path[0])]
    for u, v in weak:
        du, dv = g.digit[u], g.digit[v]
        if du == dv:
            targets = g.seen[u] & g.seen[v] & ~(g.mask[u] | g.mask[v]) & g.places[du]
            elim.update(_bits(targets, du))
        elif len(g.cells[u]) == 1 and g.cells[u] == g.cells[v]:
            (cell,) = g.cells[u]
            elim.update((cell, d) for d in DIGITS_OF[cands[cell]] if d not in (du, dv))
    elim -= own
    return sorted(elim)


def _bits(mask: int, digit: int) -> list[tuple[int, int]]:
    """(cell, digit) for every cell of ``mask``, in cell order."""
    out = []
    while mask:
        low = mask & -mask
        mask ^= low
        out.append((low.bit_length() - 1, digit))
    return out


def _conclude(g: _Graph, cg: Candidates, start: int, end: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """What "start is true or end is true" removes (or places)."""
    cands = cg.cands
    ds, de = g.digit[start], g.digit[end]
    if start == end:
        return ([(g.cells[start][0], ds)], []) if len(g.cells[start]) == 1 else ([], [])
    if ds == de:
        if g.mask[start] & g.mask[end]:
            return [], []
        targets = g.seen[start] & g.seen[end] & g.places[ds]
        return [], _bits(targets, ds)
    if len(g.cells[start]) != 1 or len(g.cells[end]) != 1:
        return [], []
    (cs,), (ce,) = g.cells[start], g.cells[end]
    if cs == ce:
        return [], [(cs, d) for d in DIGITS_OF[cands[cs]] if d not in (ds, de)]
    if ce in PEERS[cs]:
        elim = []
        if cands[ce] & BIT[ds]:
            elim.append((ce, ds))
        if cands[cs] & BIT[de]:
            elim.append((cs, de))
        return [], elim
    return [], []


def chain_nodes(parent: dict[int, int], state: int) -> list[int]:
    """The nodes of the chain a breadth-first search over states (``2 * node + value``) reached ``state`` by,
    from its start (whose ``parent`` is -1)."""
    path = [state]
    while parent[path[-1]] != -1:
        path.append(parent[path[-1]])
    return [s // 2 for s in reversed(path)]


def _search(cg: Candidates, grouped: bool) -> tuple[_Graph, Found] | None:
    g = _graph(cg, grouped)
    succ, digit, seen, cells = g.next, g.digit, g.seen, g.cells
    best: Found | None = None
    for start in range(len(g.strong)):
        if not g.strong[start]:
            continue
        # What an end of the start's digit must see for "start or end" to remove anything.
        ds = digit[start]
        reach = seen[start] & g.places[ds]
        lone = len(cells[start]) == 1
        back = set(g.weak[start])  # weak links are symmetric: the nodes weakly linked to the start
        # States: node * 2 + 1 for "node true", node * 2 for "node false"; the start is false.
        root = start * 2
        parent: dict[int, int] = {root: -1}
        frontier = [root]
        depth = 1
        limit = MAX_NODES if best is None else len(best[0]) - 1
        found: Found | None = None
        while frontier and found is None and depth < limit:
            depth += 1
            nxt = []
            for state in frontier:
                if state & 1:
                    # A true node's successors are false nodes, which end no chain; but a true node weakly
                    # linked back to the start closes a continuous nice loop.
                    if depth > 4 and state >> 1 in back:
                        nodes = chain_nodes(parent, state)
                        if len(set(nodes)) == len(nodes):
                            elim = _loop_eliminations(g, cg, nodes)
                            if elim:
                                found = (nodes, [], elim, True)
                                break
                    for child in succ[state]:
                        if child not in parent:
                            parent[child] = state
                            nxt.append(child)
                    continue
                for child in succ[state]:
                    if child in parent:
                        continue
                    parent[child] = state
                    nxt.append(child)
                    if depth < 4:
                        continue
                    other = child >> 1
                    # A quick look at the ends first: _conclude finds nothing in these.
                    if digit[other] == ds:
                        if other != start and not reach & seen[other]:
                            continue
                    elif not lone or len(cells[other]) != 1:
                        continue
                    placements, elim = _conclude(g, cg, start, other)
                    if placements or elim:
                        nodes = chain_nodes(parent, child)
                        found = (nodes, placements, elim, False)
                        if not placements and start in g.weak[other] and len(set(nodes)) == len(nodes):
                            # The chain closes into a continuous nice loop: take all of its eliminations.
                            more = _loop_eliminations(g, cg, nodes)
                            if len(more) > len(elim):
                                found = (nodes, [], more, True)
                        break
                if found is not None:
                    break
            frontier = nxt
        if found is not None:
            best = found
    return (g, best) if best is not None else None


def _name(g: _Graph, path: list[int], grouped: bool, loop: bool) -> str:
    if loop:
        return "Grouped Continuous Nice Loop" if grouped else "Continuous Nice Loop"
    same_cell = len(g.cells[path[0]]) == 1 and g.cells[path[0]] == g.cells[path[-1]]
    if same_cell:
        return "Grouped Discontinuous Nice Loop" if grouped else "Discontinuous Nice Loop"
    return "Grouped AIC" if grouped else "AIC"


def _chain(cg: Candidates, grouped: bool) -> Step | None:
    found = _search(cg, grouped)
    if found is None:
        return None
    g, (path, placements, elim, loop) = found
    uses_groups = any(len(g.cells[i]) > 1 for i in path)
    if grouped and not uses_groups:
        grouped = False  # found in the grouped search, but needs no group
    technique = _name(g, path, grouped, loop)
    steps = []
    for k, node in enumerate(path):
        verb = "is not" if k % 2 == 0 else "is"
        where = g.name(node)
        steps.append(
            f"{where} {verb} {g.digit[node]}"
            if len(g.cells[node]) == 1
            else f"{g.digit[node]} {'is not in' if k % 2 == 0 else 'is in'} {where}"
        )
    first, last = steps[0], steps[-1]
    start, end = path[0], path[-1]
    if loop:
        return Step(
            technique,
            eliminations=elim,
            cells=_loop_cells(g, path),
            digits=sorted({g.digit[i] for i in path}),
            explanation=f"The loop {_loop_text(g, path)} closes on itself (=: one of the two is true, -: not "
            f"both), so every link in it has exactly one true end and each '-' acts as '=': "
            f"remove {removal_text(elim)}.",
        )
    if placements:
        outcome = f"so {g.name(start)} = {g.digit[start]}"
    else:
        either = f"{g.name(start)} holds {g.digit[start]} or {g.name(end)} holds {g.digit[end]}"
        outcome = f"so {either}: remove {removal_text(elim)}"
    cells: list[int] = []
    for node in path:
        for c in g.cells[node]:
            if c not in cells:
                cells.append(c)
    return Step(
        technique,
        placements=placements,
        eliminations=elim,
        cells=cells,
        digits=sorted({g.digit[i] for i in path}),
        explanation=f"If {first}, then {join([*steps[1:-1], last]) if len(steps) > 2 else last}; {outcome}.",
    )


def _loop_cells(g: _Graph, path: list[int]) -> list[int]:
    cells: list[int] = []
    for node in path:
        cells.extend(c for c in g.cells[node] if c not in cells)
    return cells


def _loop_text(g: _Graph, path: list[int]) -> str:
    """``5r1c1=5r1c4-5r3c6=...-5r1c1``: digit and cells of each node, '=' strong and '-' weak links."""
    text = ""
    for k, node in enumerate([*path, path[0]]):
        if k:
            text += "=" if k % 2 else "-"
        text += f"{g.digit[node]}{g.name(node)}"
    return text


def aic(cg: Candidates) -> Step | None:
    """An alternating inference chain (or discontinuous nice loop) over single cells."""
    return _chain(cg, grouped=False)


def grouped_aic(cg: Candidates) -> Step | None:
    """The same with group nodes (two or three cells of a box on one line)."""
    return _chain(cg, grouped=True)
