"""``python -m bench ab work-flood BASELINE``: lookups, scrapes and a sync while clients flood the service with
distinct images.

Both sides are served as the harness serves them (one worker, a key whose limit never trips, metrics on, a sync
every ``--sync-interval`` s) from a copy of the same pool each, one after the other in rotated rounds, a fresh
service a side a round. A round of a side:

1. **quiet**: once the fresh service is idle, wrk on v2 random (keyed, ``--connections``) for ``--seconds``:
   req/s and p99, with the scrapes and the RSS readings of 2 going on (a service is scraped whether flooded or
   not, and the readings take this machine's cores too): the flood is the one difference between the phases.
2. **flood**, ``--flood-seconds`` in all: ``--flood-clients`` clients (half of them abandon each request after
   50 ms, half wait for it) ask on ``/api/v1`` (unlimited) for one puzzle's image at every size from 100 to
   2000 px, PNG and WebP in turn, a puzzle of its own each round so nothing is cached. After 2 s of it, wrk again
   as in 1; then a newer export is published in the service's directory and ``/api/v1/health`` asked every
   50 ms until it serves it (the sync's lag, 60 s if never; and the load's own seconds, from the metrics). A
   scrape every 0.5 s from 2 s to the end, from a process of its own (one not answered within 60 s counts as
   60,000 ms); the worker's RSS and the RSS of the processes under it (the work pool) every 0.1 s throughout
   (its peak before the sync too: the sync's swap holds two pools for a moment, and its heap may keep some of
   it after); how long the worker's loop thread ran over the flood, and how long it waited on a run queue for a
   core (``/proc/PID/task/PID/schedstat``: what the machine's other work cost the loop); the load's CPU seconds
   (from its log line: its time less them is what it waited for).
3. **after**: the flood stops; how long the service stays busy (its processes above 5 % of a core: the backlog
   of abandoned requests it still renders), then the worker's RSS against its RSS at the round's start, and wrk
   as in 1 again ("quiet after": the quiet figure is the mean of the two, so drift over a round cancels out), and
   the bytes the render cache holds then (its gauge: a part of that RSS, bounded by its budget).

A scrape is timed as Prometheus makes one (a new connection, gzip accepted) with a plain socket, from connecting
to the answer's last byte: what the service takes, not a client library's setup (``httpx.get`` builds a client
and its TLS context per call, 50-200 ms of the benchmark's own CPU on a loaded machine).

Medians over the rounds, and the ratios the issue's targets name: random's p99 and req/s under the flood
against quiet, on each side.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import math
import multiprocessing
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event as EventType
from pathlib import Path

from bench.harness import (
    KEYED,
    OUT,
    ROOT,
    Target,
    baseline_src,
    interleave,
    latest_export,
    pool_dir,
    pool_ids,
    service,
    wrk,
)
from sudokupool.config import Settings
from sudokupool.storage.naming import pack_key
from support.servers import Server, cpu_seconds, free_port, proc_status, process_tree

THIS = ROOT / "src"
MB = 1e6


class Flood:
    """Clients asking for one puzzle's image at every size, PNG and WebP, until stopped."""

    def __init__(self, server: Server, code: str, clients: int) -> None:
        self.server, self.code, self.clients = server, code, clients
        self.stop = threading.Event()
        self.answers: dict[str, int] = {}
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, args=(n,), daemon=True) for n in range(clients)]

    def count(self, what: str) -> None:
        with self.lock:
            self.answers[what] = self.answers.get(what, 0) + 1

    def sizes(self, n: int) -> list[tuple[int, str]]:
        """The (size, format) pairs client ``n`` asks for in turn."""
        return [(size, fmt) for size in range(100 + n, 2001, self.clients) for fmt in ("png", "webp")]

    def run(self, n: int) -> None:
        host, port = "127.0.0.1", self.server.port
        sizes = self.sizes(n)
        while not self.stop.is_set():
            for size, fmt in sizes:
                if self.stop.is_set():
                    return
                path = f"/api/v1/puzzles/{self.code}/image?size={size}&format={fmt}"
                request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
                try:
                    with socket.create_connection((host, port), timeout=60) as sock:
                        sock.sendall(request)
                        if n % 2:  # abandoned
                            time.sleep(0.05)
                            self.count("abandoned")
                            continue
                        status = sock.recv(12)[9:12].decode() or "closed"
                        while sock.recv(65536):
                            pass
                        self.count(status)
                except OSError:
                    self.count("error")

    def __enter__(self) -> Flood:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()


