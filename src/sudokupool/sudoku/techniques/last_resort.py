"""The last resort: Brute Force, when no technique of the grader applies.

HoDoKu's name and score (10000) for placing one cell of the solution found by trial. The grader
tries it only after every other technique, so that every puzzle with one solution gets a complete
path; the cell chosen is the first with the fewest candidates, where a trial is shortest.
"""

from __future__ import annotations

from sudokupool.sudoku.candidates import POPCOUNT, Candidates
from sudokupool.sudoku.grid import cell_name
from sudokupool.sudoku.techniques.step import Step


def brute_force(cg: Candidates, solution: str) -> Step:
    """Place the solution's digit in the empty cell with the fewest candidates."""
    cell = min(cg.empty_cells(), key=lambda c: (POPCOUNT[cg.cands[c]], c))
    digit = ord(solution[cell]) - 48
    return Step(
        "Brute Force",
        placements=[(cell, digit)],
        cells=[cell],
        digits=[digit],
        explanation=f"No pattern applies here, so try the candidates of {cell_name(cell)}: "
        f"only {digit} leads to a solution, so {cell_name(cell)} = {digit}.",
    )
