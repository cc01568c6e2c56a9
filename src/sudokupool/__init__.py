"""sudokupool: a read-only HTTP API over an in-memory pool of Sudoku puzzles."""

from __future__ import annotations

__version__ = "2.0.0"