class CachedFlood(Flood):
    """The flood's clients and connections without its renders: one image, at one size, asked over and over (the
    first answer is cached; every one after is a lookup)."""

    def sizes(self, n: int) -> list[tuple[int, str]]:
        return [(2000, "png")]


class Renders:
    """The flood's renders without its clients: a process of its own rendering the puzzle's image at every size in
    turn, PNG and WebP, as a work process runs (as nice and idle, in a process group of its own)."""

    def __init__(self, tree: Path, code: str, directory: Path) -> None:
        self.tree, self.code, self.directory = tree, code, directory

    def __enter__(self) -> Renders:
        script = (
            "import sys\n"
            "from sudokupool.work.child import lower_priority\n"
            "import gzip, json\n"
            "from sudokupool.images.render import render\n"
            "lower_priority(int(sys.argv[3]))\n"
            "lines = gzip.open(sys.argv[1], 'rt')\n"
            "record = next(r for r in map(json.loads, lines) if r.get('canonical_id') == sys.argv[2])\n"
            "while True:\n"
            "    for size in range(100, 2001, 7):\n"
            "        for fmt in ('png', 'webp'):\n"
            "            render(fmt, record['puzzle'], record['solution'], 'puzzle', size)\n"
        )
        niceness = str(Settings.work_niceness)
        argv = [sys.executable, "-c", script, str(latest_export(self.directory)), self.code, niceness]
        env = {**os.environ, "PYTHONPATH": str(self.tree)}
        self.process = subprocess.Popen(argv, env=env, process_group=0)
        return self

    def __exit__(self, *_: object) -> None:
        self.process.kill()
        self.process.wait()


class Memory:
    """The worker's RSS, its children's (the work pool: a process being replaced and its successor both count)
    and the largest child's, read every 0.1 s: the peaks."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.worker = 0
        self.pool = 0
        self.process = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.wait(0.1):
            with contextlib.suppress(OSError):
                self.worker = max(self.worker, rss(self.pid))
                children = [rss(p) for p in process_tree(self.pid) if p != self.pid]
                self.pool = max(self.pool, sum(children))
                self.process = max(self.process, *children, 0)

    def __enter__(self) -> Memory:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


def schedstat(pid: int) -> tuple[float, float]:
    """Seconds the main thread of ``pid`` has run, and waited on a run queue for a core (Linux schedstat)."""
    try:
        ran, waited, _ = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return math.nan, math.nan
    return int(ran) / 1e9, int(waited) / 1e9


#: The CPU seconds a load's line gives (services that log them).
LOAD_CPU = re.compile(rb"loaded [0-9,]+ puzzles.* \(([0-9.]+) s of CPU\)")


def load_cpu(log: Path) -> float:
    """The CPU seconds of the last load the service logged (NaN for a version that does not log them)."""
    found = LOAD_CPU.findall(log.read_bytes())
    return float(found[-1]) if found else math.nan


def rss(pid: int) -> int:
    try:
        return proc_status(pid).get("VmRSS", 0)
    except OSError:
        return 0


#: Seconds a timed scrape waits; a scrape not answered by then counts as this long.
SCRAPE_TIMEOUT = 60.0
#: A scrape's request as Prometheus sends it.
SCRAPE = (
    b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Prometheus/3\r\n"
    b"Accept: text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\nAccept-Encoding: gzip\r\n\r\n"
)


def scrape_ms(port: int) -> float:
    """Milliseconds from connecting to the metrics port to the last byte of its answer (the port closes it)."""
    started = time.perf_counter()
    answer = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=SCRAPE_TIMEOUT) as sock:
            sock.sendall(SCRAPE)
            while chunk := sock.recv(65536):
                answer += chunk
                if time.perf_counter() - started > SCRAPE_TIMEOUT:
                    return 1000 * SCRAPE_TIMEOUT
    except TimeoutError:
        return 1000 * SCRAPE_TIMEOUT
    if not answer.startswith(b"HTTP/1.1 200 "):
        raise RuntimeError(f"a scrape answered {answer[:40]!r}")
    return 1000 * (time.perf_counter() - started)


class Scrapes:
    """A timed scrape every ``every`` seconds until stopped, from a process of its own: a thread here would
    share this process's GIL with the flood's clients, and a scrape's time would include its waits for it."""

    def __init__(self, port: int, every: float = 0.5) -> None:
        self.port, self.every = port, every
        self.ms: list[float] = []
        context = multiprocessing.get_context("spawn")
        self.stop = context.Event()
        self.results, sent = context.Pipe(duplex=False)
        self.process = context.Process(target=scrape_every, args=(port, every, self.stop, sent), daemon=True)

    def __enter__(self) -> Scrapes:
        self.process.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.ms = self.results.recv()
        self.process.join()


