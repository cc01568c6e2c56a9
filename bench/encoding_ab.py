"""Compressed records side by side: this checkout's gzip and identity clients against a baseline commit.

    python bench/encoding_ab.py BASELINE [--pool 100k] [--rounds 5] [--seconds 5]

BASELINE is a git revision (the commit before records were held compressed). It is checked out into a
temporary worktree and served next to this checkout, both as the harness starts them (one uvicorn
worker each, on the same pool). wrk loads v2 by id (random ids from the pool) and v2 random three ways:
this checkout with ``Accept-Encoding: gzip`` (wrk reads the bytes as sent, it does not inflate), this
checkout without the header (each body inflated per request), and the baseline with the same header (it
answers identity). Targets rotate through rounds (a warm-up first). For each it prints the median req/s,
p99, and the server's CPU per request (utime + stime of its process over the run, divided by the
requests: less sensitive than req/s to a busy machine), then the ratios gzip/baseline and
identity/gzip, and the median body size of each encoding.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, baseline_tree, latest_export, pool_dir, service  # noqa: E402
from load import Target, sample_ids, wrk  # noqa: E402
from servers import Server, cpu_seconds  # noqa: E402

GZIP = {"Accept-Encoding": "gzip"}


def body_sizes(server: Server, ids: Path, headers: dict[str, str], count: int = 51) -> tuple[int, int]:
    """Median bytes on the wire and median identity bytes of ``count`` by-id records."""
    wire, identity = [], []
    for cid in ids.read_text().split()[:count]:
        request = urllib.request.Request(f"{server.base}/api/v2/puzzles/{cid}", headers={"X-API-Key": KEY, **headers})
        with urllib.request.urlopen(request) as response:
            raw = response.read()
            coded = response.headers.get("Content-Encoding") == "gzip"
        wire.append(len(raw))
        identity.append(len(gzip.decompress(raw)) if coded else len(raw))
    return int(statistics.median(wire)), int(statistics.median(identity))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", help="git revision to compare against")
    parser.add_argument("--pool", default="100k")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    key = {"X-API-Key": KEY}
    runs: dict[str, list[tuple[float, float, float]]] = {}
    with baseline_tree(args.baseline) as tree:
        this = service(directory, OUT / "encoding-this.log")
        base = service(directory, OUT / "encoding-baseline.log")
        base.env["PYTHONPATH"] = str(tree / "src")
        this.start()
        base.start()
        try:
            targets: list[tuple[Server, Target]] = []
            for path, name in [("/api/v2/puzzles/{id}", "v2 by id"), ("/api/v2/puzzles/random", "v2 random")]:
                targets += [
                    (this, Target(f"this gzip: {name}", this.base, path, key | GZIP, ids)),
                    (this, Target(f"this identity: {name}", this.base, path, key, ids)),
                    (base, Target(f"baseline: {name}", base.base, path, key | GZIP, ids)),
                ]
            for _, target in targets:
                wrk(target, seconds=1, connections=32)
                runs[target.name] = []
            for n in range(args.rounds):
                for server, target in targets[n % len(targets) :] + targets[: n % len(targets)]:
                    before = cpu_seconds(server.pid)
                    run = wrk(target, seconds=args.seconds, connections=32)
                    used = cpu_seconds(server.pid) - before
                    if run.status_errors or run.errors:
                        raise RuntimeError(f"{target.name}: {run.status_errors} non-2xx, {run.errors} errors")
                    runs[target.name].append((run.rps, run.p99_ms, used / run.requests * 1e6))
                    print(f"  round {n + 1} {target.name:24} {run.rps:8.0f} req/s  p99 {run.p99_ms:6.2f} ms")
            sizes = {"gzip": body_sizes(this, ids, GZIP), "identity": body_sizes(this, ids, {})}
        finally:
            this.stop()
            base.stop()
    med = {name: [statistics.median(r[i] for r in found) for i in range(3)] for name, found in runs.items()}
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, medians")
    print("| path | client | req/s | p99 ms | server CPU µs/request |")
    print("|---|---|---:|---:|---:|")
    for name, (rps, p99, cpu) in med.items():
        who, _, path = name.partition(": ")
        print(f"| {path} | {who} | {rps:,.0f} | {p99:.2f} | {cpu:.1f} |")
    for path in ("v2 by id", "v2 random"):
        gz, plain, base_ = med[f"this gzip: {path}"], med[f"this identity: {path}"], med[f"baseline: {path}"]
        print(
            f"{path}: gzip/baseline req/s {gz[0] / base_[0]:.3f}, CPU {gz[2] / base_[2]:.3f}; "
            f"identity/gzip req/s {plain[0] / gz[0]:.3f}, CPU {plain[2] / gz[2]:.3f}"
        )
    (wire, identity), _ = sizes["gzip"], sizes["identity"]
    print(f"by-id body, median: {wire:,} B gzip, {identity:,} B identity ({wire / identity:.3f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
