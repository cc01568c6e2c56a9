"""The app's own CPU per answer, with no server and no socket: the ASGI app called in a loop on the demo pool.

    python bench/app_cost.py [--requests 20000] [--rounds 3]

What is left of a request when the server's part (HTTP parsing, writing, the event loop's I/O) is taken
away: the front, the client address, the limiter (on, never tripping), the router and the handler's
prepared bytes. Each path is called with the headers of an identity client and of a gzip client; the
figure is CPU time (``time.process_time``) per call, the median of the rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(BENCH)]

from harness import OUT, latest_export  # noqa: E402
from load import sample_ids  # noqa: E402


def scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000), "scheme": "http", "method": "GET", "root_path": "", "path": path,
            "raw_path": path.encode(), "query_string": b"", "headers": headers}  # fmt: skip


async def measure(requests: int, rounds: int) -> dict[str, float]:
    os.environ.update(
        SUDOKUPOOL_EXPORTS=str(ROOT / "snapshots"), SUDOKUPOOL_LIMIT_ANONYMOUS="1000000000",
        SUDOKUPOOL_SYNC_INTERVAL="0", SUDOKUPOOL_LOG_LEVEL="warning",
    )  # fmt: skip
    from sudokupool.app import create_app

    app = create_app()
    startup: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await startup.put({"type": "lifespan.startup"})
    started = asyncio.Event()

    async def lifespan_send(message: dict[str, Any]) -> None:
        if message["type"].startswith("lifespan.startup"):
            started.set()

    lifespan = asyncio.create_task(app({"type": "lifespan"}, startup.get, lifespan_send))
    await started.wait()
    OUT.mkdir(exist_ok=True)
    sampled = sample_ids(latest_export(ROOT / "snapshots"), OUT / "ids-snapshots.txt")
    ids = random.choices(sampled.read_text().split(), k=requests)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        return None

    identity = [(b"host", b"127.0.0.1:8000")]
    gzipped = [*identity, (b"accept-encoding", b"gzip")]
    cases = {
        "v2 solution": ("/api/v2/puzzles/{id}/solution", identity),
        "v2 by id, gzip client": ("/api/v2/puzzles/{id}", gzipped),
        "v2 by id, identity client": ("/api/v2/puzzles/{id}", identity),
        "v2 random, gzip client": ("/api/v2/puzzles/random", gzipped),
        "v2 random, identity client": ("/api/v2/puzzles/random", identity),
        "v1 by id, gzip client (no limiter)": ("/api/v1/puzzles/{id}", gzipped),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (template, headers) in cases.items():
            scopes = [scope(template.replace("{id}", i), headers) for i in ids]
            begin = time.process_time()
            for s in scopes:
                await app(s, receive, send)
            times[name].append((time.process_time() - begin) / len(scopes) * 1e6)
    await startup.put({"type": "lifespan.shutdown"})
    await lifespan
    return {name: round(statistics.median(values), 1) for name, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    results = asyncio.run(measure(args.requests, args.rounds))
    print("| path | app CPU µs per answer (median) |\n|---|---:|")
    for name, value in results.items():
        print(f"| {name} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
