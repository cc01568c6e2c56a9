"""Side by side: this checkout against BASELINE in one run, ``python -m bench ab TARGET BASELINE [options]``.

BASELINE is a git revision (its ``src/`` taken with ``git archive`` into a temporary directory; nothing is
checked out) or a directory holding a ``sudokupool`` package (another checkout's ``src``). Every target
measures both sides in the same rounds, the order rotated from round to round, so that drift on a shared
machine hits both alike, and prints medians and the ratio this/baseline: only a ratio from one run means
anything. Times are CPU time where they can be (the machine is shared: wall time counts other processes'
turns). The targets:

- ``service``: both versions served as the harness starts them, on the same pool; wrk loads v2 by id (random
  ids of the pool), v2 random with a key and v2 random anonymous (limits that never trip). Median req/s and
  server CPU µs per answer (utime + stime of its process over each wrk run, from /proc).
- ``encoding``: the same two services; v2 by id and random as a gzip client of this checkout, an identity
  client of it (each body inflated per request) and a gzip client of the baseline; and the median body size.
- ``metrics-cost``: three services: this checkout with ``SUDOKUPOOL_METRICS_PORT`` set, the same without it,
  and BASELINE; v2 by id and random on each; the ratios on/off and off/baseline.
- ``parse``: the load of an export without a pack: ``sudokupool pack`` on the first ``--lean`` lines of the
  1M lean pool and ``--full`` lines of the 100k pool (puzzles per CPU second, Python's start included); CPU
  µs per line of ``parse_record`` and of it then ``PoolBuilder.add`` (best of 5 passes); and the demo boot,
  ``sudokupool serve`` on the bundled pool until ``/api/v1/health`` answers 200.
- ``grader``: one long-lived process per side grades the same chunks of ``--file``'s puzzles in turn; median,
  p95 and max CPU per puzzle, and the p95 and total ratios.
- ``metrics``: the request path in process (no server, no sockets) with metrics on and off in this checkout
  and in BASELINE (off, or on with ``--baseline-on``): CPU µs per request of v2 by id and random.
- ``pool-ops``: the pool itself, loaded as the service loads it: ns per call of what the v2 handlers call
  (by id, by id for an identity client, random). A request costs the server ~150-400 µs in all, so these
  say how much of a request's difference the pool can account for.
- ``handlers``: the v2 handlers in process, no HTTP: CPU ns per call of random, random by difficulty and by
  id (gzip clients).
- ``boot``: ``python -m bench boot``'s boot time and worker memory (USS, PSS), each side served from its own
  pack (an earlier version's pack is refused), rounds alternating.
- ``pack-load``: one long-lived process per side loads the pool's latest export from its directory as startup
  does (``load_export``, no cache directory) and then times the pack's checks alone on a fresh mapping of the
  file (``Pool.from_pack``: "map and check"); wall seconds. This checkout maps a private copy of the pack, made
  by its first load under the run's own ``TMPDIR`` (the warm-up round, not counted), so a counted load is the
  map and the checks of that copy; the page cache is warm after the first round, as on a machine that has the
  pack in memory. ``--baseline-pool`` gives the baseline its own directory, for a baseline that reads another pack
  format version (the same export with ``sudokupool pack`` of BASELINE beside it).
- ``many-exports``: a directory (on bench/out's filesystem) of ``--files`` empty files named as exports, a
  second apart, one in ten with a pack beside it, and two names with no real time in them
  (``pool-20261399T000000Z.ndjson``; a baseline from before they were ignored fails on them: ``--no-misdated``).
  A fresh process of each side per round (no listing warms the next beyond the kernel's directory cache) lists
  it as the live sync does (the 16 newest) and as ``pool-exports`` does (the 1,000 newest), then measures how
  late a 1 ms probe on the event loop wakes while a sync's listing runs in its thread ("loop lag max": the GIL
  the listing holds; "loop lag idle": the same probe for as long with nothing else to do); wall seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from bench.child import LIMITS
from bench.grading import pct, read
from bench.harness import KEY, OUT, Target, baseline_src, latest_export, pool_dir, rounds, sample_ids, service
from bench.servers import Server, free_port, serve_argv

ROOT = Path(__file__).resolve().parent.parent
THIS = ROOT / "src"
T = TypeVar("T")
GZIP = {"Accept-Encoding": "gzip"}


def rotated(items: Sequence[T], n: int) -> list[T]:
    return [*items[n % len(items) :], *items[: n % len(items)]]


def interleave(
    items: Sequence[T], rounds: int, measure: Callable[[T, int], Any], warm_up: bool = False
) -> dict[T, list[Any]]:
    """Each item measured once a round, the order rotated each round; a warm-up round is not counted."""
    found: dict[T, list[Any]] = {item: [] for item in items}
    for n in range(-1 if warm_up else 0, rounds):
        for item in rotated(items, n):
            value = measure(item, n)
            if n >= 0:
                found[item].append(value)
    return found


def ratio_line(name: str, medians: dict[str, float], unit: str, fmt: str = ",.1f") -> str:
    (a, this), (b, base) = medians.items()
    return f"{name}: {a} {this:{fmt}} {unit}, {b} {base:{fmt}} {unit}, ratio {this / base:.3f}"


class Children:
    """One process per side running ``python -m bench.child KIND ARGS`` on that side's source tree (and
    environment), answering a JSON line for each line it is sent."""

    def __init__(self, sides: dict[str, tuple[Path, dict[str, str]]], kind: str, *args: str) -> None:
        self.procs: dict[str, subprocess.Popen[str]] = {}
        for name, (src, env) in sides.items():
            # An empty value unsets a variable (metrics off is SUDOKUPOOL_METRICS_PORT unset).
            full = {k: v for k, v in {**os.environ, **env, "PYTHONPATH": str(src)}.items() if v}
            argv = [sys.executable, "-m", "bench.child", kind, *args]
            self.procs[name] = subprocess.Popen(argv, env=full, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                text=True, cwd=ROOT)  # fmt: skip
        self.ready = {name: self._read(name)["ready"] for name in self.procs}

    def _read(self, name: str) -> Any:
        out = self.procs[name].stdout
        assert out is not None
        line = out.readline()
        if not line:
            raise RuntimeError(f"{name}'s process exited with {self.procs[name].wait()}")
        return json.loads(line)

    def ask(self, name: str, line: str) -> Any:
        stdin = self.procs[name].stdin
        assert stdin is not None
        stdin.write(line + "\n")
        stdin.flush()
        return self._read(name)

    def __enter__(self) -> Children:
        return self

    def __exit__(self, *_: object) -> None:
        for proc in self.procs.values():
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(60)


@contextlib.contextmanager
def services(directory: Path, name: str, sides: dict[str, tuple[Path, dict[str, str]]]) -> Iterator[dict[str, Server]]:
    """A service per side (its source tree, its settings) on the same pool, as the harness starts them."""
    started: dict[str, Server] = {}
    try:
        for label, (src, env) in sides.items():
            svc = service(directory, OUT / f"ab-{name}-{label.replace(' ', '-')}.log", env=env)
            svc.env["PYTHONPATH"] = str(src)
            started[label] = svc.start()
        yield started
    finally:
        for server in started.values():
            server.stop()


def http_rounds(
    loads: list[tuple[Server, Target]], count: int, seconds: float, connections: int
) -> dict[str, list[float]]:
    """The harness's rounds: median req/s, p99 ms and server CPU µs per answer by target name, as a table."""
    runs, cpu = rounds([t for _, t in loads], count=count, seconds=seconds, connections=connections,
                       servers={t.name: s for s, t in loads})  # fmt: skip
    medians: dict[str, list[float]] = {}
    for name, found in runs.items():
        if any(run.status_errors or run.errors for run in found):
            raise RuntimeError(f"{name}: non-2xx answers or socket errors")
        medians[name] = [statistics.median(r.rps for r in found), statistics.median(r.p99_ms for r in found),
                         statistics.median(cpu[name])]  # fmt: skip
    print("| target | req/s | p99 ms | server CPU µs/answer |\n|---|---:|---:|---:|")
    for name, (rps, p99, us) in medians.items():
        print(f"| {name} | {rps:,.0f} | {p99:.2f} | {us:.1f} |")
    return medians


