"""Compare two ``bench/grade_dump.py`` outputs of the same puzzles, puzzle by puzzle.

Run:
    python bench/grade_diff.py BASE.ndjson OTHER.ndjson

Counts the puzzles whose solve path, score, difficulty level or tier differ, and prints how the
levels and tiers moved and the median and largest score change.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path


def load(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs=2, type=Path)
    args = parser.parse_args()
    base, other = (load(p) for p in args.files)
    assert [b["puzzle"] for b in base] == [o["puzzle"] for o in other]
    changed: Counter[str] = Counter()
    levels: Counter[tuple[object, object]] = Counter()
    tiers: Counter[tuple[object, object]] = Counter()
    deltas: list[int] = []
    for b, o in zip(base, other, strict=True):
        changed["status"] += b["status"] != o["status"]
        changed["path"] += b["solve_path"] != o["solve_path"]
        changed["techniques"] += b["techniques"] != o["techniques"]
        changed["score"] += b["score"] != o["score"]
        changed["difficulty_level"] += b["difficulty_level"] != o["difficulty_level"]
        changed["tier"] += b["tier"] != o["tier"]
        changed["stars"] += b["stars"] != o["stars"]
        if b["score"] != o["score"] and b["score"] is not None and o["score"] is not None:
            deltas.append(int(str(o["score"])) - int(str(b["score"])))
        if b["difficulty_level"] != o["difficulty_level"]:
            levels[(b["difficulty_level"], o["difficulty_level"])] += 1
        if b["tier"] != o["tier"]:
            tiers[(b["tier"], o["tier"])] += 1
    print(f"puzzles: {len(base)}")
    print("changed: " + ", ".join(f"{k} {v}" for k, v in changed.items()))
    if deltas:
        up = sum(d > 0 for d in deltas)
        print(
            f"score changes: {len(deltas)} ({up} up, {len(deltas) - up} down), median {statistics.median(deltas):+g}, "
            f"min {min(deltas):+d}, max {max(deltas):+d}"
        )
    print(f"level moves (base, other): {dict(sorted(levels.items()))}")
    print(f"tier moves (base, other): {dict(tiers.most_common())}")


if __name__ == "__main__":
    main()
