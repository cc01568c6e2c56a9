"""Replay a solve path and report every way it fails to be a sound, complete solution.

Starting from the puzzle's candidates (the digits not already in a cell's row, column or box),
each step's placements fill cells (removing the digit from their peers) and its eliminations
remove candidates. The path is sound when no step places a wrong digit, places a cell twice,
removes a candidate the solution needs or removes something that is not there, every step
changes something, and the grid ends at the solution. Each step must also be justified by the
cells it names (:mod:`sudokupool.sudoku.justify`), whatever technique it claims.
"""

from __future__ import annotations

import re
from typing import Final

from sudokupool.sudoku.candidates import Candidates
from sudokupool.sudoku.grid import EMPTY, GridError, parse_grid
from sudokupool.sudoku.justify import unjustified

_CELL: Final = re.compile(r"r([1-9])c([1-9])")
_HOUSE: Final = re.compile(r"(row|column|box) [1-9]")
_FIELDS: Final = ("technique", "score", "placements", "eliminations", "cells", "houses", "digits", "explanation")
MAX_ERRORS: Final = 20


def _cell_index(name: object) -> int | None:
    if not isinstance(name, str):
        return None
    match = _CELL.fullmatch(name)
    if match is None:
        return None
    return (int(match[1]) - 1) * 9 + int(match[2]) - 1


def _is_digit(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 9


def _moves(step: dict[str, object], key: str, where: str, errors: list[str]) -> list[tuple[int, int]]:
    """The (cell, digit) pairs under ``key``, reporting malformed entries."""
    items = step.get(key)
    if not isinstance(items, list):
        errors.append(f"{where}: {key} must be a list")
        return []
    moves = []
    for item in items:
        cell = _cell_index(item.get("cell")) if isinstance(item, dict) else None
        digit = item.get("digit") if isinstance(item, dict) else None
        if cell is None or not _is_digit(digit) or set(item) != {"cell", "digit"}:
            errors.append(f"{where}: malformed {key} entry {item!r} (want {{'cell': 'r1c1'..'r9c9', 'digit': 1-9}})")
            continue
        assert isinstance(digit, int)
        moves.append((cell, digit))
    return moves


def _check_structure(step: object, where: str, errors: list[str]) -> bool:
    if not isinstance(step, dict):
        errors.append(f"{where}: a step must be an object")
        return False
    missing = [f for f in _FIELDS if f not in step]
    if missing:
        errors.append(f"{where}: missing field(s) {', '.join(missing)}")
        return False
    ok = True
    if not isinstance(step["technique"], str) or not step["technique"]:
        errors.append(f"{where}: technique must be a non-empty string")
        ok = False
    if not isinstance(step["score"], int) or isinstance(step["score"], bool) or step["score"] < 0:
        errors.append(f"{where}: score must be a non-negative integer")
        ok = False
    if not isinstance(step["explanation"], str) or not step["explanation"].strip():
        errors.append(f"{where}: explanation must be a non-empty string")
        ok = False
    cells, houses, digits = step["cells"], step["houses"], step["digits"]
    if not isinstance(cells, list) or any(_cell_index(c) is None for c in cells):
        errors.append(f"{where}: cells must be a list of cell names r1c1..r9c9")
        ok = False
    if not isinstance(houses, list) or any(not isinstance(h, str) or not _HOUSE.fullmatch(h) for h in houses):
        errors.append(f"{where}: houses must be a list like 'row 3', 'column 5', 'box 7'")
        ok = False
    if not isinstance(digits, list) or not all(_is_digit(d) for d in digits):
        errors.append(f"{where}: digits must be a list of integers 1-9")
        ok = False
    return ok


def replay(puzzle: str, solution: str, solve_path: list[dict[str, object]]) -> list[str]:
    """Errors found replaying ``solve_path`` on ``puzzle`` against ``solution``; empty when it is sound."""
    errors: list[str] = []
    try:
        cg = Candidates.from_puzzle(parse_grid(puzzle))
    except (GridError, IndexError, TypeError, ValueError) as exc:
        return [f"puzzle: {exc}"]
    if len(solution) != 81 or not solution.isdigit() or "0" in solution:
        return ["solution: must be 81 digits 1-9"]
    truth = [ord(ch) - 48 for ch in solution]
    if not isinstance(solve_path, list):
        return ["solve_path must be a list of steps"]
    for index, step in enumerate(solve_path, start=1):
        if len(errors) >= MAX_ERRORS:
            errors.append("... (further errors not reported)")
            return errors
        technique = step.get("technique") if isinstance(step, dict) else None
        where = f"step {index} ({technique})"
        before = len(errors)
        if not _check_structure(step, where, errors):
            continue
        placements = _moves(step, "placements", where, errors)
        eliminations = _moves(step, "eliminations", where, errors)
        if len(errors) == before:
            errors.extend(f"{where}: {problem}" for problem in unjustified(cg, step))
        changed = False
        for cell, digit in placements:
            name = f"r{cell // 9 + 1}c{cell % 9 + 1}"
            if cg.values[cell]:
                errors.append(f"{where}: places {digit} in {name}, which already holds {cg.values[cell]}")
                continue
            if digit != truth[cell]:
                errors.append(f"{where}: places {digit} in {name}, but the solution has {truth[cell]}")
            elif not cg.has(cell, digit):
                errors.append(f"{where}: places {digit} in {name}, which is no longer a candidate there")
            cg.place(cell, digit)
            changed = True
        for cell, digit in eliminations:
            name = f"r{cell // 9 + 1}c{cell % 9 + 1}"
            if digit == truth[cell] and not cg.values[cell]:
                errors.append(f"{where}: eliminates {digit} from {name}, the solution's digit there")
            if cg.eliminate(cell, digit):
                changed = True
            else:
                errors.append(f"{where}: eliminates {digit} from {name}, which is not a candidate there")
        if not changed:
            errors.append(f"{where}: the step changes nothing")
    final = "".join(str(v) if v else EMPTY for v in cg.values)
    if final != solution:
        unfilled = final.count(EMPTY)
        if unfilled:
            errors.append(f"the path leaves {unfilled} cell(s) empty")
        wrong = sum(1 for f, s in zip(final, solution, strict=True) if f != EMPTY and f != s)
        if wrong:
            errors.append(f"the path ends with {wrong} cell(s) differing from the solution")
    return errors
