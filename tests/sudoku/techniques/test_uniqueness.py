from __future__ import annotations

from pencil import Pencil, from_pencilmarks, moves

from sudokupool.sudoku.justify import unjustified
from sudokupool.sudoku.techniques.uniqueness import (
    bug_plus_1,
    hidden_rectangle,
    uniqueness_1,
    uniqueness_2,
    uniqueness_3,
    uniqueness_4,
)

# HoDoKu's exemplar for Unique Rectangle Type 2 (hodoku.sourceforge.net, show_example.php?file=u202):
# 6/9 in r6c56 and r8c56, r8c56 both add 7 => 7 goes from every cell that sees r8c5 and r8c6.
U202 = """
| 14   7    9   | 38     23458    235   | 135    18    6    |
| 3    28   5   | 6      2789     1     | 4      789   29   |
| 6    248  12  | 3789   2345789  23579 | 13579  1789  1259 |
| 5    6    4   | 379    379      8     | 19     2     19   |
| 2    9    8   | 5      1        4     | 6      3     7    |
| 7    1    3   | 2      69       69    | 8      5     4    |
| 149  234  127 | 1379   23579    23579 | 1579   6     8    |
| 8    5    17  | 4      679      679   | 2      179   3    |
| 19   23   6   | 13789  235789   23579 | 1579   4     159  |
"""

# HoDoKu's exemplar for Unique Rectangle Type 4 (show_example.php?file=u402): 2/8 in r89c3 and
# r89c8; in column 8, 8 lies only in r8c8 and r9c8 => r8c8, r9c8 <> 2.
U402 = """
| 8    25    9   | 34     34    7    | 15   1256  26 |
| 145  2457  157 | 6      9     8    | 45   257   3  |
| 346  347   67  | 5      2     1    | 8    79    49 |
| 2    1     4   | 8      36    5    | 39   369   7  |
| 569  8     3   | 149    7     469  | 2    156   46 |
| 569  579   567 | 12349  1346  2469 | 145  1356  8  |
| 135  35    15  | 7      8     29   | 6    4     29 |
| 49   6     28  | 249    5     3    | 7    289   1  |
| 7    49    28  | 1249   146   2469 | 39   2389  5  |
"""

# HoDoKu's exemplar for Hidden Rectangle (show_example.php?file=hr01): 5/9 in r7c57 and r9c57 => r9c5 <> 9.
HR01 = """
| 3  9  4  | 6     8    2   | 1    5    7 |
| 6  1  8  | 7     3    5   | 4    2    9 |
| 5  2  7  | 4     19   19  | 3    6    8 |
| 1  5  3  | 29    4    7   | 289  89   6 |
| 4  7  29 | 5     6    8   | 29   3    1 |
| 8  6  29 | 1239  129  139 | 7    4    5 |
| 7  3  6  | 8     159  4   | 59   19   2 |
| 9  4  5  | 12    127  16  | 68   178  3 |
| 2  8  1  | 39    579  369 | 569  79   4 |
"""


def test_unique_rectangle_type_2_on_hodokus_exemplar() -> None:
    cg = from_pencilmarks(U202)
    step = uniqueness_2(cg)
    assert step is not None
    assert step.technique == "Uniqueness Test 2"
    assert step.score == 100
    assert moves(step.eliminations) == {
        (c, 7) for c in ("r7c4", "r7c5", "r7c6", "r8c3", "r8c8", "r9c4", "r9c5", "r9c6")
    }
    assert set(step.to_dict()["cells"][:4]) == {"r6c5", "r6c6", "r8c5", "r8c6"}  # type: ignore[index]
    assert unjustified(cg, step.to_dict()) == []


def test_unique_rectangle_type_4_on_hodokus_exemplar() -> None:
    cg = from_pencilmarks(U402)
    assert uniqueness_1(cg) is None
    step = uniqueness_4(cg)
    assert step is not None
    assert step.technique == "Uniqueness Test 4"
    assert moves(step.eliminations) == {("r8c8", 2), ("r9c8", 2)}
    assert step.houses == [16]  # column 8
    assert unjustified(cg, step.to_dict()) == []


