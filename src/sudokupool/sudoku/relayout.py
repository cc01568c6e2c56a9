"""Carry a puzzle's answers to an equivalent layout: its solution and solve path, word for word.

Two layouts of one puzzle have the same canonical form; :func:`between` composes the transformation
that takes one onto the form with the inverse of the other's, giving a :class:`Relayout` that moves
cells, houses and digits from the first layout to the second. A solve path moved with it replays on the
moved puzzle (a transformation keeps every house a house, so every deduction stays sound), and its
explanations name the moved cells, houses and digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from sudokupool.sudoku.grid import EMPTY, HOUSES, cell_name, house_name
from sudokupool.sudoku.transform import Transform

_CELL_NAME: Final = re.compile(r"r([1-9])c([1-9])")
_HOUSE_NAME: Final = re.compile(r"(row|column|box) ([1-9])")
# The pieces of an explanation that name something a layout moves, longest first: cells, several lines
# of one kind ("rows 1, 4 and 7"), a house, counts that are not digits, a phrase that names every kind of
# house at once (true in any layout), the bare words for a kind of line, and lastly a bare digit.
_PIECES: Final = re.compile(
    r"(?P<cell>r[1-9]c[1-9])"
    r"|(?P<lines>(?P<kind>rows|columns) (?P<list>[1-9](?:, [1-9])*(?: and [1-9])?))"
    r"|(?P<house>(?:[Rr]ow|[Cc]olumn|[Bb]ox) [1-9])"
    r"|(?P<count>[0-9]+ (?:cells|digits))"
    r"|(?P<all>row, column and box)"
    r"|\b(?P<word>rows|columns|row|column)\b"
    r"|(?<![0-9])(?P<digit>[1-9])(?![0-9])"
)
_SWAP: Final = {"row": "column", "column": "row", "rows": "columns", "columns": "rows"}


@dataclass(frozen=True, slots=True)
class Relayout:
    """A move of cells and digits from one layout of a puzzle to an equivalent one.

    ``cells[c]`` is where cell ``c`` goes, ``digits[d - 1]`` what digit ``d`` becomes, and ``transposes``
    says whether rows become columns.
    """

    cells: tuple[int, ...]
    digits: tuple[int, ...]
    transposes: bool

    @property
    def houses(self) -> tuple[int, ...]:
        """Where each house (rows 0-8, columns 9-17, boxes 18-26) goes."""
        index = {frozenset(house): h for h, house in enumerate(HOUSES)}
        return tuple(index[frozenset(self.cells[c] for c in house)] for house in HOUSES)

    def inverse(self) -> Relayout:
        cells = [0] * 81
        for c, to in enumerate(self.cells):
            cells[to] = c
        digits = [0] * 9
        for d, to in enumerate(self.digits, start=1):
            digits[to - 1] = d
        return Relayout(tuple(cells), tuple(digits), self.transposes)

    def grid(self, grid: str) -> str:
        """``grid`` (81 characters, ``.`` for empty) in the other layout."""
        out = [EMPTY] * 81
        for c, ch in enumerate(grid):
            out[self.cells[c]] = ch if ch == EMPTY else str(self.digits[ord(ch) - 49])
        return "".join(out)

    def cell_name(self, name: str) -> str:
        """``r4c7`` in the other layout."""
        match = _CELL_NAME.fullmatch(name)
        if match is None:
            raise ValueError(f"not a cell name: {name!r}")
        return cell_name(self.cells[(int(match[1]) - 1) * 9 + int(match[2]) - 1])

    def house_name(self, name: str, houses: tuple[int, ...] | None = None) -> str:
        """``row 3`` in the other layout."""
        match = _HOUSE_NAME.fullmatch(name)
        if match is None:
            raise ValueError(f"not a house name: {name!r}")
        kind = ("row", "column", "box").index(match[1])
        return house_name((houses or self.houses)[kind * 9 + int(match[2]) - 1])

    def text(self, text: str, houses: tuple[int, ...] | None = None) -> str:
        """An explanation with every cell, house, line and digit it names moved to the other layout."""
        moved = houses or self.houses

        def piece(match: re.Match[str]) -> str:
            if match["cell"]:
                return self.cell_name(match["cell"])
            if match["lines"]:
                kind = 0 if match["kind"] == "rows" else 1
                lines = sorted(moved[kind * 9 + int(n) - 1] for n in re.findall(r"[1-9]", match["list"]))
                words = [str(h % 9 + 1) for h in lines]
                listed = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
                return f"{('rows', 'columns')[lines[0] // 9]} {listed}"
            if match["house"]:
                name = self.house_name(match["house"].lower(), moved)
                return name.capitalize() if match["house"][0].isupper() else name
            if match["count"] or match["all"]:
                return match[0]
            if match["word"]:
                return _SWAP[match["word"]] if self.transposes else match["word"]
            return str(self.digits[int(match["digit"]) - 1])

        return _PIECES.sub(piece, text)

    def step(self, step: dict[str, Any], houses: tuple[int, ...] | None = None) -> dict[str, Any]:
        """A solve-path step (docs/export-format.md) in the other layout; eliminations in cell order, as
        the grader writes them, and every other list in its own order."""
        moved = houses or self.houses

        def move(item: dict[str, Any]) -> dict[str, Any]:
            return {"cell": self.cell_name(item["cell"]), "digit": self.digits[item["digit"] - 1]}

        eliminations = [move(item) for item in step["eliminations"]]
        eliminations.sort(key=lambda item: (_cell_index(item["cell"]), item["digit"]))
        out = dict(step)
        out["placements"] = [move(item) for item in step["placements"]]
        out["eliminations"] = eliminations
        out["cells"] = [self.cell_name(name) for name in step["cells"]]
        out["houses"] = [self.house_name(name, moved) for name in step["houses"]]
        out["digits"] = [self.digits[d - 1] for d in step["digits"]]
        out["explanation"] = self.text(step["explanation"], moved)
        return out

    def path(self, path: list[dict[str, Any]]) -> list[dict[str, Any]]:
        houses = self.houses
        return [self.step(step, houses) for step in path]


def _cell_index(name: str) -> int:
    return (int(name[1]) - 1) * 9 + int(name[3]) - 1


def from_transform(move: Transform) -> Relayout:
    """The :class:`Relayout` that ``move`` makes."""
    return Relayout(tuple(move.map_cell(c) for c in range(81)), move.digits, move.transpose)


def between(source: Transform, target: Transform) -> Relayout:
    """The move from a layout that ``source`` maps onto a canonical form to one that ``target`` maps onto it."""
    first, back = from_transform(source), from_transform(target).inverse()
    return Relayout(
        tuple(back.cells[to] for to in first.cells),
        tuple(back.digits[to - 1] for to in first.digits),
        first.transposes != back.transposes,
    )
