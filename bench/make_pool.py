"""Make a big synthetic pool for the benchmarks: N records derived from the demo pool's puzzles.

    python bench/make_pool.py 100k            # -> bench/pools/100k/pool-<timestamp>.ndjson.gz
    python bench/make_pool.py 1m --lean       # solve_path null: ~0.8 KB a record instead of ~14 KB
    python bench/make_pool.py 2000 --verify 200

Record ``i`` is source record ``i % S`` (of the S in the source pool) under transformation ``i // S``, a
random layout transformation and digit relabelling drawn from a generator seeded with ``(seed, i // S)``,
so every record is a distinct valid puzzle and the output depends only on the source, N and the seed
(see synthetic.py for what is mapped and how ids stay unique). The source is the newest export in
``snapshots/``; without one, 300 records made by ``tests/factories.py``.

Work is split into chunks of records; each worker process turns a chunk into one gzip member, and the
parent writes the members in order (concatenated gzip members are one valid gzip stream). ``--verify``
regenerates a random sample, loads it with ``sudokupool check``'s checks (replayed solve paths, a unique
solution) and recomputes canonical forms, puzzle ids and symmetry.

Pools go to ``bench/pools/`` (gitignored); they are never shipped or committed.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import multiprocessing
import os
import random
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import msgspec

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(BENCH), str(ROOT)]

from sudokupool.loading.export import parse_record  # noqa: E402
from sudokupool.naming import export_filename  # noqa: E402
from sudokupool.sudoku.transform import Transform, random_transform  # noqa: E402
from synthetic import Template, compile_record, synthetic_line, token_table  # noqa: E402

POOLS = BENCH / "pools"
CHUNK = 2000

# Set in the parent before the workers fork, so each worker inherits the compiled templates.
_TEMPLATES: list[Template] = []
_SEED = 1
_LEVEL = 6


def parse_count(text: str) -> int:
    """``100k``, ``1m``, ``2500`` -> a record count."""
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def source_export() -> Path:
    """The newest export in snapshots/, else a 300-record pool made with tests/factories.py."""
    found = sorted((ROOT / "snapshots").glob("pool-*.ndjson*"))
    if found:
        return found[-1]
    target = POOLS / "source"
    made = sorted(target.glob("pool-*.ndjson.gz"))
    if made:
        return made[-1]
    from tests.factories import make_records, write_export

    target.mkdir(parents=True, exist_ok=True)
    return write_export(target / export_filename(datetime.now(UTC)), make_records(300))


def load_templates(path: Path, *, lean: bool) -> list[Template]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        records = [msgspec.to_builtins(parse_record(line)) for line in handle if line.strip()]
    return [compile_record(record, keep_solve_path=not lean) for record in records]


def transform_for(seed: int, k: int) -> Transform:
    return random_transform(random.Random(f"{seed}:{k}"))


def lines(start: int, stop: int) -> Iterator[str]:
    """The export lines of records ``start`` to ``stop - 1``."""
    templates, count = _TEMPLATES, len(_TEMPLATES)
    current = -1
    transform: Transform | None = None
    table: list[str] = []
    for i in range(start, stop):
        k = i // count
        if k != current or transform is None:
            current, transform = k, transform_for(_SEED, k)
            table = token_table(transform)
        yield synthetic_line(templates[i % count], transform, table, i)


def chunk_member(bounds: tuple[int, int]) -> tuple[bytes, int]:
    """One gzip member holding records ``bounds[0]`` to ``bounds[1] - 1``, and its uncompressed size."""
    data = "".join(lines(*bounds)).encode()
    packer = zlib.compressobj(_LEVEL, zlib.DEFLATED, 31)
    return packer.compress(data) + packer.flush(), len(data)


def make_pool(count: int, out: Path, *, lean: bool, seed: int, workers: int, level: int) -> Path:
    """Write a ``count``-record pool into directory ``out``; return the export's path."""
    global _TEMPLATES, _SEED, _LEVEL
    _TEMPLATES = load_templates(source_export(), lean=lean)
    _SEED, _LEVEL = seed, level
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


def verify_sample(count: int, sample: int, seed: int) -> bool:
    """Regenerate ``sample`` random records of the pool and check them as ``sudokupool check`` does, plus
    canonical form, puzzle_id and symmetry. Needs the templates loaded (after :func:`make_pool`)."""
    from sudokupool.commands.check import check_file
    from sudokupool.sudoku.canonical import canonical_form
    from sudokupool.sudoku.ids import puzzle_id
    from sudokupool.sudoku.symmetry import symmetry_class

    picks = sorted(random.Random(seed).sample(range(count), min(sample, count)))
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
        report = asyncio.run(check_file(path))
    for number, problem in report.problems:
        print(f"verify: sample line {number}: {problem}")
    print(f"verify: {report.summary()}; canonical/puzzle_id/symmetry {'ok' if ok else 'WRONG'}")
    return ok and not report.skipped and report.loaded == len(chosen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("count", help="records: 100k, 1m, 2500...")
    parser.add_argument("--lean", action="store_true", help="solve_path null (small records)")
    parser.add_argument("--out", type=Path, help="directory (default bench/pools/<count>[-lean])")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--level", type=int, default=6, help="gzip level (publish uses 6)")
    parser.add_argument("--verify", type=int, default=0, metavar="N", help="check N random records afterwards")
    args = parser.parse_args(argv)
    count = parse_count(args.count)
    out = args.out or POOLS / f"{args.count.lower()}{'-lean' if args.lean else ''}"
    make_pool(count, out, lean=args.lean, seed=args.seed, workers=args.workers, level=args.level)
    if args.verify and not verify_sample(count, args.verify, args.seed):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
