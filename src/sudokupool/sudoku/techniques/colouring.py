"""Simple Colors (single-digit colouring).

The strong links of one digit join cells into clusters; colouring each cluster with two
alternating colours, exactly one colour holds the digit. Trap: a cell seeing both colours loses
the digit. Wrap: when two cells of one colour see each other, that colour is false everywhere.
"""

from __future__ import annotations

from sudokupool.sudoku.candidates import Candidates
from sudokupool.sudoku.grid import PEERS, cell_name
from sudokupool.sudoku.techniques.memo import by_digit
from sudokupool.sudoku.techniques.single_digit import strong_links
from sudokupool.sudoku.techniques.step import Step, removal_text

#: What a colouring proves: its eliminations, and why.
Found = tuple[list[tuple[int, int]], str]


def _clusters(cg: Candidates, digit: int) -> list[tuple[list[int], list[int]]]:
    """Each cluster of the digit's strong-link graph as its two colour classes."""
    adjacent: dict[int, set[int]] = {}
    for _, a, b in strong_links(cg, digit):
        adjacent.setdefault(a, set()).add(b)
        adjacent.setdefault(b, set()).add(a)
    colour: dict[int, int] = {}
    clusters = []
    for start in sorted(adjacent):
        if start in colour:
            continue
        colour[start] = 0
        classes: tuple[list[int], list[int]] = ([start], [])
        queue = [start]
        while queue:
            cell = queue.pop()
            for nxt in sorted(adjacent[cell]):
                if nxt not in colour:
                    colour[nxt] = 1 - colour[cell]
                    classes[colour[nxt]].append(nxt)
                    queue.append(nxt)
        clusters.append((sorted(classes[0]), sorted(classes[1])))
    return clusters


def _wrap(digit: int, on: list[int], off: list[int]) -> Found | None:
    """Wrap: a colour with two cells in one house cannot be the true one."""
    for same, other in ((on, off), (off, on)):
        clash = next(((a, b) for i, a in enumerate(same) for b in same[i + 1 :] if b in PEERS[a]), None)
        if clash:
            elim = [(c, digit) for c in same]
            return elim, (
                f"Colouring the strong links of {digit} puts {cell_name(clash[0])} and "
                f"{cell_name(clash[1])} in the same colour although they see each other, so that colour "
                f"({', '.join(map(cell_name, same))}) cannot hold {digit} and the other "
                f"({', '.join(map(cell_name, other))}) does: "
                f"remove {removal_text(elim)}."
            )
    return None


def _trap(digit: int, on: list[int], off: list[int], cells: list[int], coloured: set[int]) -> Found | None:
    """Trap: one of the two colours is true, so a cell seeing both colours is not the digit."""
    elim: list[tuple[int, int]] = []
    for c in cells:
        if c in coloured:
            continue
        peers = PEERS[c]
        if any(a in peers for a in on) and any(b in peers for b in off):
            elim.append((c, digit))
    if not elim:
        return None
    return elim, (
        f"Colouring the strong links of {digit} splits them into "
        f"({', '.join(map(cell_name, on))}) and ({', '.join(map(cell_name, off))}); one colour "
        f"holds {digit}, so a cell seeing both colours cannot: remove {removal_text(elim)}."
    )


@by_digit
def simple_colors(cg: Candidates, digit: int) -> Step | None:
    cells = cg.digit_cells(digit)
    for on, off in _clusters(cg, digit):
        coloured = set(on) | set(off)
        found = _wrap(digit, on, off) or _trap(digit, on, off, cells, coloured)
        if found:
            elim, explanation = found
            return Step(
                "Simple Colors", eliminations=elim, cells=sorted(coloured), digits=[digit], explanation=explanation
            )
    return None
