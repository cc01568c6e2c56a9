"""Carry a puzzle's answers to an equivalent layout: its solution and solve path, word for word.

Two layouts of one puzzle have the same canonical form; :func:`between` composes the transformation
that takes one onto the form with the inverse of the other's, giving a :class:`Relayout` that moves
cells, houses and digits from the first layout to the second. A solve path moved with it replays on the
moved puzzle (a transformation keeps every house a house, so every deduction stays sound), and its
explanations name the moved cells, houses and digits.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any, Final

import orjson

from sudokupool.sudoku import single_steps
from sudokupool.sudoku.grid import EMPTY, HOUSES, cell_name, house_name
from sudokupool.sudoku.single_steps import CLOSING, OPENING, TEMPLATES, step_json
from sudokupool.sudoku.transform import Transform

_CELL_NAME: Final = re.compile(r"r([1-9])c([1-9])")
_HOUSE_NAME: Final = re.compile(r"(row|column|box) ([1-9])")
#: After a line's number, the numbers of more lines of its kind ("rows 1, 4 and 7").
_MORE_LINES: Final = r"(?:, [1-9])*(?: and [1-9])?"
# The pieces of an explanation that name something a layout moves, longest first: cells, several lines
# of one kind, a house, counts that are not digits, a phrase that names every kind of house at once (true in
# any layout), the bare words for a kind of line, and lastly a bare digit. Written as a set of first characters, then
# the pieces by their second character (a lookbehind checks the first): a pattern that starts with a set lets the
# regex engine skip to those characters, where one that starts with a lookahead is tried at every one, and an
# alternative that starts with a character or a set is passed over at once when the next character is not it.
_PIECES: Final = re.compile(
    r"([rRcCbB0-9](?:"
    r"o(?:"
    rf"(?<=ro)(?:ws [1-9]{_MORE_LINES}|w [1-9]|w, column and box|(?<=\bro)ws?\b)"
    r"|(?<=Ro)w [1-9]"
    rf"|(?<=co)(?:lumns [1-9]{_MORE_LINES}|lumn [1-9]|(?<=\bco)lumns?\b)"
    r"|(?<=Co)lumn [1-9]"
    r"|(?<=[Bb]o)x [1-9]"
    r")"
    r"|[1-9](?<=r[1-9])c[1-9]"
    r"| (?<=[0-9] )(?:cells|digits)"
    r"|[0-9](?<=[0-9]{2})[0-9]* (?:cells|digits)"
    r"|(?<=[1-9])(?<![0-9]{2})(?![0-9])"
    r"))"
)
_SWAP: Final = {"row": "column", "column": "row", "rows": "columns", "columns": "rows"}
_SAME: Final = {word: word for word in _SWAP}
#: Between the explanations of a path while they are moved as one text (see :meth:`Names.path`).
_SEPARATOR: Final = "\x00"
_DIGITS: Final = "123456789"
#: The digits a step may name.
_DIGIT_VALUES: Final = frozenset(range(1, 10))
_CELL_NAMES: Final = tuple(cell_name(c) for c in range(81))
_HOUSE_NAMES: Final = tuple(house_name(h) for h in range(27))
#: A house's name as a sentence starts with it (``Row 3``).
_HOUSE_TITLES: Final = tuple(name.capitalize() for name in _HOUSE_NAMES)
#: A phrase that names every kind of house at once (true in any layout).
_EVERY_HOUSE: Final = "row, column and box"
#: Every piece of an explanation a layout moves by a table (all but lists of lines and counts), by its number in
#: :attr:`Names.moved`: cells, houses, house titles, digits, the words for lines, the phrase (then any other piece).
_TOKENS: Final = (*_CELL_NAMES, *_HOUSE_NAMES, *_HOUSE_TITLES, *_DIGITS, *_SWAP, _EVERY_HOUSE)
_TOKEN_NUMBER: Final = {token: number for number, token in enumerate(_TOKENS)}
_NONE: Final = len(_TOKENS)
#: The number of each cell's name, and of each house's, in :attr:`Names.moved`.
_CELL_NUMBER: Final = {name: _TOKEN_NUMBER[name] for name in _CELL_NAMES}
_HOUSE_NUMBER: Final = {name: _TOKEN_NUMBER[name] for name in _HOUSE_NAMES}
#: The first two cells of each row, then of each column; the first cell of each box.
_LINE_STARTS: Final = tuple((r * 9, r * 9 + 1) for r in range(9)) + tuple((c, 9 + c) for c in range(9))
_BOX_STARTS: Final = tuple(HOUSES[18 + b][0] for b in range(9))
_BOX_OF: Final = tuple((c // 27) * 3 + (c % 9) // 3 for c in range(81))
#: Each digit's name by the digit.
_DIGIT_NAMES: Final = ("", *_DIGITS)

#: A step of a solve path as JSON, as ``msgspec`` and ``orjson`` alike write it, and the one character after it if
#: any: a single's, whose explanation is its template's (:data:`TEMPLATES`) for its cell, digit and house (checked
#: by the backreferences, and a Full House's house word by the conditions), or any other (only ``step`` and ``after``
#: set). Its strings cannot hold an unescaped quote, so a key found after a quote is a key. :meth:`Names.path_json`
#: reads a path with ``findall`` (no match object a step), its groups in the order it unpacks them;
#: :meth:`Relayout.path_json` checks a step it does not hold with ``fullmatch``.
_STEP_JSON: Final = re.compile(
    r'(?P<step>\{"technique":"(?:(?P<naked>Naked Single)|(?P<full>Full House)|Hidden Single)",'
    r'"score":(?P<score>-?[0-9]+),"placements":\[\{"cell":"(?P<cell>r[1-9]c[1-9])","digit":(?P<digit>[1-9])\}\],'
    r'"eliminations":\[\],"cells":\["(?P=cell)"\],'
    r'"houses":\[(?(naked)|"(?P<house>(?:(?P<row>row)|(?P<column>column)|box) (?P<line>[1-9]))")\],'
    r'"digits":\[(?P=digit)\],"explanation":"(?(naked)'
    r"(?:(?P<held>The row, column and box of (?P=cell) already hold every digit except (?P=digit))"
    r"|After the earlier eliminations, (?P=digit) is the only candidate left in (?P=cell))"
    r"|(?(full)(?(row)Row|(?(column)Column|Box)) (?P=line) has only (?P=cell) left empty and misses only (?P=digit)"
    r"|In (?P=house), (?P=digit) fits only in (?P=cell))"
    r'), so (?P=cell) = (?P=digit)\."\}'
    r'|\{"technique":"[^"\\]*(?:\\.[^"\\]*)*","score":-?[0-9]+,"placements":\[[^\]]*\],"eliminations":\[[^\]]*\],'
    r'"cells":\[[^\]]*\],"houses":\[[^\]]*\],"digits":\[[^\]]*\],"explanation":"[^"\\]*(?:\\.[^"\\]*)*"\})'
    r"(?P<after>(?s:.)?)"
)
_CELL_AND_DIGIT: Final = itemgetter("cell", "digit")
#: Between two steps of a path as JSON: the closing of one, a comma and the opening of the next.
_BETWEEN: Final = CLOSING + "," + OPENING
#: What stands for a step that is not a single while the others are moved (no JSON text holds a raw NUL).
_OTHER: Final = "\x00"
#: Each byte itself, as a table for ``bytes.translate``; and the singles' forms so, but each moved to its form in a
#: layout whose rows are the columns.
_REST_OF_BYTES: Final = bytes(range(256))
_TRANSPOSED_FORMS: Final = bytes(single_steps.TRANSPOSED_FORMS) + _REST_OF_BYTES[len(single_steps.FORMS) :]
#: An elimination as JSON, as ``orjson`` writes one moved (its cell's name and its digit).
_ELIMINATION: Final = '{"cell":"%s","digit":%d}'


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
        """Where each house (rows 0-8, columns 9-17, boxes 18-26) goes: a line goes where its first two cells go
        (a row when they share one, else their column), a box where its first cell's box is."""
        cells = self.cells
        lines = []
        for first, second in _LINE_STARTS:
            a, b = cells[first], cells[second]
            lines.append(a // 9 if a // 9 == b // 9 else 9 + a % 9)
        return (*lines, *(18 + _BOX_OF[cells[first]] for first in _BOX_STARTS))

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
        relabelled = grid.translate(str.maketrans(_DIGITS, "".join(map(str, self.digits))))
        out = [EMPTY] * 81
        for ch, to in zip(relabelled, self.cells, strict=True):
            out[to] = ch
        return "".join(out)

    def names(self) -> Names:
        """The tables that move names (cells, houses, digits, words) to the other layout."""
        houses = self.houses
        # itemgetter reads a tuple's items without calling its __getitem__ (a slot wrapper) for each.
        to = itemgetter(*houses)
        moved = (
            *itemgetter(*self.cells)(_CELL_NAMES),
            *to(_HOUSE_NAMES),
            *to(_HOUSE_TITLES),
            *itemgetter(*self.digits)(_DIGIT_NAMES),
            *(_SWAP if self.transposes else _SAME).values(),
            _EVERY_HOUSE,
            "",
        )
        return Names(self, houses, moved)

    def path_json(self, steps: str) -> str:
        """A solve path as JSON (the steps between its brackets, as ``msgspec`` or ``orjson`` write them), moved:
        :meth:`path` without reading it but for the steps that are not singles. ``ValueError`` when the text is not
        steps written so (see :meth:`Names.path_json`)."""
        if not steps:
            return steps
        split = _split_steps(steps)
        if split is None:
            return self.names().path_json(steps)
        parts, keys = split
        texts = single_steps.table()[1]
        cells, digits = self.cells, self.digits
        forms = single_steps.TRANSPOSED_FORMS if self.transposes else range(len(single_steps.FORMS))
        moved = [texts[cells[cell]][digits[digit - 1] - 1][forms[form]] for cell, digit, form in filter(None, keys)]
        if len(moved) < len(keys):
            # The other steps, read and moved as :meth:`path` moves them; one the regex reads as a single (not as the
            # pack writes one) or as no step is left to :meth:`Names.path_json`.
            others = [OPENING + part + CLOSING for part, key in zip(parts, keys, strict=True) if key is None]
            names = self.names()
            for text in others:
                match = _STEP_JSON.fullmatch(text)
                if match is None or match["cell"]:
                    return names.path_json(steps)
            # A moved step is a dict in the order its text was read in: its JSON opens as that text did.
            read = [orjson.dumps(step).decode() for step in names.path([orjson.loads(text) for text in others])]
            done, singles = iter([text[len(OPENING) : -len(CLOSING)] for text in read]), iter(moved)
            moved = [next(singles) if key else next(done) for key in keys]
        # The path's opening and closing go on its first and last step rather than around the whole.
        moved[0] = OPENING + moved[0]
        moved[-1] += CLOSING
        return _BETWEEN.join(moved)

    def prepared_path(self, prepared: PreparedPath) -> str:
        """:meth:`path_json` of the text ``prepared`` was read from (:func:`prepare_path`): the same text, made by
        lookups (the singles' through byte tables, without a Python step each) and one join."""
        names = self.names()
        moved, digits = names.moved, self.digits
        cells, digit_indexes, forms = prepared.singles
        texts = single_steps.table()[1]
        by_cell = map(texts.__getitem__, cells.translate(bytes(self.cells) + _REST_OF_BYTES[81:]))
        by_digit = map(
            tuple.__getitem__, by_cell, digit_indexes.translate(bytes(d - 1 for d in digits) + _REST_OF_BYTES[9:])
        )
        singles = map(
            tuple.__getitem__, by_digit, forms.translate(_TRANSPOSED_FORMS if self.transposes else _REST_OF_BYTES)
        )
        lines = map(names._lines, prepared.lines)
        eliminations = map(names.eliminations_json, prepared.eliminations)
        table = (*moved, *singles, *prepared.literals, *lines, *eliminations)
        return "".join(map(table.__getitem__, prepared.order))

    def cell_name(self, name: str) -> str:
        """``r4c7`` in the other layout."""
        match = _CELL_NAME.fullmatch(name)
        if match is None:
            raise ValueError(f"not a cell name: {name!r}")
        return cell_name(self.cells[(int(match[1]) - 1) * 9 + int(match[2]) - 1])

    def house_name(self, name: str) -> str:
        """``row 3`` in the other layout."""
        match = _HOUSE_NAME.fullmatch(name)
        if match is None:
            raise ValueError(f"not a house name: {name!r}")
        kind = ("row", "column", "box").index(match[1])
        return house_name(self.houses[kind * 9 + int(match[2]) - 1])

    def text(self, text: str) -> str:
        """An explanation with every cell, house, line and digit it names moved to the other layout."""
        return self.names().text(text)

    def step(self, step: dict[str, Any]) -> dict[str, Any]:
        """A solve-path step (docs/export-format.md) in the other layout; eliminations in cell order, as
        the grader writes them, and every other list in its own order."""
        return self.names().step(step)

    def path(self, path: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A solve path in the other layout, step by step as :meth:`step` moves one."""
        return self.names().path(path)


@dataclass(frozen=True, slots=True)
class Names:
    """:meth:`Relayout.names`: the moved name of every cell, house and digit, and of every piece of an
    explanation but lists of lines, made once for a whole path (a step then costs lookups). ``moved[n]`` is the
    moved piece of number ``n`` (:data:`_TOKENS`; empty for a piece no table holds), found by its number in a table
    made once."""

    relayout: Relayout
    houses: tuple[int, ...]
    moved: tuple[str, ...]

    def text(self, text: str) -> str:
        """An explanation with every cell, house, line and digit it names moved to the other layout."""
        # Split on the pieces (odd indexes) and the text between them (even ones): a lookup a piece, all at once;
        # the few a table does not hold (lists of lines, counts) one by one.
        parts = _PIECES.split(text)
        pieces = parts[1::2]
        moved = list(map(self.moved.__getitem__, map(_TOKEN_NUMBER.get, pieces, repeat(_NONE))))
        if "" in moved:
            i = moved.index("")
            while True:
                piece = pieces[i]
                moved[i] = self._lines(piece) if piece.startswith(("rows ", "columns ")) else piece  # or a count
                try:
                    i = moved.index("", i + 1)
                except ValueError:
                    break
        parts[1::2] = moved
        return "".join(parts)

    def eliminations_json(self, pairs: bytes) -> str:
        """A step's eliminations (each one's cell, by its number in :attr:`moved`, and digit in turn) moved, as JSON
        in cell order (as :meth:`_step` writes them)."""
        moved, digits = self.moved, self.relayout.digits
        items = sorted([(moved[c], digits[d - 1]) for c, d in zip(pairs[::2], pairs[1::2], strict=True)])
        return "[" + ",".join([_ELIMINATION % item for item in items]) + "]"

    def _lines(self, piece: str) -> str:
        """``rows 1, 4 and 7`` in the other layout (the numbers in order)."""
        kind = 0 if piece.startswith("rows") else 1
        lines = sorted(self.houses[kind * 9 + int(n) - 1] for n in re.findall(r"[1-9]", piece))
        words = [str(h % 9 + 1) for h in lines]
        listed = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
        return f"{('rows', 'columns')[lines[0] // 9]} {listed}"

    def path(self, path: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """:meth:`Relayout.path`. A single is moved by its explanation's template (:data:`TEMPLATES`); the other
        steps' explanations are moved as one text, a separator between them that no explanation holds and no piece
        spans (it reads as a string's end to every piece): one split of the regex for the whole path instead of
        one a step."""
        moved = [self._single(step) for step in path]
        rest = [step for step, out in zip(path, moved, strict=True) if out is None]
        if not rest:
            return moved  # type: ignore[return-value]
        texts = [step["explanation"] for step in rest]
        joined = _SEPARATOR.join(texts)
        if joined.count(_SEPARATOR) != len(texts) - 1:
            others = iter([self.step(step) for step in rest])
        else:
            others = map(self._step, rest, self.text(joined).split(_SEPARATOR))
        return [next(others) if out is None else out for out in moved]

    def _single(self, step: dict[str, Any]) -> dict[str, Any] | None:
        """A single step moved by its explanation's template, or None when it is not one (as written)."""
        templates = TEMPLATES.get(step["technique"])
        if templates is None:
            return None
        cells, digits, houses, placements = step["cells"], step["digits"], step["houses"], step["placements"]
        if len(cells) != 1 or len(digits) != 1 or len(houses) > 1 or len(placements) != 1 or step["eliminations"]:
            return None
        cell, digit = cells[0], digits[0]
        if digit not in _DIGIT_VALUES or placements[0] != {"cell": cell, "digit": digit}:
            return None
        house, explanation = houses[0] if houses else "", step["explanation"]
        for template in templates:
            if template(cell, digit, house) == explanation:
                moved_cell, moved_digit = self.moved[_CELL_NUMBER[cell]], self.relayout.digits[digit - 1]
                moved_house = self.moved[_HOUSE_NUMBER[house]] if houses else ""
                out = dict(step)
                out["placements"] = [{"cell": moved_cell, "digit": moved_digit}]
                out["eliminations"] = []
                out["cells"] = [moved_cell]
                out["houses"] = [moved_house] if houses else []
                out["digits"] = [moved_digit]
                out["explanation"] = template(moved_cell, moved_digit, moved_house)
                return out
        return None

    def path_json(self, steps: str) -> str:
        """:meth:`Relayout.path_json` for any text, by a regex: a single's step is matched by it and written again
        moved (whatever its score, and whatever one character stands between two steps); the others are read as JSON
        and moved by :meth:`path`. ``ValueError`` when the text is not steps written so."""
        if not steps:
            return steps
        found = _STEP_JSON.findall(steps)
        # The steps follow one another from the start to the end, one character between two.
        if not found or found[-1][-1] or sum(map(len, map(itemgetter(0), found))) + len(found) - 1 != len(steps):
            raise ValueError("not a solve path as JSON")
        moved, digits = self.moved, self.relayout.digits
        out: list[str] = []
        others: list[str] = []
        for step, naked, full, score, cell, digit, house, _, _, _, held, after in found:
            if cell:
                technique = "Naked Single" if naked else "Full House" if full else "Hidden Single"
                template = TEMPLATES[technique][0 if held or not naked else 1]
                c, d = moved[_CELL_NUMBER[cell]], digits[int(digit) - 1]
                h = moved[_HOUSE_NUMBER[house]] if house else ""
                out.append(step_json(technique, score, c, d, h, template(c, d, h)))
            else:
                others.append(step)
                out.append(_OTHER)
            out.append(after)
        if not others:
            return "".join(out)
        pieces = "".join(out).split(_OTHER)
        done = [orjson.dumps(step).decode() for step in self.path([orjson.loads(text) for text in others])]
        return "".join(part for pair in zip(pieces, [*done, ""], strict=True) for part in pair)

    def step(self, step: dict[str, Any]) -> dict[str, Any]:
        """A solve-path step in the other layout (see :meth:`Relayout.step`)."""
        return self._step(step, self.text(step["explanation"]))

    def _step(self, step: dict[str, Any], explanation: str) -> dict[str, Any]:
        moved, digits = self.moved, self.relayout.digits
        out = dict(step)
        placements, eliminations = step["placements"], step["eliminations"]
        out["placements"] = (
            [{"cell": moved[_CELL_NUMBER[item["cell"]]], "digit": digits[item["digit"] - 1]} for item in placements]
            if placements
            else []
        )
        if eliminations:
            eliminations = [
                {"cell": moved[_CELL_NUMBER[item["cell"]]], "digit": digits[item["digit"] - 1]} for item in eliminations
            ]
            if len(eliminations) > 1:
                # Cell names (one digit a row and a column) sort as the cells do.
                eliminations.sort(key=_CELL_AND_DIGIT)
        out["eliminations"] = eliminations if eliminations else []
        out["cells"] = [moved[_CELL_NUMBER[cell]] for cell in step["cells"]]
        out["houses"] = [moved[_HOUSE_NUMBER[house]] for house in step["houses"]]
        out["digits"] = [digits[d - 1] for d in step["digits"]]
        out["explanation"] = explanation
        return out


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


#: The literals of prepared paths (:class:`PreparedPath`), one copy each, up to :data:`MAX_LITERALS` of them.
_LITERALS: Final[dict[str, str]] = {}
MAX_LITERALS: Final = 1 << 16
#: The number of pieces :attr:`Names.moved` holds: a prepared path's own pieces are numbered after them.
_MOVED: Final = len(_TOKENS) + 1
#: Each cell's name and each house's name by its number in :attr:`Names.moved` (the same numbers).
_NAME_NUMBER: Final = {**_CELL_NUMBER, **_HOUSE_NUMBER}
#: Each digit's number in :attr:`Names.moved` (``_DIGIT_NUMBER[d]``; nothing for 0).
_DIGIT_NUMBER: Final = (_NONE, *(_TOKEN_NUMBER[digit] for digit in _DIGITS))


@dataclass(frozen=True, slots=True)
class PreparedPath:
    """A solve path as JSON read once, so that :meth:`Relayout.prepared_path` moves it to any layout by lookups and
    one join (:func:`prepare_path`). The moved text is the join of ``order``'s pieces, numbered in turn: those of
    :attr:`Names.moved`; the moved singles (``singles``: their cells, digits less one and forms); ``literals``, the
    text no layout moves; the moved lists of lines (``lines``); and the moved eliminations of each step that has some
    (``eliminations``: each one's cell and digit in turn, sorted once moved)."""

    order: array[int]
    singles: tuple[bytes, bytes, bytes]
    literals: tuple[str, ...]
    lines: tuple[str, ...]
    eliminations: tuple[bytes, ...]

    @property
    def size(self) -> int:
        """About the bytes this holds alone: its objects' (the literals, most of which every path shares, apart)."""
        pieces = (*self.singles, *self.lines, *self.eliminations)
        return (
            180
            + 2 * len(self.order)
            + 8 * (len(self.literals) + len(pieces))
            + sum(map(len, pieces))
            + 40 * len(pieces)
        )


def _split_steps(steps: str) -> tuple[list[str], list[tuple[int, int, int] | None]] | None:
    """A solve path as JSON (not empty) split into its steps, each without its opening and closing as the singles'
    table holds a single's, and each step's cell, digit and form when it is a single written as the pack writes one;
    None when the text does not open and close as the pack writes a path."""
    parts = steps.split(_BETWEEN)
    if not (parts[0].startswith(OPENING) and parts[-1].endswith(CLOSING)):
        return None
    parts[0] = parts[0][len(OPENING) :]
    parts[-1] = parts[-1][: -len(CLOSING)]
    return parts, list(map(single_steps.table()[0].get, parts))


def prepare_path(steps: str) -> PreparedPath | None:
    """``steps`` (a solve path as JSON, as :meth:`Relayout.path_json` takes it) prepared for moving; None when it
    is not written as the pack writes one, or holds a step that :meth:`Relayout.path_json` would not move by its
    fields (it then moves it as it does any such text)."""
    split = _split_steps(steps) if steps else None
    if split is None:
        return None
    parts, keys = split
    singles = list(filter(None, keys))
    # The path's pieces in turn: literal text (str), a numbered piece (int), a list of lines to move (_Lines) or a
    # step's eliminations (bytes); a single is numbered after Names.moved, in turn.
    items: list[str | int | _Lines | bytes] = []
    single = _MOVED
    for number, (part, key) in enumerate(zip(parts, keys, strict=True)):
        items.append(_BETWEEN if number else OPENING)
        if key is not None:
            items.append(single)
            single += 1
            continue
        text = OPENING + part + CLOSING
        match = _STEP_JSON.fullmatch(text)
        if match is None or match["cell"]:
            return None
        try:
            if not _step_items(orjson.loads(text), items):
                return None
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            return None
    items.append(CLOSING)
    return _prepared(items, singles)


class _Lines(str):
    """A list of lines in an explanation (``rows 1, 4 and 7``), moved by :meth:`Names._lines`."""


def _step_items(step: dict[str, Any], items: list[str | int | _Lines | bytes]) -> bool:
    """The pieces of a step that is not a single (see :func:`prepare_path`), as :meth:`Names._step` writes it moved,
    without its :data:`OPENING` and :data:`CLOSING` (as a single's text in the singles' table); False when it would
    not move it so."""
    technique = step["technique"]
    if not isinstance(technique, str) or technique in TEMPLATES or not isinstance(step["explanation"], str):
        return False
    add = items.append
    for key, value in step.items():
        if key == "technique":
            add(orjson.dumps(value).decode()[1:])
            continue
        add(f',"{key}":')
        if key == "eliminations" and value:
            add(bytes([n for item in value for n in (_CELL_NUMBER[item["cell"]], _digit(item["digit"]))]))
        elif key in ("placements", "eliminations"):
            add("[")
            for i, item in enumerate(value):
                add('{"cell":"' if i == 0 else ',{"cell":"')
                add(_CELL_NUMBER[item["cell"]])
                add('","digit":')
                add(_DIGIT_NUMBER[_digit(item["digit"])])
                add("}")
            add("]")
        elif key in ("cells", "houses"):
            numbers = _CELL_NUMBER if key == "cells" else _HOUSE_NUMBER
            add("[")
            for i, name in enumerate(value):
                add('"' if i == 0 else ',"')
                add(numbers[name])
                add('"')
            add("]")
        elif key == "digits":
            add("[")
            for i, digit in enumerate(value):
                if i:
                    add(",")
                add(_DIGIT_NUMBER[_digit(digit)])
            add("]")
        elif key == "explanation":
            # As Names.text moves it: its pieces, the text between them escaped as JSON.
            add('"')
            for i, part in enumerate(_PIECES.split(value)):
                if not i % 2:
                    add(orjson.dumps(part).decode()[1:-1])
                    continue
                number = _TOKEN_NUMBER.get(part)
                add(number if number is not None else _Lines(part) if part.startswith(("rows ", "columns ")) else part)
            add('"')
        else:
            add(orjson.dumps(value).decode())
    return True


def _prepared(items: list[str | int | _Lines | bytes], singles: list[tuple[int, int, int]]) -> PreparedPath | None:
    """:func:`prepare_path`'s pieces numbered: literals after the singles (the text between two other pieces as one,
    one copy of each kept for all paths: most recur in every path), then the lists of lines and the eliminations."""
    order: list[int] = []
    literals: list[str] = []
    lines: list[str] = []
    eliminations: list[bytes] = []
    # Where in ``order`` each list of lines goes, and each step's eliminations: numbered once the literals are.
    line_places: list[int] = []
    elimination_places: list[int] = []
    first = _MOVED + len(singles)
    text: list[str] = []
    for item in items:
        kind = item.__class__
        if kind is str:
            text.append(item)  # type: ignore[arg-type]
            continue
        if text:
            literal = "".join(text)
            text = []
            order.append(first + len(literals))
            literals.append(_LITERALS.setdefault(literal, literal) if len(_LITERALS) < MAX_LITERALS else literal)
        if kind is int:
            order.append(item)  # type: ignore[arg-type]
            continue
        (line_places if kind is _Lines else elimination_places).append(len(order))
        (lines if kind is _Lines else eliminations).append(item)  # type: ignore[arg-type]
        order.append(0)
    if text:
        order.append(first + len(literals))
        literals.append("".join(text))
    number = first + len(literals)
    if number + len(lines) + len(eliminations) > 0xFFFF:
        return None  # more pieces than two bytes number (no path the grader writes comes near)
    for place in line_places + elimination_places:
        order[place] = number
        number += 1
    cells, digits, forms = zip(*singles, strict=True) if singles else ((), (), ())
    return PreparedPath(
        array("H", order),
        (bytes(cells), bytes(digits).translate(_LESS_ONE), bytes(forms)),
        tuple(literals),
        tuple(map(str, lines)),
        tuple(eliminations),
    )


#: Each digit 1-9 to itself less one, as a table for ``bytes.translate``.
_LESS_ONE: Final = bytes.maketrans(bytes(range(1, 10)), bytes(range(9)))


def _digit(value: object) -> int:
    """A step's digit, as :meth:`Names._step` reads one; ``KeyError`` for anything it would not move as a digit."""
    if type(value) is not int or not 1 <= value <= 9:
        raise KeyError(value)
    return value
