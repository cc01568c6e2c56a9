"""Benchmark pools (``python -m bench make-pool``): records of the demo pool seen through validity-preserving
transformations (sudokupool.sudoku.transform: digits relabelled, rows, columns, bands and stacks permuted, maybe
transposed), which keep the canonical form, the unique solution and the solve path, its cells, houses and digits
renamed. For speed (a million records of ~14 KB each) every source record is compiled once into a
:class:`Template`, its export line cut into literal text and tokens (a cell name, a digit, a row/column/box number,
the words row/column, the per-record values); a transformation becomes a token table (each token's text under it),
and a record line is one ``str.join`` over an ``itemgetter`` that picks literals and token texts from one list.

A share code must be unique in an export, so a synthetic record's ``canonical_id`` is :func:`synthetic_id` (the
share-code hash over ``sudokupool-synthetic-v1:<canonical>:<counter>``, the record's position); ``puzzle_id`` and
``symmetry`` are recomputed from the transformed grid, the tag ``synthetic`` added, and ``seed`` is null.
"""

from __future__ import annotations

import asyncio
import gzip
import multiprocessing
import operator
import os
import random
import re
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import msgspec
import orjson

from bench.harness import POOLS, ROOT, latest_export, options
from sudokupool.pool.export import PUBLIC_FIELD_NAMES, parse_record
from sudokupool.storage.naming import export_filename
from sudokupool.sudoku.ids import puzzle_id, share_code
from sudokupool.sudoku.symmetry import symmetry_class
from sudokupool.sudoku.transform import Transform, random_transform

CHUNK = 2000

# Set in the parent before the workers fork, so each worker inherits the compiled templates.
_TEMPLATES: list[Template] = []


def parse_count(text: str) -> int:
    """``100k``, ``1m``, ``2500`` -> a record count."""
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def load_templates(path: Path, *, lean: bool) -> list[Template]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        records = [msgspec.to_builtins(parse_record(line)) for line in handle if line.strip()]
    return [compile_record(record, keep_solve_path=not lean) for record in records]


def lines(start: int, stop: int) -> Iterator[str]:
    """The export lines of records ``start`` to ``stop - 1``."""
    templates, count = _TEMPLATES, len(_TEMPLATES)
    current = -1
    transform: Transform | None = None
    table: list[str] = []
    for i in range(start, stop):
        k = i // count
        if k != current or transform is None:
            current, transform = k, random_transform(random.Random(f"1:{k}"))
            table = token_table(transform)
        yield synthetic_line(templates[i % count], transform, table, i)


def chunk_member(bounds: tuple[int, int]) -> tuple[bytes, int]:
    """One gzip member holding records ``bounds[0]`` to ``bounds[1] - 1``, and its uncompressed size."""
    data = "".join(lines(*bounds)).encode()
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # publish's level
    return packer.compress(data) + packer.flush(), len(data)


def make_pool(count: int, out: Path, *, lean: bool, workers: int) -> Path:
    """Write a ``count``-record pool into directory ``out``; return the export's path."""
    global _TEMPLATES
    _TEMPLATES = load_templates(latest_export(ROOT / "snapshots"), lean=lean)
    out.mkdir(parents=True, exist_ok=True)
    path = out / export_filename(datetime.now(UTC))
    tmp = path.with_name(path.name + ".part")
    bounds = [(a, min(a + CHUNK, count)) for a in range(0, count, CHUNK)]
    started = time.perf_counter()
    raw = packed = 0
    with tmp.open("wb") as handle, multiprocessing.get_context("fork").Pool(workers) as pool:
        for member, size in pool.imap(chunk_member, bounds):
            handle.write(member)
            raw += size
            packed += len(member)
    tmp.rename(path)
    seconds = time.perf_counter() - started
    print(
        f"{path}: {count} records from {len(_TEMPLATES)} sources, {raw / 1e6:.0f} MB raw, "
        f"{packed / 1e6:.0f} MB gzip, {seconds:.1f} s ({count / seconds:,.0f} records/s, {workers} workers)"
    )
    return path


def verify_sample(count: int, sample: int) -> bool:
    """Regenerate ``sample`` random records of the pool and check them as ``sudokupool check`` does, plus
    canonical form, puzzle_id and symmetry. Needs the templates loaded (after :func:`make_pool`)."""
    from sudokupool.loading.verify import check_file
    from sudokupool.sudoku.canonical import canonical_form

    picks = sorted(random.Random(1).sample(range(count), min(sample, count)))
    chosen = [next(lines(i, i + 1)) for i in picks]
    ok = True
    for line in chosen:
        record = msgspec.to_builtins(parse_record(line))
        puzzle = record["puzzle"]
        if (
            canonical_form(puzzle) != record["canonical"]
            or puzzle_id(puzzle) != record["puzzle_id"]
            or symmetry_class(puzzle) != record["symmetry"]
            or "synthetic" not in record["tags"]
        ):
            print(f"verify: record {record['canonical_id']} has a wrong canonical, puzzle_id, symmetry or tags")
            ok = False
    with tempfile.TemporaryDirectory() as where:
        path = Path(where) / export_filename(datetime.now(UTC))
        path.write_bytes(gzip.compress("".join(chosen).encode()))
        # A synthetic record's canonical_id is its own (synthetic_id), not the share code of its canonical form.
        report = asyncio.run(check_file(path, share_codes=False))
    for number, problem in report.problems:
        print(f"verify: sample line {number}: {problem}")
    print(f"verify: {report.summary()}; canonical/puzzle_id/symmetry {'ok' if ok else 'WRONG'}")
    return ok and not report.skipped and report.loaded == len(chosen)