def scrape_every(port: int, every: float, stop: EventType, results: Connection) -> None:
    """:class:`Scrapes`' process: scrape until ``stop`` is set, then send the times (ms) to ``results``."""
    ms: list[float] = []
    while not stop.is_set():
        began = time.perf_counter()
        ms.append(scrape_ms(port))
        stop.wait(max(0.0, every - (time.perf_counter() - began)))
    results.send(ms)


def gauge(port: int, name: str) -> float:
    """A gauge's value in a scrape (NaN when the scrape has no such sample or no answer in 60 s)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=SCRAPE_TIMEOUT) as response:
            body: bytes = response.read()
    except (OSError, http.client.HTTPException):
        return math.nan
    for line in body.decode().splitlines():
        if line.startswith(f"{name} "):
            return float(line.split()[1])
    return math.nan


def served_copy(directory: Path, scratch: Path) -> Path:
    """A directory of ``directory``'s latest export and its pack if it has one (hard links where it can), for a
    service to sync from."""
    exports = scratch / "exports"
    exports.mkdir()
    latest = latest_export(directory)
    for path in (latest, directory / pack_key(latest.name)):
        if path.is_file():
            try:
                os.link(path, exports / path.name)
            except OSError:
                shutil.copy2(path, exports / path.name)
    return exports


def sync_lag(port: int, exports: Path, limit: float = 60.0) -> float:
    """Publish a newer export in ``exports`` (the latest's bytes under a name of now, without a pack: the service
    parses it, as it would a fresh export) and return the seconds until the service's health names it (``limit``
    if it never does)."""
    latest = latest_export(exports)
    newer = exports / f"pool-{datetime.now(UTC):%Y%m%dT%H%M%SZ}{latest.name[len('pool-YYYYmmddTHHMMSSZ') :]}"
    assert newer.name > latest.name, f"{newer.name} does not sort after {latest.name}"
    staged = exports.parent / newer.name
    shutil.copyfile(latest, staged)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    published = time.perf_counter()
    os.rename(staged, newer)  # whole at once, as storage shows an upload
    try:
        while time.perf_counter() - published < limit:
            try:
                connection.request("GET", "/api/v1/health")
                key = json.loads(connection.getresponse().read())["export"]["key"]
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                continue
            if key.endswith(newer.name):
                return time.perf_counter() - published
            time.sleep(0.05)
        return limit
    finally:
        connection.close()


def idle_after(pid: int, limit: float = 60.0) -> float:
    """Seconds until the server's processes use under 5 % of a core over a second (its backlog drained), at most
    ``limit`` (a figure of ``limit`` means: still busy then)."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        before = sum(cpu_seconds(p) for p in process_tree(pid))
        time.sleep(1)
        if sum(cpu_seconds(p) for p in process_tree(pid)) - before < 0.05:
            break
    return time.perf_counter() - started


def median_table(results: dict[str, list[dict[str, float]]], digits: int) -> dict[str, dict[str, float]]:
    """Each figure's median over the rounds, a side a column, printed as a Markdown table; the medians by side."""
    keys = list(next(iter(results.values()))[0])
    median = {side: {k: statistics.median(r[k] for r in runs) for k in keys} for side, runs in results.items()}
    print("| figure | " + " | ".join(results) + " |\n|---|" + "---:|" * len(results))
    for key in keys:
        print(f"| {key} | " + " | ".join(f"{median[side][key]:,.{digits}f}" for side in results) + " |")
    return median


