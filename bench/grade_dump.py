"""Grade every puzzle of a file and write one JSON line per puzzle: the puzzle and its grade.

Run:
    python bench/grade_dump.py --file bench/data/sudoku-exchange-se-fresh.txt --out OUT.ndjson
    python bench/grade_dump.py --pool snapshots/pool-....ndjson.gz --out OUT.ndjson

Run it once per source tree (``PYTHONPATH``), then compare the two outputs with
``bench/grade_diff.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
from pathlib import Path

from bench_grader import read
from sudokupool.sudoku.grader import grade


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path)
    parser.add_argument("--pool", type=Path, help="a pool export (.ndjson.gz) whose lines carry `puzzle`")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.pool:
        with gzip.open(args.pool, "rt") as f:
            puzzles = [json.loads(line)["puzzle"] for line in f if line.strip()]
    else:
        puzzles = [puzzle for puzzle, _ in read(args.file)]
    with args.out.open("w") as out:
        for puzzle in puzzles:
            out.write(json.dumps({"puzzle": puzzle, **dataclasses.asdict(grade(puzzle))}) + "\n")


if __name__ == "__main__":
    main()
