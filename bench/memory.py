"""Load time and memory of one export, in a fresh process: what the service pays at startup.

    python bench/memory.py bench/pools/100k        # prints one JSON object

Loads the latest export of the directory exactly as the service does (``sudokupool.loading.loader.load_latest``
over a local store, then hands the freed heap back as its startup does), then reports seconds, CPU
seconds (steadier than seconds on a busy machine), puzzles per
second, RSS before loading (the imports), RSS after (steady, after a collection), peak RSS (VmHWM),
and the bytes the pool serves: the sum over puzzles of the public record body (identity, uncompressed)
plus the solution body.
"""

from __future__ import annotations

import asyncio
import gc
import json
import resource
import sys
import time
from pathlib import Path

from servers import proc_status
from sudokupool.heap import release_free_memory
from sudokupool.loading.loader import load_latest
from sudokupool.storage.local import LocalStore


def measure(source: Path) -> dict[str, float]:
    """Load ``source`` (a directory or export file) and measure; see the module docstring."""
    gc.collect()
    before = proc_status_self()
    started, cpu_started = time.perf_counter(), cpu_seconds()
    pool, report = asyncio.run(load_latest(LocalStore(source)))
    seconds = time.perf_counter() - started
    cpu = cpu_seconds() - cpu_started
    gc.collect()
    release_free_memory()  # as Runtime.install does after the startup load
    after = proc_status_self()
    # Identity bytes, read from the gzip trailers where the pool holds records compressed (the baseline's
    # pools have no body_length; theirs are held raw).
    length = getattr(pool, "body_length", None) or (lambda i: len(pool.body(i)))
    served = sum(length(i) + len(pool.solution_body(i)) for i in range(len(pool)))
    count = len(pool)
    return {
        "puzzles": count,
        "skipped": report.skipped_total,
        "load_seconds": round(seconds, 2),
        "load_cpu_seconds": round(cpu, 2),
        "puzzles_per_second": round(count / seconds),
        "rss_before": before["VmRSS"],
        "rss_steady": after["VmRSS"],
        "rss_peak": after["VmHWM"],
        "served_bytes": served,
        "rss_over_served": round(after["VmRSS"] / served, 3),
        "pool_rss_over_served": round((after["VmRSS"] - before["VmRSS"]) / served, 3),
        "peak_over_served": round(after["VmHWM"] / served, 3),
        "served_bytes_per_puzzle": round(served / count),
        "rss_bytes_per_puzzle": round((after["VmRSS"] - before["VmRSS"]) / count),
    }


def cpu_seconds() -> float:
    """User and system CPU of this process and of its children that have ended (the load's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def proc_status_self() -> dict[str, int]:
    import os

    return proc_status(os.getpid())


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1]))))