def test_hidden_rectangle_on_hodokus_exemplar() -> None:
    cg = from_pencilmarks(HR01)
    # The grid holds a second Hidden Rectangle, 3/9 in r69c46 (r9c4 holds only 3/9, and 3 has two
    # places in row 6 and in column 6), which comes first in our scan order.
    first = hidden_rectangle(cg)
    assert first is not None
    assert moves(first.eliminations) == {("r6c6", 9)}
    assert unjustified(cg, first.to_dict()) == []
    cg.eliminate(5 * 9 + 5, 9)
    step = hidden_rectangle(cg)
    assert step is not None
    assert step.technique == "Hidden Rectangle"
    assert moves(step.eliminations) == {("r9c5", 9)}
    assert set(step.to_dict()["cells"]) == {"r7c5", "r7c7", "r9c5", "r9c7"}
    assert unjustified(cg, step.to_dict()) == []


def test_unique_rectangle_type_1() -> None:
    # 1/2 in r1c1, r1c4, r2c1; r2c4 also holds 3 and 4: it must be 3 or 4.
    p = Pencil().set("r1c1", (1, 2)).set("r1c4", (1, 2)).set("r2c1", (1, 2)).set("r2c4", (1, 2, 3, 4))
    step = uniqueness_1(p.cg)
    assert step is not None
    assert moves(step.eliminations) == {("r2c4", 1), ("r2c4", 2)}
    assert step.explanation.startswith("r1c1, r1c4, r2c1 and r2c4 would be a deadly pattern")
    assert unjustified(p.cg, step.to_dict()) == []


def test_unique_rectangle_type_3() -> None:
    # Floor r1c1, r1c2 (1/2); roof r5c1 (1/2/3), r5c2 (1/2/4): one of them is 3 or 4, and with
    # r5c5 (3/4) that locks 3 and 4 in row 5.
    p = (
        Pencil()
        .set("r1c1", (1, 2))
        .set("r1c2", (1, 2))
        .set("r5c1", (1, 2, 3))
        .set("r5c2", (1, 2, 4))
        .set("r5c5", (3, 4))
    )
    for name in ("r5c3", "r5c4", "r5c6", "r5c7", "r5c8", "r5c9"):
        p.set(name, (3, 4, 5, 6, 7, 8, 9))
    step = uniqueness_3(p.cg)
    assert step is not None
    assert step.technique == "Uniqueness Test 3"
    assert moves(step.eliminations) >= {("r5c9", 3), ("r5c9", 4)}
    assert all(d in (3, 4) for _, d in step.eliminations)
    assert unjustified(p.cg, step.to_dict()) == []


# Reached by the grader on a puzzle of the Sudoku Exchange puzzle bank (public domain, SE 7.2):
# .3.79.6....6..21..8.2....7..45...9......1......7...38..6....8.4..86..7....1.87.9.
BUG_STATE = """
|15   3    4    7    9    15   6    2    8   |
|59   7    6    8    4    2    1    35   39  |
|8    19   2    15   6    3    4    7    59  |
|12   4    5    3    7    8    9    6    12  |
|29   8    3    29   1    6    5    4    7   |
|6    19   7    259  25   4    3    8    12  |
|7    6    9    12   23   15   8    35   4   |
|4    2    8    6    35   9    7    1    35  |
|3    5    1    4    8    7    2    9    6   |
"""


def test_bug_plus_one() -> None:
    cg = from_pencilmarks(BUG_STATE)
    step = bug_plus_1(cg)
    assert step is not None
    assert step.technique == "Bivalue Universal Grave + 1"
    assert step.score == 100
    assert moves(step.placements) == {("r6c4", 2)}
    assert unjustified(cg, step.to_dict()) == []
    # Placing any other digit there is not what BUG+1 proves.
    wrong = step.to_dict()
    wrong["placements"] = [{"cell": "r6c4", "digit": 5}]
    assert unjustified(cg, wrong) != []
