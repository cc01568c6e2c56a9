"""The Sudoku engine: grids, a fast solver, layout transforms, canonical forms, share codes and the generator."""

from typing import Final

#: A puzzle's difficulty, easiest first: its level is its index here plus one.
DIFFICULTIES: Final = ("Easy", "Medium", "Hard", "Expert")
