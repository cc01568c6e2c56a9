"""Side by side: this checkout against BASELINE in one run, ``python -m bench ab TARGET BASELINE [options]``.

BASELINE is a git revision (its ``src/`` taken with ``git archive``; nothing is checked out) or a directory holding
a ``sudokupool`` package. Every target measures both sides in the same rounds, the order rotated from round to
round so that drift on a shared machine hits both alike, and prints medians and the ratio this/baseline: only a
ratio from one run means anything. Times are CPU time where they can be (wall time counts other processes' turns).
The targets:

- ``service``: both versions served as the harness starts them, on the same pool; wrk loads v2 by id (random
  ids of the pool), v2 random with a key and v2 random anonymous (limits that never trip). Median req/s and
  server CPU µs per answer (utime + stime of its processes over each wrk run, from /proc). ``--baseline-pool``
  (also for ``encoding``, ``metrics-cost`` and ``pack-load``) serves the baseline from its own directory.
- ``encoding``: the same two services; v2 by id and random as a gzip client of this checkout, an identity
  client of it (each body inflated per request) and a gzip client of the baseline; and the median body size.
- ``metrics-cost``: three services: this checkout with ``SUDOKUPOOL_METRICS_PORT`` set, the same without it,
  and BASELINE; v2 by id and random on each; the ratios on/off and off/baseline.
- ``grader``: one long-lived process per side grades the same chunks of ``--file``'s puzzles in turn; median,
  p95 and max CPU per puzzle, and the p95 and total ratios.
- ``metrics``: the request path in process (no server, no sockets) with metrics on and off in this checkout
  and in BASELINE (off, or on with ``--baseline-on``): CPU µs per request of v2 by id and random.
- ``pool-ops``: the pool itself, loaded as the service loads it: ns per call of what the v2 handlers call
  (by id, by id for an identity client, random): how much of a request's difference the pool accounts for.
- ``handlers``: the v2 handlers in process, no HTTP: CPU ns per call of random, random by difficulty and by
  id (gzip clients).
- ``boot``: ``python -m bench boot``'s boot time and worker memory (USS, PSS), each side served from its own
  pack (an earlier version's pack is refused), rounds alternating.
- ``pack-load``: one long-lived process per side loads the pool's latest export from its directory as startup
  does (``load_export``, no cache directory) and then times the pack's checks alone on a fresh mapping of the
  file (``Pool.from_pack``: "map and check"); wall seconds. This checkout maps a private copy of the pack, made
  by its first load under the run's own ``TMPDIR`` (the warm-up round, not counted); the page cache is warm
  after the first round. ``--baseline-pool`` gives the baseline its own directory, for a baseline that reads
  another pack format version (the same export with ``sudokupool pack`` of BASELINE beside it).
- ``many-exports``: a directory (on bench/out's filesystem) of ``--files`` empty files named as exports, a
  second apart, one in ten with a pack beside it, and two names with no real time in them (a baseline from
  before they were ignored fails on them: ``--no-misdated``). A fresh process of each side per round lists it
  as the live sync does (the 16 newest) and as ``pool-exports`` does (the 1,000 newest), then measures how
  late a 1 ms probe on the event loop wakes while a sync's listing runs in its thread ("loop lag max": the GIL
  the listing holds; "loop lag idle": the same probe for as long with nothing else to do); wall seconds.
- ``work-flood``: v2 random, metrics scrapes and the worker's and the work pool's memory while clients ask for
  distinct images at every size (``bench/work.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.child import KEY
from bench.grading import pct, read
from bench.harness import (
    OUT,
    ROOT,
    Children,
    Target,
    baseline_src,
    cpu_meter,
    interleave,
    latest_export,
    pool_dir,
    pool_ids,
    rotated,
    rounds,
    service,
)
from bench.service import BOOTED, CHOOSING, boot_rounds, pack_of
from bench.work import options as work_flood_options
from bench.work import work_flood_target
from support.servers import free_port, get

THIS = ROOT / "src"
GZIP = {"Accept-Encoding": "gzip"}


def http_target(args: argparse.Namespace, src: Path) -> None:
    directory = pool_dir(args.pool)
    ids = pool_ids(directory)
    key = {"X-API-Key": KEY}
    paths = {"v2 by id": ("/api/v2/puzzles/{id}", key), "v2 random": ("/api/v2/puzzles/random", key)}
    workers = {"WEB_CONCURRENCY": str(args.workers)}
    sides = {"this": (THIS, workers), "baseline": (src, workers)}
    # (client name, side, its headers); then the pairs of clients whose ratios are printed
    clients: list[tuple[str, str, dict[str, str]]] = [("this", "this", {}), ("baseline", "baseline", {})]
    pairs = [("this", "baseline")]
    if args.target == "service":
        paths["v2 random, anonymous"] = ("/api/v2/puzzles/random", {})
    elif args.target == "encoding":
        clients = [("this gzip", "this", GZIP), ("this identity", "this", {}), ("baseline", "baseline", GZIP)]
        pairs = [("this gzip", "baseline"), ("this identity", "this gzip")]
    elif args.target == "metrics-cost":
        sides = {"metrics on": (THIS, {**workers, "SUDOKUPOOL_METRICS_PORT": str(free_port())}), **sides}
        sides["metrics off"] = sides.pop("this")
        clients = [(side, side, {}) for side in sides]
        pairs = [("metrics on", "metrics off"), ("metrics off", "baseline")]
    with contextlib.ExitStack() as stack:
        started = {}
        for side, (tree, env) in sides.items():
            log = OUT / f"ab-{args.target}-{side.replace(' ', '-')}.log"
            # --baseline-pool: the same export with a pack of the baseline's version beside it.
            place = pool_dir(args.baseline_pool) if side == "baseline" and args.baseline_pool else directory
            started[side] = stack.enter_context(service(place, log, env={**env, "PYTHONPATH": str(tree)}))
        # A full pool checks its bodies in the background once served (about 13 s per 100k), at a cost per request.
        time.sleep(args.settle)
        loads = [
            (started[side], Target(f"{who}: {path}", started[side].base, template, headers | extra, ids))
            for path, (template, headers) in paths.items()
            for who, side, extra in clients
        ]
        meters = {t.name: {"cpu_us": cpu_meter(s)} for s, t in loads}
        found = rounds([t for _, t in loads], count=args.rounds, seconds=args.seconds, connections=args.connections,
                       meters=meters)  # fmt: skip
        print("| target | req/s | p99 ms | server CPU µs/answer |\n|---|---:|---:|---:|")
        for name, s in found.items():
            print(f"| {name} | {s['rps']:,.0f} | {s['p99_ms']:.2f} | {s['cpu_us']:.1f} |")
        for path in paths:
            for a, b in pairs:
                rps, cpu = (found[f"{a}: {path}"][k] / found[f"{b}: {path}"][k] for k in ("rps", "cpu_us"))
                print(f"{path}: {a} / {b}: req/s {rps:.3f}, CPU per answer {cpu:.3f}")
        if args.target == "encoding":
            base = started["this"].base
            bodies = [get(f"{base}/api/v2/puzzles/{cid}", key | GZIP)[2] for cid in ids.read_text().split()[:51]]
            wire = int(statistics.median(len(body) for body in bodies))
            identity = int(statistics.median(len(gzip.decompress(body)) for body in bodies))
            print(f"by-id body, median: {wire:,} B gzip, {identity:,} B identity ({wire / identity:.3f}x)")


def grader_target(args: argparse.Namespace, src: Path) -> None:
    puzzles = [puzzle for puzzle, _ in read(args.file)]
    chunks = [json.dumps(puzzles[first : first + args.chunk]) for first in range(0, len(puzzles), args.chunk)]
    times: dict[str, list[float]] = {"this": [], "baseline": []}
    with Children({"this": (THIS, {}), "baseline": (src, {})}, "grader") as children:
        for turn, chunk in enumerate(chunks):
            for side in rotated(list(times), turn):
                times[side] += children.ask(side, chunk)
    for side, found in times.items():
        ms = [1000 * t for t in found]
        print(f"{side}: median {statistics.median(ms):.1f} ms, p95 {pct(ms, 0.95):.0f} ms, max {max(ms):.0f} ms, "
              f"total {sum(found):.2f} s")  # fmt: skip
    this, base = times["this"], times["baseline"]
    print(f"this / baseline: p95 {pct(this, 0.95) / pct(base, 0.95):.3f}, total {sum(this) / sum(base):.3f}")


def metrics_target(args: argparse.Namespace, src: Path) -> None:
    directory = pool_dir("snapshots")
    pool = {"SUDOKUPOOL_EXPORTS": str(directory), "SUDOKUPOOL_METRICS_PORT": ""}
    on = {**pool, "SUDOKUPOOL_METRICS_PORT": str(free_port())}
    sides = {"on": (THIS, on), "off": (THIS, pool), "baseline": (src, on if args.baseline_on else pool)}
    paths = {"v2 by id": "/api/v2/puzzles/{id}", "v2 random": "/api/v2/puzzles/random"}
    with Children(sides, "app", str(pool_ids(directory))) as children:
        items = [(side, path) for path in paths for side in sides]

        def asked(item: tuple[str, str], _: int) -> float:
            return float(children.ask(item[0], f"{args.requests} {paths[item[1]]}"))

        found = interleave(items, args.rounds, asked, warm_up=True)
    median = {item: statistics.median(values) for item, values in found.items()}
    versus = "on" if args.baseline_on else "off"
    print(f"baseline {args.baseline} (metrics {versus}), {args.rounds} rounds x {args.requests} requests, "
          "CPU µs per request, medians")  # fmt: skip
    print(f"| path | on | off | baseline | on - off | {versus} - baseline |\n|---|---:|---:|---:|---:|---:|")
    for path in paths:
        on_, off, base = (median[(side, path)] for side in sides)
        compared = on_ if args.baseline_on else off
        print(f"| {path} | {on_:.2f} | {off:.2f} | {base:.2f} | {on_ - off:+.2f} | {compared - base:+.2f} |")


def side_rounds(
    args: argparse.Namespace, kind: str, line: str, sides: Mapping[str, tuple[Path, dict[str, str], tuple[str, ...]]],
    *, warm_up: bool = False, fresh: bool = False,
) -> dict[str, list[dict[str, float]]]:  # fmt: skip
    """Each side's ``kind`` process (its source tree, environment and arguments) answers ``line`` with a dict of
    figures once a round, rounds rotated; ``fresh``: a new process a side a round, a round that fails left out."""
    with contextlib.ExitStack() as stack:

        def child(side: str) -> Children:
            started = Children({side: sides[side][:2]}, kind, *sides[side][2])
            if started.ready[side] is not True:
                print(f"{side}: {started.ready[side]}", flush=True)
            return started

        kept = {} if fresh else {side: stack.enter_context(child(side)) for side in sides}

        def measure(side: str, n: int) -> dict[str, float] | None:
            try:
                with contextlib.nullcontext(kept[side]) if side in kept else child(side) as process:
                    found: dict[str, float] = process.ask(side, line)
            except RuntimeError as exc:  # its traceback is on stderr
                print(f"round {n + 1} {side}: failed: {exc}", flush=True)
                return None
            print(f"round {n + 1 if n >= 0 else 'warm-up'} {side:8s} "
                  + "  ".join(f"{k} {v:,.3f}" for k, v in found.items()), flush=True)  # fmt: skip
            return found

        found = interleave(list(sides), args.rounds, measure, warm_up)
    results = {side: [r for r in runs if r is not None] for side, runs in found.items()}
    if not results["this"]:
        raise SystemExit("this checkout failed every round")
    return results


def ratios(results: dict[str, list[dict[str, float]]], unit: str, digits: int) -> None:
    """The median of each figure on each side in ``unit``, and the ratio this/baseline (none when the baseline
    always failed)."""
    print(f"medians, {unit}")
    for key in results["this"][0]:
        this = statistics.median(r[key] for r in results["this"])
        line = f"  {key:24s} this {this:,.{digits}f}"
        if results["baseline"]:
            base = statistics.median(r[key] for r in results["baseline"])
            line += f"  baseline {base:,.{digits}f}  ratio {this / base:.3f}  diff {this - base:+,.{digits}f}"
        print(line if results["baseline"] else f"{line}  baseline failed every round")


def both(src: Path, *child_args: str) -> dict[str, tuple[Path, dict[str, str], tuple[str, ...]]]:
    """This checkout and the baseline, each with the same child arguments and no settings of its own."""
    return {"this": (THIS, {}, child_args), "baseline": (src, {}, child_args)}


def pool_ops_target(args: argparse.Namespace, src: Path) -> None:
    directory = pool_dir(args.pool)
    sides = both(src, str(directory), str(pool_ids(directory)), str(args.ops))
    ratios(side_rounds(args, "pool-ops", "go", sides), "CPU ns per call", 0)


def handlers_target(args: argparse.Namespace, src: Path) -> None:
    cases = {"random": ["random", ""], "random?difficulty=hard": ["random", "difficulty=hard"], "by id": ["puzzle", ""]}
    sides = both(src, str(pool_dir(args.pool)), str(args.calls))
    ratios(side_rounds(args, "handlers", json.dumps(cases), sides), "CPU ns per call", 0)


def boot_target(args: argparse.Namespace, src: Path) -> None:
    """Each side boots from its own pack (made here, one after the other: a pack read by other jobs since it was
    written can sit in the page cache in a state that takes half as long again to check), a boot of each first
    not counted; this checkout also takes a second each of the paths only it has before its memory is read (not with
    ``--same-paths``: what the checkout costs a worker that never serves them)."""
    directory = pool_dir(args.pool)
    export = latest_export(directory)
    pack_of(export)
    ids = pool_ids(directory)
    with tempfile.TemporaryDirectory(prefix="sudokupool-boot-") as tmp:
        setups = {}
        for side, tree in (("this", THIS), ("baseline", src)):
            place = Path(tmp) / side
            place.mkdir()
            os.link(export, place / export.name)
            made = {**os.environ, "SUDOKUPOOL_MAX_EXPORT_BYTES": str(1 << 40), "PYTHONPATH": str(tree)}
            subprocess.run([sys.executable, "-m", "sudokupool", "pack", str(place / export.name)], env=made, check=True)
            # TMPDIR: the private copy of each side's pack (made in the warm-up boot) goes with this run's directory.
            setups[side] = BOOTED | {"SUDOKUPOOL_EXPORTS": str(place), "PYTHONPATH": str(tree), "TMPDIR": tmp}

        found = boot_rounds(args, ids, ["this", "baseline"], lambda side, _: setups[side], warm_up=True,
                            extra={} if args.same_paths else {"this": CHOOSING})  # fmt: skip
    if len(found) == 2:
        (ready, uss, pss), (base_ready, base_uss, base_pss) = found["this"], found["baseline"]
        print(f"  ratio        ready {ready / base_ready:.3f}  USS {uss / base_uss:.3f}  PSS {pss / base_pss:.3f}")


def pack_load_target(args: argparse.Namespace, src: Path) -> None:
    # Each side's own directory: a baseline of another pack format version reads a pack of its version.
    places = {"this": args.pool, "baseline": args.baseline_pool or args.pool}
    # The private copy of the pack goes under a TMPDIR of this run, removed with it.
    with tempfile.TemporaryDirectory(prefix="pack-load-ab-") as scratch:
        sides = {
            side: (tree, {"TMPDIR": scratch}, (str(pool_dir(places[side])),))
            for side, tree in (("this", THIS), ("baseline", src))
        }
        ratios(side_rounds(args, "pack-load", "go", sides, warm_up=True), "seconds", 3)


def fill(directory: Path, files: int, *, misdated: bool) -> None:
    """``files`` empty exports a second apart, one in ten with a pack, and (``misdated``) two with no real time."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for n in range(files):
        stamp = (start + timedelta(seconds=n)).strftime("%Y%m%dT%H%M%SZ")
        (directory / f"pool-{stamp}.ndjson.gz").touch()
        if n % 10 == 0:
            (directory / f"pool-{stamp}.pack").touch()
    if misdated:
        for name in ("pool-20261399T000000Z.ndjson", "pool-20260230T000000Z.ndjson.gz"):
            (directory / name).touch()


