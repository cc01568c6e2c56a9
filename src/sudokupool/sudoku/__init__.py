"""The Sudoku engine: grids, a fast solver, layout transforms, canonical forms, share codes and the generator."""