def work_flood_target(args: argparse.Namespace, src: Path) -> None:
    directory = pool_dir(args.pool)
    codes = iter(pool_ids(directory).read_text().split())
    trees = {"this": THIS, "baseline": src}

    def measure(side: str, n: int) -> dict[str, float]:
        port = free_port()
        env = {
            "PYTHONPATH": str(trees[side]),
            "SUDOKUPOOL_METRICS_PORT": str(port),
            "SUDOKUPOOL_SYNC_INTERVAL": f"{args.sync_interval:g}",
        }
        with (
            tempfile.TemporaryDirectory(dir=OUT, prefix="work-flood-") as scratch,
            service(served_copy(directory, Path(scratch)), log := OUT / f"ab-work-flood-{side}.log", env=env) as server,
        ):
            exports = Path(scratch) / "exports"
            random = Target(f"{side}: v2 random", server.base, "/api/v2/puzzles/random", KEYED)
            seconds = args.seconds
            wrk(random, seconds=1, connections=args.connections)  # connections and first answers
            idle_after(server.pid, 30)  # what a fresh service does in the background once it answers
            start = rss(server.pid)
            with Memory(server.pid), Scrapes(port) as quiet_scrapes:
                quiet = wrk(random, seconds=seconds, connections=args.connections)
            began = time.perf_counter()
            ran, waited = schedstat(server.pid)
            with Memory(server.pid) as memory, Flood(server, next(codes), args.flood_clients) as flood:
                time.sleep(2)
                with Scrapes(port) as scrapes:
                    flooded = wrk(random, seconds=seconds, connections=args.connections)
                    before_sync = memory.worker
                    lag = sync_lag(server.port, exports)
                    load = gauge(port, "sudokupool_sync_last_load_seconds")
                    time.sleep(max(0.0, began + args.flood_seconds - time.perf_counter()))
                flood_seconds = time.perf_counter() - began
            ran, waited = (after - before for after, before in zip(schedstat(server.pid), (ran, waited), strict=True))
            drain = idle_after(server.pid)
            with Memory(server.pid), Scrapes(port):
                after = wrk(random, seconds=seconds, connections=args.connections)
            found = {
                "quiet req/s": quiet.rps,
                "quiet p99 ms": quiet.p99_ms,
                "quiet after req/s": after.rps,
                "quiet after p99 ms": after.p99_ms,
                "flood req/s": flooded.rps,
                "flood p99 ms": flooded.p99_ms,
                "quiet scrape ms (median)": statistics.median(quiet_scrapes.ms),
                "flood scrape ms (median)": statistics.median(scrapes.ms),
                "flood scrape ms (p90)": statistics.quantiles(scrapes.ms, n=10)[-1],
                "flood scrape ms (max)": max(scrapes.ms),
                "flood scrapes over 100 ms %": 100 * sum(ms > 100 for ms in scrapes.ms) / len(scrapes.ms),
                "flood scrapes": len(scrapes.ms),
                "sync lag s": lag,
                "sync's load s": load,
                "sync's load CPU s": load_cpu(log),
                "flood s": flood_seconds,
                "busy after the flood s": drain - 1,
                "worker's loop thread: ran s in the flood": ran,
                "worker's loop thread: waited for a core s in the flood": waited,
                "worker RSS start MB": start / MB,
                "worker RSS peak before the sync MB": before_sync / MB,
                "worker RSS peak MB": memory.worker / MB,
                "worker RSS after MB": rss(server.pid) / MB,
                "render cache after MB": gauge(port, "sudokupool_image_cache_bytes") / MB,
                "pool RSS peak MB": memory.pool / MB,
                "work process RSS peak MB": memory.process / MB,
                "images answered": flood.answers.get("200", 0),
                "503s": flood.answers.get("503", 0),
                "load average (1 min)": os.getloadavg()[0],
            }
        print(f"round {n + 1 if n >= 0 else 'warm-up'} {side:8s} "
              + "  ".join(f"{k} {v:,.1f}" for k, v in found.items()), flush=True)  # fmt: skip
        return found

    results = interleave(["this", "baseline"], args.rounds, measure, warm_up=False)
    print(f"medians of {args.rounds} rounds, {args.seconds:g} s of wrk ({args.connections} connections) each phase, "
          f"{args.flood_clients} flooding clients for {args.flood_seconds:g} s, a sync every {args.sync_interval:g} s, "
          f"a fresh service a side a round; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")  # fmt: skip
    median = median_table(results, digits=1)
    for side, m in median.items():
        # Quiet: the mean of the runs before and after the flood, so that a drift over the round cancels out.
        rps, p99 = ((m[f"quiet {k}"] + m[f"quiet after {k}"]) / 2 for k in ("req/s", "p99 ms"))
        print(f"{side}: random under the flood / quiet: p99 {m['flood p99 ms'] / p99:.2f}x (goal <= 1.5), req/s "
              f"{m['flood req/s'] / rps:.2f}x (goal >= 0.75); worker RSS peak {m['worker RSS peak MB']:.1f} MB (goal "
              f"<= 150), after - start {m['worker RSS after MB'] - m['worker RSS start MB']:+.1f} MB (goal within 20; "
              f"the render cache holds {m['render cache after MB']:.1f} MB of it); "
              f"scrape median {m['flood scrape ms (median)']:,.1f} ms, max {m['flood scrape ms (max)']:,.1f} ms (goal "
              f"< 100); sync lag {m['sync lag s']:.2f} s (goal <= {args.sync_interval + 1:g})")  # fmt: skip


