"""p99 while the service swaps packs back to back, against its own steady p99, saturated and paced.

    python bench/swap_pack.py [--pool 1m] [--rounds 3] [--seconds 20] [--pause-ms 0] [--source local|s3]

The service (``bench/swap_app.py``) serves the pool's latest export from its pack. Each round, wrk
measures v2 by id for ``--seconds`` in steady state, then for ``--seconds`` while the service reloads
(maps and checks the pack, swaps it in, drops the old one) again and again, one reload right after
the other, so the whole window is under swaps, not one swap diluted in a window. It first measures the
saturated rate, then runs the same rounds paced at about half of it (each connection pauses after an
answer, ``bench/random_ids.lua``), and prints the median p99 ratio (during / steady) of each, with the
number of swaps per window. The pool needs its pack: ``sudokupool pack bench/pools/<pool>/pool-*.ndjson.gz``.
With ``--source s3`` the export and its pack are served by a real SeaweedFS on the same machine (as
``bench/boot.py`` does) and the service has no cache directory, so every reload downloads the pack
again, as a live sync of a new export does; SeaweedFS's own CPU is then on the same two cores.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from boot import pack_of, seaweed  # noqa: E402
from harness import KEY, OUT, latest_export, pool_dir, service  # noqa: E402
from load import Run, Target, sample_ids, wrk  # noqa: E402
from servers import Server, get  # noqa: E402


def swapping(server: Server, stop: threading.Event, count: list[int], failed: list[str]) -> None:
    """Reload back to back until ``stop`` is set (each waits for the one before to be swapped in)."""
    while not stop.is_set():
        get(server.base + "/__bench/swap")
        while not (status := json.loads(get(server.base + "/__bench/swap-status")[2])).get("done"):
            time.sleep(0.02)
        if "error" in status:
            failed.append(status["error"])
            return
        count[0] += 1


def window(server: Server, target: Target, seconds: float, pause_ms: int, swaps: bool) -> tuple[Run, int]:
    stop, count, failed = threading.Event(), [0], []
    thread = threading.Thread(target=swapping, args=(server, stop, count, failed))
    if swaps:
        thread.start()
    run = wrk(target, seconds=seconds, connections=32, pause_ms=pause_ms)
    stop.set()
    if swaps:
        thread.join()
        if failed:
            raise RuntimeError(f"a reload failed: {failed[0]}")
    if run.errors or run.status_errors:
        raise RuntimeError(f"{run.status_errors} non-2xx, {run.errors} errors")
    return run, count[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default="1m")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--pause-ms", type=int, default=0, help="the paced runs' pause (0: from the saturated rate)")
    parser.add_argument("--source", choices=("local", "s3"), default="local")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    export = latest_export(directory)
    ids = sample_ids(export, OUT / f"ids-{directory.name}.txt")
    with contextlib.ExitStack() as stack:
        env = {}
        if args.source == "s3":
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sudokupool-swap-")))
            storage, url = seaweed(export, pack_of(export), workdir)
            stack.callback(storage.stop)
            env = storage.environ() | {"SUDOKUPOOL_EXPORTS": url, "SUDOKUPOOL_S3_ENDPOINT_URL": storage.endpoint_url}
        return measure(directory, ids, args, env)


def measure(directory: Path, ids: Path, args: argparse.Namespace, env: dict[str, str]) -> int:
    server = service(directory, OUT / "swap-pack.log", swap=True, env=env)
    server.start()
    try:
        target = Target("v2 by id", server.base, "/api/v2/puzzles/{id}", {"X-API-Key": KEY}, ids)
        saturated = wrk(target, seconds=5, connections=32)  # warm-up, and the saturated rate
        # 32 connections saturating at R req/s spend 32000 / R ms on each request, most of it queued; once
        # paced the queue is gone, so pausing twice that long after each answer gives about half the rate
        # (the printed steady req/s say what it was).
        pause = args.pause_ms or max(1, round(64000 / saturated.rps))
        results: dict[str, list[dict[str, float]]] = {"saturated": [], "paced": []}
        for n in range(args.rounds):
            for mode, pause_ms in (("saturated", 0), ("paced", pause)):
                steady, _ = window(server, target, args.seconds, pause_ms, swaps=False)
                during, swaps = window(server, target, args.seconds, pause_ms, swaps=True)
                found = {
                    "steady_rps": steady.rps,
                    "steady_p99_ms": steady.p99_ms,
                    "during_rps": during.rps,
                    "during_p99_ms": during.p99_ms,
                    "p99_ratio": during.p99_ms / steady.p99_ms,
                    "swaps": swaps,
                }
                results[mode].append(found)
                print(f"round {n + 1} {mode} (pause {pause_ms} ms): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in found.items()), flush=True)  # fmt: skip
    finally:
        server.stop()
    print(f"pool {directory.name} ({args.source}), {args.rounds} rounds x {args.seconds:g} s windows, medians")
    for mode, runs in results.items():
        m = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"  {mode:9s} p99 during swaps {m['during_p99_ms']:.2f} ms / steady {m['steady_p99_ms']:.2f} ms = "
              f"{m['p99_ratio']:.2f}x; {m['steady_rps']:,.0f} / {m['during_rps']:,.0f} req/s; "
              f"{m['swaps']:.0f} swaps a window")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
