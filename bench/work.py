"""``python -m bench ab work-flood BASELINE``: lookups while clients flood the service with distinct images.

Both sides are served as the harness serves them (one worker, a key whose limit never trips, metrics on) from
the same pool, one after the other in rotated rounds, a fresh service a side a round. A round of a side:

1. **quiet**: once the fresh service is idle, wrk on v2 random (keyed, ``--connections``) for ``--seconds``:
   req/s and p99; three timed metrics scrapes.
2. **flood**: ``--flood-clients`` clients (half of them abandon each request after 50 ms, half wait for it) ask
   on ``/api/v1`` (unlimited) for one puzzle's image at every size from 100 to 2000 px, PNG and WebP in turn, a
   puzzle of its own each round so nothing is cached; after 2 s of it, wrk again as in 1, then three timed
   metrics scrapes (one not answered within 60 s counts as 60,000 ms). Meanwhile the worker's RSS and the RSS
   of the processes under it (the work pool) are read every 0.1 s.
3. **after**: the flood stops; how long the service stays busy (its processes above 5 % of a core: the backlog
   of abandoned requests it still renders), then the worker's RSS against its RSS at the round's start, and wrk
   as in 1 again ("quiet after": the quiet figure is the mean of the two, so drift over a round cancels out).

Medians over the rounds, and the ratios the issue's targets name: random's p99 and req/s under the flood
against quiet, on each side.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import statistics
import threading
import time
from pathlib import Path

import httpx

from bench.child import KEY
from bench.harness import OUT, ROOT, Target, interleave, pool_dir, pool_ids, service, wrk
from support.servers import Server, cpu_seconds, free_port, proc_status, process_tree

THIS = ROOT / "src"
KEYED = {"X-API-Key": KEY}
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

    def run(self, n: int) -> None:
        host, port = "127.0.0.1", self.server.port
        sizes = [(size, fmt) for size in range(100 + n, 2001, self.clients) for fmt in ("png", "webp")]
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


class Memory:
    """The worker's RSS and its children's (the work pool), read every 0.1 s: the peaks."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.worker = 0
        self.pool = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.wait(0.1):
            with contextlib.suppress(OSError):
                self.worker = max(self.worker, rss(self.pid))
                self.pool = max(self.pool, sum(rss(p) for p in process_tree(self.pid) if p != self.pid))

    def __enter__(self) -> Memory:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


def rss(pid: int) -> int:
    try:
        return proc_status(pid).get("VmRSS", 0)
    except OSError:
        return 0


#: Seconds a timed scrape waits; a scrape not answered by then counts as this long.
SCRAPE_TIMEOUT = 60.0


def scrape_ms(port: int) -> float:
    started = time.perf_counter()
    try:
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=SCRAPE_TIMEOUT).raise_for_status()
    except httpx.TimeoutException:
        return 1000 * SCRAPE_TIMEOUT
    return 1000 * (time.perf_counter() - started)


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


def work_flood_target(args: argparse.Namespace, src: Path) -> None:
    directory = pool_dir(args.pool)
    codes = iter(pool_ids(directory).read_text().split())
    trees = {"this": THIS, "baseline": src}

    def measure(side: str, n: int) -> dict[str, float]:
        port = free_port()
        env = {"PYTHONPATH": str(trees[side]), "SUDOKUPOOL_METRICS_PORT": str(port)}
        with service(directory, OUT / f"ab-work-flood-{side}.log", env=env) as server:
            random = Target(f"{side}: v2 random", server.base, "/api/v2/puzzles/random", KEYED)
            seconds = args.seconds if n >= 0 else 1
            wrk(random, seconds=1, connections=args.connections)  # connections and first answers
            idle_after(server.pid, 30)  # what a fresh service does in the background once it answers
            start = rss(server.pid)
            quiet = wrk(random, seconds=seconds, connections=args.connections)
            quiet_scrape = max(scrape_ms(port) for _ in range(3))
            with Memory(server.pid) as memory, Flood(server, next(codes), args.flood_clients) as flood:
                time.sleep(2)
                flooded = wrk(random, seconds=seconds, connections=args.connections)
                scrapes = [scrape_ms(port) for _ in range(3)]
            drain = idle_after(server.pid)
            after = wrk(random, seconds=seconds, connections=args.connections)
            found = {
                "quiet req/s": quiet.rps,
                "quiet p99 ms": quiet.p99_ms,
                "quiet after req/s": after.rps,
                "quiet after p99 ms": after.p99_ms,
                "flood req/s": flooded.rps,
                "flood p99 ms": flooded.p99_ms,
                "quiet scrape ms (max of 3)": quiet_scrape,
                "flood scrape ms (max of 3)": max(scrapes),
                "flood scrape ms (median)": statistics.median(scrapes),
                "busy after the flood s": drain - 1,
                "worker RSS start MB": start / MB,
                "worker RSS peak MB": memory.worker / MB,
                "worker RSS after MB": rss(server.pid) / MB,
                "pool RSS peak MB": memory.pool / MB,
                "images answered": flood.answers.get("200", 0),
                "503s": flood.answers.get("503", 0),
            }
        print(f"round {n + 1 if n >= 0 else 'warm-up'} {side:8s} "
              + "  ".join(f"{k} {v:,.1f}" for k, v in found.items()), flush=True)  # fmt: skip
        return found

    results = interleave(["this", "baseline"], args.rounds, measure, warm_up=False)
    print(f"medians of {args.rounds} rounds, {args.seconds:g} s of wrk ({args.connections} connections) each phase, "
          f"{args.flood_clients} flooding clients, a fresh service a side a round")  # fmt: skip
    keys = list(results["this"][0])
    print("| figure | this | baseline |\n|---|---:|---:|")
    median = {side: {k: statistics.median(r[k] for r in runs) for k in keys} for side, runs in results.items()}
    for key in keys:
        print(f"| {key} | {median['this'][key]:,.1f} | {median['baseline'][key]:,.1f} |")
    for side, m in median.items():
        # Quiet: the mean of the runs before and after the flood, so that a drift over the round cancels out.
        rps, p99 = ((m[f"quiet {k}"] + m[f"quiet after {k}"]) / 2 for k in ("req/s", "p99 ms"))
        print(f"{side}: random under the flood / quiet: p99 {m['flood p99 ms'] / p99:.2f}x (goal <= 1.5), req/s "
              f"{m['flood req/s'] / rps:.2f}x (goal >= 0.75); worker RSS after - start "
              f"{m['worker RSS after MB'] - m['worker RSS start MB']:+.1f} MB")  # fmt: skip


def options(parser: argparse.ArgumentParser) -> None:
    add = parser.add_argument
    add("--pool", default="snapshots")
    add("--seconds", type=float, default=10.0, help="of each wrk run")
    add("--connections", type=int, default=8, help="of wrk")
    add("--flood-clients", type=int, default=8)