def many_exports_target(args: argparse.Namespace, src: Path) -> None:
    with tempfile.TemporaryDirectory(dir=OUT, prefix="many-exports-") as scratch:
        fill(Path(scratch), args.files, misdated=not args.no_misdated)
        ratios(side_rounds(args, "many-exports", "go", both(src, scratch), fresh=True), "seconds", 3)


def options(parser: argparse.ArgumentParser, target: str) -> None:
    """Each target's own options (every one takes BASELINE and --rounds)."""
    add = parser.add_argument
    if target in ("service", "encoding", "metrics-cost", "pool-ops", "handlers", "boot", "pack-load"):
        pools = {"service": "1m-lean", "metrics-cost": "snapshots", "handlers": "snapshots", "boot": "1m"}
        add("--pool", default=pools.get(target, "100k"))
    if target in ("service", "encoding", "metrics-cost"):
        add("--seconds", type=float, default=4.0 if target == "metrics-cost" else 5.0, help="of each wrk run")
        add("--connections", type=int, default=32, help="of wrk")
        add("--workers", type=int, default=1, help="uvicorn workers of each service")
        add("--settle", type=float, default=0.0, help="seconds to wait once the services answer")
    if target == "grader":
        add("--file", type=Path, required=True, help="puzzles, one a line (bench/data/)")
        add("--chunk", type=int, default=10, help="puzzles per turn")
    if target == "metrics":
        add("--requests", type=int, default=20000, help="per batch")
        add("--baseline-on", action="store_true", help="BASELINE with metrics on too: what a change to metrics costs")
    if target == "pool-ops":
        add("--ops", type=int, default=200_000, help="calls per round")
    if target == "handlers":
        add("--calls", type=int, default=20000, help="of each handler per round")
    if target in ("service", "encoding", "metrics-cost", "pack-load"):
        add("--baseline-pool", help="the baseline's pool directory, holding a pack of its version (default --pool)")
    if target == "boot":
        add("--workers", type=int, default=2)
        add("--seconds", type=float, default=3.0, help="of requests before memory is read")
        add("--same-paths", action="store_true", help="this checkout serves only the baseline's paths before")
    if target == "work-flood":
        work_flood_options(parser)
    if target == "many-exports":
        add("--files", type=int, default=200_000, help="exports in the directory")
        add("--no-misdated", action="store_true", help="no names with an impossible time (for an older baseline)")


