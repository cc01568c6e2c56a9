"""Where the time of a load without a pack goes, per line, on this tree.

    python bench/parse_steps.py [--pools bench/pools] [--lean 3000] [--full 500]

CPU microseconds per line (best of 5 passes) of each step, on the first ``--lean`` lines of the newest
export in ``POOLS/1m-lean`` and the first ``--full`` of ``POOLS/100k``: reading the lines (inflating
included), msgspec's decode into the declared record type, the checks between fields (and of those
the house check of the solution), ``PoolBuilder.add`` (serialize, compress, write into the pack), and
a whole line (``parse_record`` then ``PoolBuilder.add``).
"""

from __future__ import annotations

import argparse
import gzip
import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sudokupool.loading import export
from sudokupool.loading.pool import PoolBuilder

BENCH = Path(__file__).resolve().parent


def best(lines: list[bytes], step: Callable[[PoolBuilder, Any], object], items: list[Any]) -> float:
    """Least CPU microseconds per line of ``step`` over ``items`` (one for each of ``lines``), of 5 passes."""
    times = []
    for _ in range(5):
        builder = PoolBuilder(loaded_at=1)
        started = time.process_time()
        for item in items:
            step(builder, item)
        times.append(time.process_time() - started)
        builder.file.close()
    return min(times) / len(lines) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pools", type=Path, default=BENCH / "pools")
    parser.add_argument("--lean", type=int, default=3000)
    parser.add_argument("--full", type=int, default=500)
    args = parser.parse_args()
    for pool, count in (("1m-lean", args.lean), ("100k", args.full)):
        source = sorted((args.pools / pool).glob("pool-*.ndjson.gz"))[-1]
        with gzip.open(source) as reader:
            lines = [line.rstrip(b"\n") for _, line in zip(range(count), reader, strict=False)]
        packed = gzip.compress(b"\n".join(lines) + b"\n", compresslevel=6)
        records = [export.parse_record(line) for line in lines]

        def read(builder: PoolBuilder, data: bytes) -> object:
            return list(export.numbered_lines(io.BytesIO(data), gzipped=True))

        steps = {
            "read the lines (inflating included)": best(lines, read, [packed]),
            "msgspec decode into Record": best(lines, lambda b, line: export._decode(line), lines),
            "checks between fields": best(lines, lambda b, record: export._check_values(record), records),
            "of which the house check": best(lines, lambda b, record: export._valid_solution(record.solution), records),
            "parse_record": best(lines, lambda b, line: export.parse_record(line), lines),
            "PoolBuilder.add": best(lines, lambda b, record: b.add(record), records),
            "a whole line": best(lines, lambda b, line: b.add(export.parse_record(line)), lines),
        }
        for name, micros in steps.items():
            print(f"{pool}, {len(lines)} lines: {name}: {micros:.1f} us per line")


if __name__ == "__main__":
    main()
