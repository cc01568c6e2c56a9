"""Chains: X-Chain (one digit) and XY-Chain (bivalue cells).

Both prove "if the first cell is not z, the last cell is z" through alternating inferences, so
one of the two ends holds z and any cell seeing both ends loses z. The search is breadth first,
so the shortest chain from each start is found first.
"""

from __future__ import annotations

from itertools import pairwise

from sudokupool.sudoku.candidates import BIT, DIGITS_OF, POPCOUNT, Candidates, common_peers
from sudokupool.sudoku.grid import PEERS, cell_name
from sudokupool.sudoku.techniques.memo import by_digit
from sudokupool.sudoku.techniques.single_digit import strong_links
from sudokupool.sudoku.techniques.step import Step, removal_text

Node = tuple[int, int]  # (cell, state)


def _path(parent: dict[Node, Node | None], node: Node) -> list[Node]:
    path = [node]
    prev = parent[node]
    while prev is not None:
        path.append(prev)
        prev = parent[prev]
    path.reverse()
    return path


def _step(technique: str, digit: int, path: list[Node], elim: list[tuple[int, int]], proof: str) -> Step:
    """The step of a chain along ``path`` that puts ``digit`` at one end or the other: ``proof`` says how, and
    ``elim``, the ``digit`` of the cells seeing both ends, goes."""
    return Step(
        technique,
        eliminations=elim,
        cells=[c for c, _ in path],
        digits=[digit],
        explanation=f"{proof} remove {removal_text(elim)}.",
    )


@by_digit
def x_chain(cg: Candidates, digit: int) -> Step | None:
    cands = cg.cands
    bit = BIT[digit]
    cells = cg.digit_cells(digit)
    strong: dict[int, set[int]] = {}
    for _, a, b in strong_links(cg, digit):
        strong.setdefault(a, set()).add(b)
        strong.setdefault(b, set()).add(a)
    weak = {c: [p for p in cells if p in PEERS[c]] for c in strong}
    best: tuple[list[Node], list[tuple[int, int]]] | None = None
    for start in sorted(strong):
        # State 0: "not the digit", state 1: "the digit", both assuming the start is not it.
        root: Node = (start, 0)
        parent: dict[Node, Node | None] = {root: None}
        frontier = [root]
        while frontier and (best is None or len(_path(parent, frontier[0])) < len(best[0])):
            nxt: list[Node] = []
            for node in frontier:
                cell, state = node
                neighbours = sorted(strong.get(cell, ())) if state == 0 else weak.get(cell, [])
                for other in neighbours:
                    child = (other, 1 - state)
                    if child in parent:
                        continue
                    parent[child] = node
                    nxt.append(child)
                    if child[1] == 1 and other != start:
                        path = _path(parent, child)
                        if len(path) < 4 or len({c for c, _ in path}) != len(path):
                            continue
                        elim = [(c, digit) for c in sorted(common_peers(start, other)) if cands[c] & bit]
                        if elim and (best is None or len(path) < len(best[0])):
                            best = (path, elim)
            frontier = nxt
    if best:
        path, elim = best
        chain = cell_name(path[0][0])
        for (_, state), (cell, _) in pairwise(path):
            chain += ("=" if state == 0 else "-") + cell_name(cell)
        first, last = cell_name(path[0][0]), cell_name(path[-1][0])
        return _step(
            "X-Chain",
            digit,
            path,
            elim,
            f"Follow {digit} along {chain} ('=': one of the two cells is {digit}, '-': not both): "
            f"if {first} is not {digit} then {last} is, so",
        )
    return None


def xy_chain(cg: Candidates) -> Step | None:
    cands = cg.cands
    bivalue = [c for c, m in enumerate(cands) if POPCOUNT[m] == 2]
    links = {c: [p for p in bivalue if p in PEERS[c]] for c in bivalue}
    best: tuple[int, list[Node], list[tuple[int, int]]] | None = None
    for start in bivalue:
        for z in DIGITS_OF[cands[start]]:
            # A node (cell, v) reads "cell is v", assuming the start is not z.
            root: Node = (start, DIGITS_OF[cands[start] & ~BIT[z]][0])
            parent: dict[Node, Node | None] = {root: None}
            frontier = [root]
            depth = 1
            while frontier and (best is None or depth < len(best[1])):
                nxt: list[Node] = []
                depth += 1
                for node in frontier:
                    cell, value = node
                    for other in links[cell]:
                        if not cands[other] & BIT[value]:
                            continue
                        child = (other, DIGITS_OF[cands[other] & ~BIT[value]][0])
                        if child in parent:
                            continue
                        parent[child] = node
                        nxt.append(child)
                        if child[1] == z and depth >= 3:
                            path = _path(parent, child)
                            if len({c for c, _ in path}) != len(path):
                                continue
                            elim = [(c, z) for c in sorted(common_peers(start, other)) if cands[c] & BIT[z]]
                            if elim and (best is None or len(path) < len(best[1])):
                                best = (z, path, elim)
                frontier = nxt
    if best is None:
        return None
    z, path, elim = best
    chain = " - ".join(f"{cell_name(c)} ({'/'.join(map(str, DIGITS_OF[cands[c]]))})" for c, _ in path)
    then = ", ".join(f"{cell_name(c)} = {v}" for c, v in path)
    first, last = cell_name(path[0][0]), cell_name(path[-1][0])
    return _step(
        "XY-Chain", z, path, elim, f"Along {chain}, if {first} is not {z} then {then}, so {first} or {last} is {z}:"
    )
