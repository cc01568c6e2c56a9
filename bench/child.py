"""What one side of ``python -m bench ab`` runs in its own process, on its own ``sudokupool`` (``PYTHONPATH``).

``python -m bench.child KIND ...`` answers one JSON line for each line it reads, after a first ``{"ready": ...}``
line. It imports nothing else of bench/, so a baseline's process loads only the baseline's code.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The API key every side is configured with (its limit never trips).
KEY = "bench-key-with-a-limit-that-never-trips"


def serve(answer: Callable[[str], Any], ready: Any = True) -> None:
    print(json.dumps({"ready": ready}), flush=True)
    for line in sys.stdin:
        print(json.dumps(answer(line.rstrip("\n"))), flush=True)


def grader() -> None:
    """A chunk of puzzles (a JSON list) in, the CPU seconds of each grade out."""
    from sudokupool.sudoku.grader import grade

    def answer(line: str) -> list[float]:
        times = []
        for puzzle in json.loads(line):
            start = time.process_time()
            grade(puzzle)
            times.append(time.process_time() - start)
        return times

    serve(answer)


def best(step: Callable[[Any, Any], object], items: list[Any], lines: int) -> float:
    """Least CPU µs per line of ``step`` (a fresh PoolBuilder, an item) over ``items``, of 5 passes."""
    from sudokupool.loading.pool import PoolBuilder

    times = []
    for _ in range(5):
        builder = PoolBuilder(loaded_at=1)
        started = time.process_time()
        for item in items:
            step(builder, item)
        times.append(time.process_time() - started)
        builder.file.close()
    return min(times) / lines * 1e6


def parse(lines_file: str) -> None:
    """CPU µs per line of parse_record, and of parse_record then PoolBuilder.add (a line of a load without a
    pack), best of 5 passes over the lines of ``lines_file``."""
    from sudokupool.loading.export import parse_record

    lines = Path(lines_file).read_bytes().splitlines()

    def parse_only(builder: Any, line: bytes) -> object:
        return parse_record(line)

    def whole(builder: Any, line: bytes) -> object:
        return builder.add(parse_record(line))

    serve(lambda _: [best(parse_only, lines, len(lines)), best(whole, lines, len(lines))])


def metrics(ids_file: str) -> None:
    """The app built on ``SUDOKUPOOL_EXPORTS`` in process (no server, no sockets): ``PATH COUNT`` in, CPU µs per
    request out, for v2 by id (the ids of ``ids_file``) or v2 random, with a key whose limit never trips."""
    from sudokupool.app import create_app
    from sudokupool.config import Settings
    from sudokupool.keys import digest

    ids = [line.split()[0] for line in Path(ids_file).read_text().splitlines()]
    settings = Settings.from_environ(
        {**os.environ, "SUDOKUPOOL_API_KEYS": digest(KEY), "SUDOKUPOOL_LIMIT_KEYED": "1000000000",
         "SUDOKUPOOL_SYNC_INTERVAL": "0", "SUDOKUPOOL_LOG_LEVEL": "warning"}
    )  # fmt: skip
    app = create_app(settings)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(app.startup())

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        pass

    def scope(path: str) -> dict[str, object]:
        return {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": b"",
                "headers": [(b"host", b"bench"), (b"x-api-key", KEY.encode())], "client": ("127.0.0.1", 5000),
                "server": ("127.0.0.1", 8000), "scheme": "http", "http_version": "1.1", "root_path": ""}  # fmt: skip

    paths = {"v2 by id": [f"/api/v2/puzzles/{i}" for i in ids], "v2 random": ["/api/v2/puzzles/random"]}

    async def batch(scopes: list[dict[str, object]]) -> float:
        start = time.process_time()
        for each in scopes:
            await app.http(each, receive, send)
        return 1e6 * (time.process_time() - start) / len(scopes)

    def answer(line: str) -> float:
        name, count = line.rsplit(" ", 1)
        chosen = paths[name]
        return loop.run_until_complete(batch([scope(chosen[n % len(chosen)]) for n in range(int(count))]))

    serve(answer)
    loop.run_until_complete(app.shutdown())


def pool_ops(directory: str, ids_file: str, ops: str) -> None:
    """The pool loaded as the service loads it; each line read times ``ops`` calls of what the v2 handlers call
    (ns per call, CPU time): by id (find, etag, gzip_body), by id for an identity client (body), random."""
    try:
        from sudokupool.loading.loader import load_latest
    except ImportError:  # a baseline from before the loading/ package
        from sudokupool.loader import load_latest  # type: ignore[no-redef]
    from sudokupool.storage.local import LocalStore

    count = int(ops)
    pool, report = asyncio.run(load_latest(LocalStore(Path(directory))))
    ids = Path(ids_file).read_text().split()
    rng = random.Random(1)
    picks = [rng.choice(ids) for _ in range(count)]
    gzip_body = getattr(pool, "gzip_body", pool.body)

    def timed(calls: int, call: Callable[[str], object]) -> float:
        started = time.process_time_ns()
        for cid in picks[:calls]:
            call(cid)
        return (time.process_time_ns() - started) / calls

    def by_id(cid: str, body: Callable[[int], object]) -> None:
        index = pool.find(cid)
        assert index is not None
        pool.etag(index)
        body(index)

    def answer(_: str) -> dict[str, float]:
        return {
            "by id, gzip": timed(count, lambda cid: by_id(cid, gzip_body)),
            "by id, identity": timed(count // 10, lambda cid: by_id(cid, pool.body)),
            "random, gzip": timed(count, lambda _: gzip_body(pool.pick())),
        }

    serve(answer, report.summary())


def handlers(directory: str, calls: str) -> None:
    """The v2 handlers on the pool, no HTTP: CPU ns per call of random, random by difficulty and by id (gzip
    clients), ``calls`` calls of each for every line read."""
    from sudokupool.api.endpoints import Endpoints
    from sudokupool.config import Settings
    from sudokupool.loading.loader import load_latest
    from sudokupool.state import Runtime
    from sudokupool.storage.local import LocalStore

    pool, _ = asyncio.run(load_latest(LocalStore(Path(directory)), loaded_at=0))
    endpoints = Endpoints(Runtime(Settings(), pool=pool), b"{}")
    count = int(calls)
    ids = [pool.body(i)[17:30].decode() for i in range(0, len(pool), 7)]
    gzip = [(b"accept-encoding", b"gzip")]

    def per_call(query: bytes, call: Callable[[dict[str, object], int], object]) -> float:
        scope = {"query_string": query, "headers": gzip}
        started = time.process_time_ns()
        for i in range(count):
            call(scope, i)
        return (time.process_time_ns() - started) / count

    def answer(_: str) -> dict[str, float]:
        return {
            "random": per_call(b"", lambda scope, _: endpoints.random(scope, None)),
            "random?difficulty=hard": per_call(b"difficulty=hard", lambda scope, _: endpoints.random(scope, None)),
            "by id": per_call(b"", lambda scope, i: endpoints.puzzle(scope, ids[i % len(ids)])),
        }

    serve(answer)


KINDS: dict[str, Callable[..., None]] = {
    "grader": grader,
    "parse": parse,
    "metrics": metrics,
    "pool-ops": pool_ops,
    "handlers": handlers,
}

if __name__ == "__main__":
    KINDS[sys.argv[1]](*sys.argv[2:])
