"""Peak RSS of the serving process while a live reload loads the same export again and swaps it in.

    python bench/swap_memory.py [--pool 100k] [--baseline REV]

Starts the service as the harness does (bench/swap_app.py, so the reload can be triggered), waits for
its startup load, resets the kernel's peak-RSS mark (``/proc/PID/clear_refs``), triggers one reload as
the live sync does it (a load process of its own at the sync's niceness; with ``--foreground``, in the
server process at its own priority, which is faster) and polls until the new pool
is installed, sampling the RSS of the server and of its child processes every 20 ms. Prints one JSON
object: RSS before (the old pool), the server's peak during the reload (VmHWM), RSS after (the new
pool; the old one freed and handed back), the peak of its children summed, and the ratio of the
server's peak to old + new pool (the pool's share being RSS above the imports, ``--imports`` bytes).
With ``--baseline`` the same runs first for that git revision, in a temporary worktree.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import OUT, baseline_tree, pool_dir, service  # noqa: E402
from servers import proc_status  # noqa: E402


def descendants(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # a process may end meanwhile
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                found += [int(child), *descendants(int(child))]
    return found


def children_rss(pid: int) -> int:
    total = 0
    for child in descendants(pid):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            total += proc_status(child).get("VmRSS", 0)
    return total


def imports_rss(pythonpath: str | None) -> int:
    """RSS of the service on the demo pool (2,400 puzzles, a few MB): what is not the pool, or a bit more."""
    server = service(BENCH.parent / "snapshots", OUT / "swap-memory-demo.log")
    if pythonpath:
        server.env["PYTHONPATH"] = pythonpath
    server.start()
    try:
        time.sleep(2)
        return proc_status(server.pid)["VmRSS"]
    finally:
        server.stop()


def measure(directory: Path, log: Path, *, pythonpath: str | None = None, foreground: bool = False) -> dict[str, Any]:
    imports = imports_rss(pythonpath)
    server = service(directory, log, swap=True)
    if pythonpath:
        server.env["PYTHONPATH"] = pythonpath
    server.start(timeout=3600)  # a 1M full-record pool on a busy machine
    try:
        time.sleep(2)  # the startup's release of freed memory runs in a thread after the load
        before = proc_status(server.pid)["VmRSS"]
        startup = proc_status(server.pid)
        print(json.dumps({"loaded": True, "rss": startup["VmRSS"], "rss_peak": startup["VmHWM"]}), flush=True)
        Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # peak RSS := current RSS
        started = time.perf_counter()
        trigger = "/__bench/swap" + ("?background=0" if foreground else "")
        urllib.request.urlopen(server.base + trigger).read()
        sampled_peak, child_peak = before, 0
        while True:
            time.sleep(0.02)
            sampled_peak = max(sampled_peak, proc_status(server.pid)["VmRSS"])
            child_peak = max(child_peak, children_rss(server.pid))
            status = json.loads(urllib.request.urlopen(server.base + "/__bench/swap-status").read())
            if status["done"]:
                break
        seconds = time.perf_counter() - started
        time.sleep(2)  # the old pool's memory is handed back in a thread after the swap
        after = proc_status(server.pid)
    finally:
        server.stop()
    old, new = before - imports, after["VmRSS"] - imports
    return {
        "puzzles": status["puzzles"],
        "reload_seconds": round(seconds, 1),
        "rss_demo_pool": imports,
        "rss_before": before,
        "rss_peak": after["VmHWM"],
        "rss_peak_sampled": sampled_peak,
        "rss_after": after["VmRSS"],
        "children_rss_peak": child_peak,
        "peak_over_old_plus_new_pool": round((after["VmHWM"] - imports) / (old + new), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default="100k")
    parser.add_argument("--baseline", help="git revision to measure first, for comparison")
    parser.add_argument(
        "--foreground", action="store_true", help="reload in the server process at its own priority (faster)"
    )
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    if args.baseline:
        with baseline_tree(args.baseline) as tree:
            found = measure(
                directory, OUT / "swap-memory-baseline.log", pythonpath=str(tree / "src"), foreground=args.foreground
            )
        print(json.dumps({"baseline": args.baseline, **found}))
    print(json.dumps({"this": True, **measure(directory, OUT / "swap-memory.log", foreground=args.foreground)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
