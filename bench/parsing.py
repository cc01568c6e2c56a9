"""``python -m bench parse-steps``: where the time of a load without a pack goes, per line."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

from bench.harness import options
from sudokupool.pool import export
from sudokupool.pool.pool import PoolBuilder

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


def parse_steps_main() -> None:
    """Where the time of a load without a pack goes, per line, on this tree.

        python -m bench parse-steps [--pools bench/pools] [--lean 3000] [--full 500]

    CPU microseconds per line (best of 5 passes) of each step, on the first ``--lean`` lines of the newest
    export in ``POOLS/1m-lean`` and the first ``--full`` of ``POOLS/100k``: reading the lines (inflating
    included), msgspec's decode into the declared record type, the checks between fields (and of those
    the house check of the solution), ``PoolBuilder.add`` (serialize, compress, write into the pack), and
    a whole line (``parse_record`` then ``PoolBuilder.add``).
    """
    parser = options(parse_steps_main.__doc__)
    parser.add_argument("--pools", type=Path, default=BENCH / "pools")
    parser.add_argument("--lean", type=int, default=3000)
    parser.add_argument("--full", type=int, default=500)
    args = parser.parse_args()
    from bench.child import best

    for pool, count in (("1m-lean", args.lean), ("100k", args.full)):
        source = sorted((args.pools / pool).glob("pool-*.ndjson.gz"))[-1]
        with gzip.open(source) as reader:
            lines = [line.rstrip(b"\n") for _, line in zip(range(count), reader, strict=False)]
        packed = gzip.compress(b"\n".join(lines) + b"\n", compresslevel=6)
        records = [export.parse_record(line) for line in lines]

        def read(builder: PoolBuilder, data: bytes) -> object:
            return list(export.numbered_lines(io.BytesIO(data), gzipped=True))

        steps = {
            "read the lines (inflating included)": best(read, [packed], len(lines)),
            "msgspec decode into Record": best(lambda b, line: export._decode(line), lines, len(lines)),
            "checks between fields": best(lambda b, record: export._check_values(record), records, len(lines)),
            "of which the house check": best(
                lambda b, record: export._valid_solution(record.solution), records, len(lines)
            ),
            "parse_record": best(lambda b, line: export.parse_record(line), lines, len(lines)),
            "PoolBuilder.add": best(lambda b, record: b.add(record), records, len(lines)),
            "a whole line": best(lambda b, line: b.add(export.parse_record(line)), lines, len(lines)),
        }
        for name, micros in steps.items():
            print(f"{pool}, {len(lines)} lines: {name}: {micros:.1f} us per line")