def options(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--pool", default="snapshots")
    add("--seconds", type=float, default=10.0, help="of each wrk run")
    add("--connections", type=int, default=8, help="of wrk")
    add("--flood-clients", type=int, default=8)
    add("--flood-seconds", type=float, default=60.0, help="of the flood, from its first request to its last")
    add("--sync-interval", type=float, default=1.0, help="the services' SUDOKUPOOL_SYNC_INTERVAL")


def flood_parts_main(argv: list[str] | None = None) -> int:
    """``python -m bench flood-parts``: which part of the image flood costs v2 random its p99, on one service of this
    checkout (as ``ab work-flood`` serves it, the demo pool), each phase once a round, the order rotated:

    - **quiet**: wrk on v2 random (keyed, ``--connections``) for ``--seconds``, alone;
    - **renders**: the same while a process of its own renders one puzzle's image at every size, PNG and WebP, as a
      work process runs (its niceness and scheduling policy, a process group of its own), no request made for it;
    - **lookups**: while the flood's clients ask for one image at one size (cached after the first: the flood's
      connections and requests without a render; half of them abandon each request after 50 ms, as in the flood);
    - **flood**: while they flood as ``ab work-flood`` does (every size, PNG and WebP, a puzzle of its own each
      round, so nothing is cached).

    Medians of the rounds; req/s and p99 of each phase against quiet's, and the cores the worker (not its work
    processes, which are replaced as they grow) and the flood's clients (this process's threads) took while wrk ran.
    """
    parser = argparse.ArgumentParser(description=flood_parts_main.__doc__)
    options(parser)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    directory = pool_dir(args.pool)
    codes = iter(pool_ids(directory).read_text().split())
    phases = ["quiet", "renders", "lookups", "flood"]
    with service(directory, OUT / "flood-parts.log") as server:
        random = Target("v2 random", server.base, "/api/v2/puzzles/random", KEYED)
        wrk(random, seconds=1, connections=args.connections)

        def measure(phase: str, n: int) -> tuple[float, float, float, float]:
            disturbance: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
            if phase == "renders":
                disturbance = Renders(THIS, next(codes), directory)
            elif phase == "lookups":
                disturbance = CachedFlood(server, next(codes), args.flood_clients)
            elif phase == "flood":
                disturbance = Flood(server, next(codes), args.flood_clients)
            with disturbance:
                if phase != "quiet":
                    time.sleep(2)
                clients, served = time.process_time(), cpu_seconds(server.pid)
                began = time.perf_counter()
                run = wrk(random, seconds=args.seconds, connections=args.connections)
                took = time.perf_counter() - began
                clients = (time.process_time() - clients) / took
                served = (cpu_seconds(server.pid) - served) / took
            idle_after(server.pid, 30)
            print(f"round {n + 1} {phase:8s} req/s {run.rps:8,.0f}  p99 {run.p99_ms:6.2f} ms  cores: the worker's "
                  f"{served:.2f}, the flood's clients' {clients:.2f}", flush=True)  # fmt: skip
            return run.rps, run.p99_ms, served, clients

        found = interleave(phases, args.rounds, measure)
    median = {phase: [statistics.median(x[i] for x in found[phase]) for i in range(4)] for phase in phases}
    print(f"medians of {args.rounds} rounds, {args.seconds:g} s of wrk ({args.connections} connections) a phase; "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")  # fmt: skip
    print("| v2 random while | req/s | p99 ms | req/s / quiet | p99 / quiet | cores: worker | flood's clients |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rps, p99, _, _ = median["quiet"]
    for phase in phases:
        r, p, served, clients = median[phase]
        print(f"| {phase} | {r:,.0f} | {p:.2f} | {r / rps:.2f}x | {p / p99:.2f}x | {served:.2f} | {clients:.2f} |")
    return 0


def scrape_cost_main(argv: list[str] | None = None) -> int:
    """``python -m bench scrape-cost [--baseline REV]``: what a metrics scrape costs the worker that answers it, and
    the lookups it serves meanwhile, on a service of this checkout (and of BASELINE, side by side, in rotated rounds;
    a fresh service a side a round, one worker, metrics on, the demo pool).

    A round of a side: wrk on v2 random for 1 s, then the image flood of ``ab work-flood`` for 3 s (the metrics'
    families filled as a flooded service has them), then once the service is idle:

    - ``--scrapes`` scrapes one after another, timed as in ``ab work-flood``: the worker's CPU per scrape and the
      median time of one;
    - wrk on v2 random (keyed, ``--connections``) for ``--seconds`` alone, then the same while a thread here scrapes
      one scrape after another: req/s and p99 each. With the scrapes back to back, a lookup that waits behind a part
      of one is no rare event: the p99 against alone is what the longest hold of the loop costs a lookup.
    """
    parser = argparse.ArgumentParser(description=scrape_cost_main.__doc__)
    parser.add_argument("--baseline", help="a git revision or another checkout's src/ to run beside this one")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0, help="of each wrk run")
    parser.add_argument("--connections", type=int, default=8, help="of wrk")
    parser.add_argument("--scrapes", type=int, default=200)
    args = parser.parse_args(argv)
    directory = pool_dir("snapshots")
    codes = iter(pool_ids(directory).read_text().split())
    with contextlib.ExitStack() as stack:
        trees = {"this": THIS}
        if args.baseline:
            trees["baseline"] = stack.enter_context(baseline_src(args.baseline))

        def measure(side: str, n: int) -> dict[str, float]:
            port = free_port()
            env = {"PYTHONPATH": str(trees[side]), "SUDOKUPOOL_METRICS_PORT": str(port)}
            with service(directory, OUT / f"scrape-cost-{side}.log", env=env) as server:
                random = Target(f"{side}: v2 random", server.base, "/api/v2/puzzles/random", KEYED)
                wrk(random, seconds=1, connections=args.connections)
                with Flood(server, next(codes), 8):
                    time.sleep(3)
                idle_after(server.pid, 30)
                before = cpu_seconds(server.pid)
                walls = [scrape_ms(port) for _ in range(args.scrapes)]
                cpu_ms = 1e3 * (cpu_seconds(server.pid) - before) / args.scrapes
                alone = wrk(random, seconds=args.seconds, connections=args.connections)
                stop, scraped = threading.Event(), [0]

                def scrape_on() -> None:
                    while not stop.is_set():
                        scrape_ms(port)
                        scraped[0] += 1

                scraper = threading.Thread(target=scrape_on)
                scraper.start()
                try:
                    scraping = wrk(random, seconds=args.seconds, connections=args.connections)
                finally:
                    stop.set()
                    scraper.join()
            found = {
                "scrape: worker CPU ms": cpu_ms,
                "scrape: median ms": statistics.median(walls),
                "v2 random alone: req/s": alone.rps,
                "v2 random alone: p99 ms": alone.p99_ms,
                "v2 random while scraping: req/s": scraping.rps,
                "v2 random while scraping: p99 ms": scraping.p99_ms,
                "scrapes a second": scraped[0] / args.seconds,
            }
            print(f"round {n + 1} {side:8s} " + "  ".join(f"{k} {v:,.2f}" for k, v in found.items()), flush=True)
            return found

        results = interleave(list(trees), args.rounds, measure)
    print(f"medians of {args.rounds} rounds; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    median = median_table(results, digits=2)
    for side, m in median.items():
        print(f"{side}: v2 random while scraping / alone: p99 "
              f"{m['v2 random while scraping: p99 ms'] / m['v2 random alone: p99 ms']:.2f}x, req/s "
              f"{m['v2 random while scraping: req/s'] / m['v2 random alone: req/s']:.2f}x")  # fmt: skip
    return 0
