"""The bench's shared helpers: the wrk rounds and their meters, and the per-side child processes (bench/harness.py,
bench/ab.py)."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

import pytest

from bench import harness
from bench.ab import both, fill, side_rounds
from bench.harness import Run, Target


def test_rounds_count_each_meter_per_answer_and_leave_out_the_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, float]] = []
    counter = [0.0]

    def wrk(target: Target, *, seconds: float, connections: int) -> Run:
        calls.append((target.name, seconds))
        counter[0] += 500.0 if target.name == "a" else 40.0  # what the meter sees grow over the run
        return Run(requests=100, seconds=seconds, p50_ms=1.0, p99_ms=2.0, errors=0, status_errors=0)

    monkeypatch.setattr(harness, "wrk", wrk)
    found = harness.rounds([Target("a", "", "/"), Target("b", "", "/")], count=2, seconds=5, connections=1,
                           meters={"a": {"cpu_us": lambda: counter[0]}})  # fmt: skip
    assert calls == [("b", 1), ("a", 1), ("a", 5), ("b", 5), ("b", 5), ("a", 5)]
    assert found["a"]["rounds"] == found["b"]["rounds"] == 2 and found["a"]["rps"] == 20
    assert found["a"]["cpu_us"] == 5.0 and "cpu_us" not in found["b"]


def test_rounds_refuse_failed_answers_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    failing = Run(requests=10, seconds=1, p50_ms=1.0, p99_ms=2.0, errors=0, status_errors=3)
    monkeypatch.setattr(harness, "wrk", lambda target, **_: failing)
    with pytest.raises(RuntimeError, match="a: 3 non-2xx"):
        harness.rounds([Target("a", "", "/")], count=1, seconds=1, connections=1)
    assert harness.rounds([Target("a", "", "/")], count=1, seconds=1, connections=1, strict=False)["a"]["rounds"] == 1


def test_a_side_whose_process_fails_is_left_out_of_fresh_rounds(tmp_path: Path) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    fill(exports, 1000, misdated=False)
    broken = tmp_path / "src" / "sudokupool"  # a baseline whose package cannot be imported
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('a broken baseline')\n")
    sides = both(broken.parent, str(exports))
    found = side_rounds(argparse.Namespace(rounds=2), "many-exports", "go", sides, fresh=True)
    assert found["baseline"] == [] and len(found["this"]) == 2
    assert set(found["this"][0]) == {"limit 16", "limit 1000", "loop lag max", "loop lag idle"}


def test_the_work_flood_reads_a_loads_cpu_from_its_line_and_a_threads_waits_from_schedstat(tmp_path: Path) -> None:
    from bench.work import load_cpu, schedstat

    log = tmp_path / "service.log"
    log.write_text(
        "INFO:     pool-20260101T000000Z.ndjson.gz: loaded 2,400 puzzles, skipped 0, in 0.63 s (0.58 s of CPU)\n"
        "INFO:     pool-20260102T000000Z.ndjson.gz: loaded 2,400 puzzles, skipped 0, in 3.12 s (0.71 s of CPU)\n"
        "INFO:     now serving pool-20260102T000000Z.ndjson.gz (listed in 0.00 s, loaded in 3.12 s, ...)\n"
    )
    assert load_cpu(log) == 0.71
    log.write_text("INFO:     pool-20260101T000000Z.ndjson.gz: loaded 2400 puzzles, skipped 0, in 0.63 s\n")
    assert math.isnan(load_cpu(log))  # a version that does not log it
    ran, waited = schedstat(os.getpid())
    assert ran > 0 and waited >= 0


def test_the_boot_bench_reads_the_load_line_with_and_without_thousands_separators() -> None:
    from bench.service import LOADED

    log = (
        "INFO:     [7] pool-1.ndjson.gz: loaded 1,000,000 puzzles from its pack in 4.64 s\n"
        "INFO:     pool-1.ndjson.gz: loaded 2400 puzzles, skipped 0, in 0.57 s\n"
        "INFO:     pool-2.ndjson.gz: loaded 2400 puzzles, skipped 0, in 0.63 s (0.41 s of CPU)\n"
    )
    assert LOADED.findall(log) == ["4.64", "0.57", "0.63"]