def http_target(args: argparse.Namespace, src: Path) -> None:
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
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
    print(f"baseline {args.baseline}, pool {directory.name}, {args.workers} worker(s), "
          f"{args.rounds} rounds x {args.seconds:g} s, medians")  # fmt: skip
    with services(directory, args.target, sides) as started:
        loads = [
            (started[side], Target(f"{who}: {path}", started[side].base, template, headers | extra, ids))
            for path, (template, headers) in paths.items()
            for who, side, extra in clients
        ]
        medians = http_rounds(loads, args.rounds, args.seconds, args.connections)
        for path in paths:
            for a, b in pairs:
                rps, cpu = (medians[f"{a}: {path}"][i] / medians[f"{b}: {path}"][i] for i in (0, 2))
                print(f"{path}: {a} / {b}: req/s {rps:.3f}, CPU per answer {cpu:.3f}")
        if args.target == "encoding":
            wire, identity = body_sizes(started["this"], ids, GZIP)
            print(f"by-id body, median: {wire:,} B gzip, {identity:,} B identity ({wire / identity:.3f}x)")


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


def pack_cpu(src: Path, export: Path) -> float:
    """CPU seconds (user and system) of ``sudokupool pack`` on ``export``, Python's start included."""
    env = {**os.environ, "PYTHONPATH": str(src), "SUDOKUPOOL_MAX_EXPORT_BYTES": str(20 << 30)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "sudokupool", "pack", str(export)], env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def boot_seconds(src: Path) -> float:
    """From process start until the demo pool's ``/api/v1/health`` answers 200."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(src), "SUDOKUPOOL_EXPORTS": str(ROOT / "snapshots")}
    started = time.perf_counter()
    server = subprocess.Popen(serve_argv(port), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=1) as answer:
                    if answer.status == 200:
                        return time.perf_counter() - started
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError("the server exited") from None
                time.sleep(0.01)
    finally:
        server.terminate()
        server.wait()


def parse_target(args: argparse.Namespace, src: Path) -> None:
    trees = {"this": THIS, "baseline": src}
    with tempfile.TemporaryDirectory(prefix="parse-ab-") as scratch:
        work = Path(scratch)
        for pool, lines, sample in (("1m-lean", args.lean, 3000), ("100k", args.full, 500)):
            export = work / pool / latest_export(args.pools / pool).name
            export.parent.mkdir()
            with gzip.open(args.pools / pool / export.name) as reader, gzip.open(export, "wb", compresslevel=1) as out:
                head = [line for _, line in zip(range(lines), reader, strict=False)]
                out.writelines(head)
            plain = work / f"{pool}.ndjson"
            sample = min(sample, len(head))
            plain.write_bytes(b"".join(head[:sample]))
            with Children({t: (s, {}) for t, s in trees.items()}, "parse", str(plain)) as children:
                per_line = interleave(list(trees), args.rounds, lambda t, _: children.ask(t, "go"))
            for side, found in per_line.items():
                parse, whole = (statistics.median(f[i] for f in found) for i in range(2))
                print(
                    f"per line, {sample} lines of {pool}, {side}: parse_record {parse:.1f} µs, add too {whole:.1f} µs"
                )
            packs = interleave(list(trees), args.rounds, lambda t, _, e=export: pack_cpu(trees[t], e))
            rates = {t: lines / statistics.median(s) for t, s in packs.items()}
            print(ratio_line(f"parse {lines} lines of {pool}", rates, "puzzles/CPU s", ",.0f"))
        boots = interleave(list(trees), args.rounds, lambda t, _: boot_seconds(trees[t]))
        print(ratio_line("demo boot", {t: statistics.median(s) for t, s in boots.items()}, "s", ".2f"))


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
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    pool = {"SUDOKUPOOL_EXPORTS": str(directory), "SUDOKUPOOL_METRICS_PORT": ""}
    on = {**pool, "SUDOKUPOOL_METRICS_PORT": str(free_port())}
    sides = {"on": (THIS, on), "off": (THIS, pool), "baseline": (src, on if args.baseline_on else pool)}
    paths = ("v2 by id", "v2 random")
    with Children(sides, "metrics", str(ids)) as children:
        items = [(side, path) for path in paths for side in sides]
        found = interleave(
            items, args.rounds, lambda item, _: children.ask(item[0], f"{item[1]} {args.requests}"), warm_up=True
        )
    median = {item: statistics.median(values) for item, values in found.items()}
    versus = "on" if args.baseline_on else "off"
    print(f"baseline {args.baseline} (metrics {versus}), {args.rounds} rounds x {args.requests} requests, "
          "CPU µs per request, medians")  # fmt: skip
    print(f"| path | on | off | baseline | on - off | {versus} - baseline |\n|---|---:|---:|---:|---:|---:|")
    for path in paths:
        on_, off, base = (median[(side, path)] for side in sides)
        compared = on_ if args.baseline_on else off
        print(f"| {path} | {on_:.2f} | {off:.2f} | {base:.2f} | {on_ - off:+.2f} | {compared - base:+.2f} |")


def pool_ops_target(args: argparse.Namespace, src: Path) -> None:
    directory = pool_dir(args.pool)
    ids = sample_ids(latest_export(directory), OUT / f"ids-{directory.name}.txt")
    sides = {"this": (THIS, {}), "baseline": (src, {})}
    with Children(sides, "pool-ops", str(directory), str(ids), str(args.ops)) as children:
        for side, summary in children.ready.items():
            print(side, summary, flush=True)
        found = interleave(list(sides), args.rounds, lambda side, _: children.ask(side, "go"))
    print(f"baseline {args.baseline}, pool {directory.name}, {args.rounds} rounds x {args.ops} calls, median ns/call")
    for op in found["this"][0]:
        this, base = (statistics.median(r[op] for r in found[side]) for side in sides)
        print(f"  {op:18s} this {this:8.0f}  baseline {base:8.0f}  ratio {this / base:.3f}  diff {this - base:+.0f} ns")


def handlers_target(args: argparse.Namespace, src: Path) -> None:
    directory = pool_dir(args.pool)
    sides = {"this": (THIS, {}), "baseline": (src, {})}
    with Children(sides, "handlers", str(directory), str(args.calls)) as children:
        found = interleave(list(sides), args.rounds, lambda side, _: children.ask(side, "go"))
    print(f"baseline {args.baseline}, pool {directory}, {args.rounds} rounds x {args.calls} calls, median CPU ns")
    for case in found["this"][0]:
        this, base = (statistics.median(run[case] for run in found[side]) for side in sides)
        print(f"  {case:24s} this {this:7,.0f}  baseline {base:7,.0f}  ratio {this / base:.3f}")


def boot_target(args: argparse.Namespace, src: Path) -> None:
    """Each side boots from its own pack (made here, one after the other: a pack read by other jobs since it was
    written can sit in the page cache in a state that takes half as long again to check), a boot of each first
    not counted; this checkout also takes a second each of the paths only it has before its memory is read."""
    from bench.service import CHOOSING, boot, pack_of
    from sudokupool.keys import digest

    directory = pool_dir(args.pool)
    export = latest_export(directory)
    pack_of(export)
    ids = sample_ids(export, OUT / f"ids-{directory.name}.txt")
    env = {"SUDOKUPOOL_API_KEYS": digest(KEY), "SUDOKUPOOL_LIMIT_KEYED": "1000000000", "SUDOKUPOOL_SYNC_INTERVAL": "0"}
    with tempfile.TemporaryDirectory(prefix="sudokupool-boot-") as tmp:
        setups = {}
        for side, tree in (("this", THIS), ("baseline", src)):
            place = Path(tmp) / side
            place.mkdir()
            os.link(export, place / export.name)
            made = {**os.environ, "SUDOKUPOOL_MAX_EXPORT_BYTES": str(1 << 40), "PYTHONPATH": str(tree)}
            subprocess.run([sys.executable, "-m", "sudokupool", "pack", str(place / export.name)], env=made,
                           check=True)  # fmt: skip
            # TMPDIR: the private copy of each side's pack (made in the warm-up boot) goes with this run's directory.
            setups[side] = {**env, "SUDOKUPOOL_EXPORTS": str(place), "PYTHONPATH": str(tree), "TMPDIR": tmp}

        def measure(side: str, n: int) -> dict[str, Any]:
            extra = CHOOSING if side == "this" and n >= 0 else ()
            found = boot(
                setups[side], args.workers, OUT / f"boot-{side}.log", ids, args.seconds if n >= 0 else 1, extra
            )
            print(side, n + 1, json.dumps(found), flush=True)
            return found

        results = interleave(["this", "baseline"], args.rounds, measure, warm_up=True)
    print(f"pool {directory.name}, {args.workers} workers, {args.rounds} rounds (medians), baseline {args.baseline}")
    medians: dict[str, tuple[float, float, float]] = {}
    for side, runs in results.items():
        ready = statistics.median(r["ready_s"] for r in runs)
        uss = statistics.median(max(w["uss_mb"] for w in r["workers"]) for r in runs)
        pss = statistics.median(max(w["pss_mb"] for w in r["workers"]) for r in runs)
        medians[side] = (ready, uss, pss)
        print(f"  {side:8s} ready {ready:6.2f} s  worst worker USS {uss} MB  PSS {pss} MB  "
              f"packed {all(r['packed'] for r in runs)}")  # fmt: skip
    (ready, uss, pss), (base_ready, base_uss, base_pss) = medians["this"], medians["baseline"]
    print(f"  ratio    ready {ready / base_ready:.3f}  USS {uss / base_uss:.3f}  PSS {pss / base_pss:.3f}")


def seconds_line(side: str, n: int, found: dict[str, float]) -> str:
    return f"round {n + 1 if n >= 0 else 'warm-up'} {side:8s} " + "  ".join(f"{k} {v:.3f} s" for k, v in found.items())


def median_lines(results: dict[str, list[dict[str, float]]], keys: Sequence[str]) -> None:
    """The median of each key on each side, and the ratio this/baseline (none when the baseline always failed)."""
    for key in keys:
        this = statistics.median(r[key] for r in results["this"])
        if results["baseline"]:
            base = statistics.median(r[key] for r in results["baseline"])
            print(
                f"  {key:14s} this {this:.3f}  baseline {base:.3f}  ratio {this / base:.3f}  diff {this - base:+.3f} s"
            )
        else:
            print(f"  {key:14s} this {this:.3f}  baseline failed every round")


def pack_load_target(args: argparse.Namespace, src: Path) -> None:
    directory = pool_dir(args.pool)
    # Each side's own directory: a baseline of another pack format version reads a pack of its version.
    places = {"this": directory, "baseline": pool_dir(args.baseline_pool) if args.baseline_pool else directory}
    with tempfile.TemporaryDirectory(prefix="pack-load-ab-") as scratch, contextlib.ExitStack() as stack:
        # The private copy of the pack goes under a TMPDIR of this run, removed with it.
        children = {
            side: stack.enter_context(Children({side: (tree, {"TMPDIR": scratch})}, "pack-load", str(places[side])))
            for side, tree in (("this", THIS), ("baseline", src))
        }

        def measure(side: str, n: int) -> dict[str, float]:
            found: dict[str, float] = children[side].ask(side, "go")
            print(seconds_line(side, n, found), flush=True)
            return found

        results = interleave(list(children), args.rounds, measure, warm_up=True)
    print(f"baseline {args.baseline} (pool {places['baseline'].name}), pool {directory.name}, {args.rounds} rounds, "
          "median seconds")  # fmt: skip
    median_lines(results, ("load", "map and check"))


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
    trees = {"this": THIS, "baseline": src}
    with tempfile.TemporaryDirectory(dir=OUT, prefix="many-exports-") as scratch:
        fill(Path(scratch), args.files, misdated=not args.no_misdated)

        def measure(side: str, n: int) -> dict[str, float] | None:
            try:  # a fresh process each round
                with Children({side: (trees[side], {})}, "many-exports", scratch) as child:
                    found: dict[str, float] = child.ask(side, "go")
            except RuntimeError as exc:  # its traceback is on stderr
                print(f"round {n + 1} {side}: failed: {exc}", flush=True)
                return None
            print(seconds_line(side, n, found), flush=True)
            return found

        found = interleave(list(trees), args.rounds, measure)
    results = {side: [r for r in runs if r is not None] for side, runs in found.items()}
    if not results["this"]:
        raise SystemExit("this checkout failed every round")
    print(f"baseline {args.baseline}, {args.files} exports, {args.rounds} rounds, median seconds")
    median_lines(results, (*(f"limit {limit}" for limit in LIMITS), "loop lag max", "loop lag idle"))


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
    if target == "parse":
        add("--pools", type=Path, default=ROOT / "bench" / "pools", help="holding 1m-lean/ and 100k/")
        add("--lean", type=int, default=100_000, help="lines of the 1M lean pool to parse")
        add("--full", type=int, default=10_000, help="lines of the 100k full pool to parse")
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
    if target == "pack-load":
        add("--baseline-pool", help="the baseline's pool directory, holding a pack of its version (default --pool)")
    if target == "boot":
        add("--workers", type=int, default=2)
        add("--seconds", type=float, default=3.0, help="of requests before memory is read")
    if target == "many-exports":
        add("--files", type=int, default=200_000, help="exports in the directory")
        add("--no-misdated", action="store_true", help="no names with an impossible time (for an older baseline)")


#: target -> (what it compares, how, default rounds)
TARGETS: dict[str, tuple[str, Callable[[argparse.Namespace, Path], None], int]] = {
    "service": ("req/s and CPU per answer of v2 by id and random, over HTTP", http_target, 5),
    "encoding": ("gzip and identity clients over HTTP", http_target, 5),
    "metrics-cost": ("metrics on and off, and BASELINE, over HTTP", http_target, 7),
    "parse": ("parsing an export without a pack, and the demo boot", parse_target, 3),
    "grader": ("the grader's CPU per puzzle", grader_target, 0),
    "metrics": ("the request path in process, metrics on and off", metrics_target, 15),
    "pool-ops": ("the pool's own calls in process", pool_ops_target, 7),
    "handlers": ("the hot v2 handlers' CPU per call in process", handlers_target, 5),
    "boot": ("boot time and worker memory, each side from its own pack", boot_target, 3),
    "pack-load": ("loading a pool's pack: map and checks, in process", pack_load_target, 5),
    "many-exports": ("a local listing of a directory of many exports, and the loop's lag", many_exports_target, 5),
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
    if args.target == "service":
        # Anonymous requests are counted as usual, with a limit that never trips.
        os.environ["SUDOKUPOOL_LIMIT_ANONYMOUS"] = "1000000000"
    with baseline_src(args.baseline) as src:
        TARGETS[args.target][1](args, src)
    return 0