def make_pool_main(argv: list[str] | None = None) -> int:
    """Make a big synthetic pool for the benchmarks: N records derived from the demo pool's puzzles, into
    bench/pools/N[-lean]/ (gitignored; never shipped or committed). ``--lean``: solve_path null, about 0.8 KB a record
    instead of 14 KB.

    Record ``i`` is source record ``i % S`` (of the S in the demo pool, snapshots/) under transformation ``i // S``,
    drawn from a generator seeded with it, so every record is a distinct valid puzzle and the output depends only on
    N. Each worker process turns a chunk of records into one gzip member, written in order (concatenated members are
    one gzip stream). ``--verify N`` regenerates N random records and checks them as ``sudokupool check`` does
    (replayed solve paths, a unique solution), with their canonical forms, puzzle ids and symmetry.
    """
    parser = options(make_pool_main.__doc__)
    parser.add_argument("count", help="records: 100k, 1m, 2500...")
    parser.add_argument("--lean", action="store_true", help="solve_path null (small records)")
    parser.add_argument("--out", type=Path, help="directory (default bench/pools/<count>[-lean])")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--verify", type=int, default=0, metavar="N", help="check N random records afterwards")
    args = parser.parse_args(argv)
    count = parse_count(args.count)
    make_pool(count, args.out or POOLS / f"{args.count.lower()}{'-lean' if args.lean else ''}", lean=args.lean,
              workers=args.workers)  # fmt: skip
    return 0 if not args.verify or verify_sample(count, args.verify) else 1


SYNTHETIC_TAG: Final = "sudokupool-synthetic-v1:"

# Token keys: the index of the token's text in a TokenTable.
CELL: Final = 0  # 81 cell names r1c1..r9c9
DIGIT: Final = 81 - 1  # DIGIT + d for d in 1..9
ROW_NUMBER: Final = 90  # 9 row numbers "1".."9" (what row r of the source became)
COLUMN_NUMBER: Final = 99
BOX_NUMBER: Final = 108
WORD: Final = 117  # the 8 words below
WORDS: Final = ("row", "rows", "column", "columns", "Row", "Rows", "Column", "Columns")
PUZZLE, SOLUTION, PUZZLE_ID, CANONICAL_ID, SYMMETRY, SYMMETRIC = range(125, 131)
TABLE_SIZE: Final = 131

# Placeholders in the compiled line: one private-use character per token. Those in the "bare" range
# stand for a JSON number or boolean, so the quotes around them are dropped.
_QUOTED: Final = 0xE000
_BARE: Final = 0xE800
_PLACEHOLDER: Final = re.compile('("[\ue800-\ue8ff]"|[\ue000-\ue0ff])')

# Explanation text: cell names, a row/column word with its numbers ("rows 1, 4 and 7"), a box with its
# numbers, and a lone digit. House lists are "a", "a and b" or "a, b and c"; a digit after a house
# ("In box 1, 8 fits") is not part of the list because a list only continues with " and".
_NUMBERS = r"[1-9](?:(?:, [1-9])* and [1-9])?"
_TEXT: Final = re.compile(
    rf"r([1-9])c([1-9])|\b([Rr]ows?|[Cc]olumns?)\b(?: ({_NUMBERS}))?|\b([Bb]ox(?:es)?) ({_NUMBERS})|\b([1-9])\b"
)
_NUMBER: Final = re.compile(r"[1-9]")


def synthetic_id(canonical: str, counter: int) -> str:
    """A unique share code for the ``counter``-th synthetic record (same scheme as sudokupool.sudoku.ids)."""
    return share_code(f"{SYNTHETIC_TAG}{canonical}:{counter}")


def _q(key: int) -> str:
    return chr(_QUOTED + key)


def _bare(key: int) -> str:
    return chr(_BARE + key)


def _cell_key(name: str) -> str:
    return _q(CELL + (int(name[1]) - 1) * 9 + int(name[3]) - 1)


def _numbers(base: int, text: str) -> str:
    return _NUMBER.sub(lambda m: _q(base + int(m[0]) - 1), text)


