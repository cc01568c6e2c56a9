"""sudoku/technique_table.py: the one table of the grader's techniques."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import sudokupool.sudoku.technique_table as table
from sudokupool.pool.pack import technique_table
from sudokupool.sudoku.technique_table import LEVEL, NAMES, SCORES, TECHNIQUES

TECHNIQUES_DIR = Path(importlib.import_module("sudokupool.sudoku.techniques").__file__ or "").parent


def test_names_are_unique_and_levels_are_difficulties() -> None:
    assert len(set(NAMES)) == len(TECHNIQUES) == len(SCORES) == len(LEVEL)
    assert all(1 <= technique.level <= 4 and technique.score > 0 for technique in TECHNIQUES)
    assert list(SCORES) == list(LEVEL) == list(NAMES)


def test_each_module_is_a_technique_module_and_holds_the_names_it_writes() -> None:
    """A name written out in a module of sudoku/techniques is a row of that module (finned and sashimi fish
    and the forcing chains and nets build their names, so they are not written out anywhere)."""
    for technique in TECHNIQUES:
        importlib.import_module(f"sudokupool.sudoku.techniques.{technique.module}")
    for path in TECHNIQUES_DIR.glob("*.py"):
        source = path.read_text()
        for technique in TECHNIQUES:
            if re.search(rf"[\"']{re.escape(technique.name)}[\"']", source) and path.stem != "step":
                assert technique.module == path.stem, technique


def test_the_pack_writes_this_table() -> None:
    assert [(t.name, t.level, t.score) for t in technique_table()] == [(t.name, t.level, t.score) for t in TECHNIQUES]


def test_the_table_imports_nothing_of_ours() -> None:
    """So the OpenAPI document and the pack can have it without importing the finders."""
    tree = ast.parse(Path(table.__file__ or "").read_text())
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
    modules = [n.module or "" for n in imports if isinstance(n, ast.ImportFrom)]
    modules += [alias.name for n in imports if isinstance(n, ast.Import) for alias in n.names]
    assert not [m for m in modules if m.startswith("sudokupool")]
