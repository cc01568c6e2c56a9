"""``python -m bench image``: the service's container image, built and run as tests/deploy do it
(:mod:`support.containers`): its size, start to healthy, and per worker count its memory and req/s."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from bench.harness import Target, machine, wrk
from bench.service import smaps
from support.containers import build_image, container_pids, podman, remove, run_detached, wait_healthy
from support.servers import free_port


def image_main() -> int:
    """``python -m bench image``: the image's size, start to healthy, and per worker count its memory and req/s."""
    parser = argparse.ArgumentParser(description=image_main.__doc__)
    parser.add_argument("--workers", default="1,2", help="WEB_CONCURRENCY values (default 1,2)")
    parser.add_argument("--rounds", type=int, default=3, help="starts timed per worker count (default 3)")
    parser.add_argument("--seconds", type=float, default=5, help="each wrk run (default 5)")
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    image = build_image()
    size = int(json.loads(podman("image", "inspect", image).stdout)[0]["Size"])
    print(json.dumps({"machine": machine(), "image": image, "size_mb": round(size / 1e6, 1)}))
    for workers in (int(w) for w in args.workers.split(",")):
        starts, memory, rates = [], [], []
        for round_ in range(args.rounds):
            port = free_port()
            name = f"sudokupool-bench-{os.getpid()}-{workers}-{round_}"
            env = {"PORT": str(port), "WEB_CONCURRENCY": str(workers), "SUDOKUPOOL_LIMIT_ANONYMOUS": "1000000000"}
            started = time.monotonic()
            try:
                run_detached(image, name, env)
                wait_healthy(f"http://127.0.0.1:{port}/api/v2/health", name)
                starts.append(time.monotonic() - started)  # from `podman run`, container creation included
                base = f"http://127.0.0.1:{port}"
                run = wrk(
                    Target("random", base, "/api/v2/puzzles/random"), seconds=args.seconds, connections=args.connections
                )
                rates.append(run.requests / run.seconds)
                figures = [smaps(pid) for pid in container_pids(name)]
                memory.append({k: round(sum(f[k] for f in figures), 1) for k in ("rss_mb", "pss_mb", "uss_mb")})
            finally:
                remove(name)
        print(
            json.dumps(
                {
                    "workers": workers,
                    "start_to_healthy_s": [round(s, 2) for s in starts],
                    "start_median_s": round(statistics.median(starts), 2),
                    "req_per_s_median": round(statistics.median(rates)),
                    "memory_after_load": memory,
                }
            )
        )
    return 0