#: target -> (what it compares, how, default rounds)
TARGETS: dict[str, tuple[str, Callable[[argparse.Namespace, Path], None], int]] = {
    "service": ("req/s and CPU per answer of v2 by id and random, over HTTP", http_target, 5),
    "encoding": ("gzip and identity clients over HTTP", http_target, 5),
    "metrics-cost": ("metrics on and off, and BASELINE, over HTTP", http_target, 7),
    "grader": ("the grader's CPU per puzzle", grader_target, 0),
    "metrics": ("the request path in process, metrics on and off", metrics_target, 15),
    "pool-ops": ("the pool's own calls in process", pool_ops_target, 7),
    "handlers": ("the hot v2 handlers' CPU per call in process", handlers_target, 5),
    "boot": ("boot time and worker memory, each side from its own pack", boot_target, 3),
    "pack-load": ("loading a pool's pack: map and checks, in process", pack_load_target, 5),
    "many-exports": ("a local listing of a directory of many exports, and the loop's lag", many_exports_target, 5),
    "work-flood": ("v2 random, metrics scrapes and memory while clients flood distinct images", work_flood_target, 3),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench ab", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    targets = parser.add_subparsers(dest="target", required=True, metavar="TARGET")
    for name, (text, _, default_rounds) in TARGETS.items():
        sub = targets.add_parser(name, help=text, description=text)
        sub.add_argument("baseline", metavar="BASELINE", help="a git revision, or a directory holding sudokupool")
        if default_rounds:
            sub.add_argument("--rounds", type=int, default=default_rounds)
        options(sub, name)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC: python -m bench ab {' '.join(argv or sys.argv[1:])}", flush=True)
    with baseline_src(args.baseline) as src:
        TARGETS[args.target][1](args, src)
    return 0