def _text_sub(match: re.Match[str]) -> str:
    if match[1] is not None:
        return _q(CELL + (int(match[1]) - 1) * 9 + int(match[2]) - 1)
    if match[3] is not None:
        word = _q(WORD + WORDS.index(match[3]))
        if match[4] is None:
            return word
        base = ROW_NUMBER if match[3].lower().startswith("row") else COLUMN_NUMBER
        return f"{word} {_numbers(base, match[4])}"
    if match[5] is not None:
        return f"{match[5]} {_numbers(BOX_NUMBER, match[6])}"
    return _q(DIGIT + int(match[7]))


def tokenize_text(text: str) -> str:
    """``text`` with every cell, house number, row/column word and digit replaced by its placeholder."""
    return _TEXT.sub(_text_sub, text)


def _moves(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"cell": _cell_key(m["cell"]), "digit": _bare(DIGIT + m["digit"])} for m in items]


def _step(step: dict[str, Any]) -> dict[str, Any]:
    out = dict(step)
    out["placements"] = _moves(step["placements"])
    out["eliminations"] = _moves(step["eliminations"])
    out["cells"] = [_cell_key(c) for c in step["cells"]]
    out["houses"] = [tokenize_text(h) for h in step["houses"]]
    out["digits"] = [_bare(DIGIT + d) for d in step["digits"]]
    out["explanation"] = tokenize_text(step["explanation"])
    return out


@dataclass(frozen=True)
class Template:
    """One source record compiled for fast transformation."""

    puzzle: str
    solution: str
    canonical: str
    literals: list[str]
    pick: Callable[[list[str]], tuple[str, ...]]


def compile_record(record: dict[str, Any], *, keep_solve_path: bool = True) -> Template:
    """Compile an export record (a dict: ``msgspec.to_builtins`` of what ``parse_record`` returns) into a
    :class:`Template`."""
    compiled = {name: record[name] for name in PUBLIC_FIELD_NAMES}
    compiled["solution"] = record["solution"]
    compiled.update(
        canonical_id=_q(CANONICAL_ID),
        puzzle_id=_q(PUZZLE_ID),
        puzzle=_q(PUZZLE),
        solution=_q(SOLUTION),
        symmetry=_q(SYMMETRY),
        symmetric=_bare(SYMMETRIC),
        seed=None,
        tags=[*(t for t in record["tags"] if t != "synthetic"), "synthetic"],
    )
    path = record["solve_path"]
    compiled["solve_path"] = [_step(s) for s in path] if path is not None and keep_solve_path else None
    line = orjson.dumps(compiled, option=orjson.OPT_APPEND_NEWLINE).decode()
    literals: list[str] = []
    keys: list[int] = []
    for n, part in enumerate(_PLACEHOLDER.split(line)):
        if n % 2 == 0:
            keys.append(TABLE_SIZE + len(literals))
            literals.append(part)
        elif len(part) == 3:  # '"\ue8xx"': a bare value, quotes dropped
            keys.append(ord(part[1]) - _BARE)
        else:
            keys.append(ord(part) - _QUOTED)
    return Template(
        puzzle=record["puzzle"],
        solution=record["solution"],
        canonical=record["canonical"],
        literals=literals,
        pick=operator.itemgetter(*keys),
    )


def token_table(transform: Transform) -> list[str]:
    """The text of every transformation token (indexes CELL..WORD+7) under ``transform``."""
    table = [""] * TABLE_SIZE
    for cell in range(81):
        d = transform.map_cell(cell)
        table[CELL + cell] = f"r{d // 9 + 1}c{d % 9 + 1}"
    for digit in range(1, 10):
        table[DIGIT + digit] = str(transform.map_digit(digit))
    flip = transform.transpose
    for line in range(9):
        # Under a transposition source rows become columns: the number is then the new column's.
        at_row = transform.map_cell(line * 9)
        at_col = transform.map_cell(line)
        table[ROW_NUMBER + line] = str((at_row % 9 if flip else at_row // 9) + 1)
        table[COLUMN_NUMBER + line] = str((at_col // 9 if flip else at_col % 9) + 1)
        corner = transform.map_cell((line // 3) * 27 + (line % 3) * 3)
        table[BOX_NUMBER + line] = str((corner // 27) * 3 + (corner % 9) // 3 + 1)
    for n, word in enumerate(WORDS):
        if flip:
            word = word.replace("row", "\0").replace("column", "row").replace("\0", "column")
            word = word.replace("Row", "\0").replace("Column", "Row").replace("\0", "Column")
        table[WORD + n] = word
    return table


def synthetic_line(template: Template, transform: Transform, table: list[str], counter: int) -> str:
    """The export line (with newline) of ``template``'s record under ``transform`` (whose token table is
    ``table``), as the ``counter``-th record of the pool."""
    puzzle = transform.apply(template.puzzle)
    symmetry = symmetry_class(puzzle)
    values = table[:PUZZLE]
    values += (
        puzzle,
        transform.apply(template.solution),
        puzzle_id(puzzle),
        synthetic_id(template.canonical, counter),
        symmetry,
        "false" if symmetry == "none" else "true",
    )
    values += template.literals
    return "".join(template.pick(values))
