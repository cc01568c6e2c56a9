"""What one side of ``python -m bench ab`` runs in its own process, on its own ``sudokupool`` (``PYTHONPATH``).

``python -m bench.child KIND ...`` answers one JSON line for each line it reads, after a first ``{"ready": ...}``
line. It imports no module of bench/ that imports ``sudokupool``, so a baseline's process loads only the baseline's
code.
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


def cpu_ns(call: Callable[[Any], object], items: list[Any]) -> float:
    """CPU ns per call of ``call`` on each of ``items``."""
    started = time.process_time_ns()
    for item in items:
        call(item)
    return (time.process_time_ns() - started) / len(items)


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
    from sudokupool.pool.pool import PoolBuilder

    times = []
    for _ in range(5):
        builder = PoolBuilder(loaded_at=1)
        started = time.process_time()
        for item in items:
            step(builder, item)
        times.append(time.process_time() - started)
        builder.file.close()
    return min(times) / lines * 1e6


def scope(path: str, headers: list[tuple[bytes, bytes]], query: bytes = b"") -> dict[str, Any]:
    """An HTTP request's ASGI scope, as uvicorn makes it."""
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
            "path": path, "raw_path": path.encode(), "query_string": query, "root_path": "", "headers": headers,
            "server": ("127.0.0.1", 8000), "client": ("192.0.2.1", 50000)}  # fmt: skip


async def receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def send(message: dict[str, Any]) -> None:
    pass


def app(ids_file: str) -> None:
    """The app built on ``SUDOKUPOOL_EXPORTS`` in process (no server, no sockets), with a key whose limit never
    trips: ``COUNT PATH [gzip]`` in (``{id}`` in PATH: the ids of ``ids_file`` in turn; ``gzip``: a client that
    takes gzip), CPU µs per request out."""
    from sudokupool.app import create_app
    from sudokupool.config import Settings

    try:
        from sudokupool.ratelimit.keys import digest
    except ImportError:  # a baseline with its keys at the top of the package
        from sudokupool.keys import digest  # type: ignore[no-redef]

    ids = Path(ids_file).read_text().split()
    settings = Settings.from_environ(
        {**os.environ, "SUDOKUPOOL_API_KEYS": digest(KEY), "SUDOKUPOOL_LIMIT_KEYED": "1000000000",
         "SUDOKUPOOL_SYNC_INTERVAL": "0", "SUDOKUPOOL_LOG_LEVEL": "warning"}
    )  # fmt: skip
    service = create_app(settings)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(service.startup())

    async def batch(scopes: list[dict[str, Any]]) -> float:
        start = time.process_time()
        for each in scopes:
            await service(each, receive, send)
        return 1e6 * (time.process_time() - start) / len(scopes)

    def answer(line: str) -> float:
        count, path, *gzip = line.split()
        headers = [(b"host", b"bench"), (b"x-api-key", KEY.encode()), *([(b"accept-encoding", b"gzip")] * len(gzip))]
        paths = [path.replace("{id}", ids[n % len(ids)]) for n in range(int(count))]
        return loop.run_until_complete(batch([scope(each, headers) for each in paths]))

    serve(answer)
    loop.run_until_complete(service.shutdown())


def collector() -> None:
    """The app started on ``SUDOKUPOOL_EXPORTS`` as a worker starts it, then ``frozen`` or ``unfrozen`` in: the CPU
    ms of a full collection of the cyclic garbage collector, with what startup left out of collections (``gc.freeze``)
    left out, or put back for it (and left out again after); and how many objects it visited."""
    import gc

    from sudokupool.app import create_app
    from sudokupool.config import Settings

    settings = Settings.from_environ({**os.environ, "SUDOKUPOOL_SYNC_INTERVAL": "0", "SUDOKUPOOL_LOG_LEVEL": "warning"})
    service = create_app(settings)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(service.startup())

    def answer(line: str) -> list[float]:
        if line == "unfrozen":
            gc.unfreeze()
        visited = len(gc.get_objects())
        started = time.process_time()
        gc.collect()
        ms = 1e3 * (time.process_time() - started)
        if line == "unfrozen":
            gc.freeze()
        return [ms, visited]

    serve(answer, gc.get_freeze_count())
    loop.run_until_complete(service.shutdown())


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

    def by_id(cid: str, body: Callable[[int], object]) -> None:
        index = pool.find(cid)
        assert index is not None
        pool.etag(index)
        body(index)

    def answer(_: str) -> dict[str, float]:
        return {
            "by id, gzip": cpu_ns(lambda cid: by_id(cid, gzip_body), picks),
            "by id, identity": cpu_ns(lambda cid: by_id(cid, pool.body), picks[: count // 10]),
            "random, gzip": cpu_ns(lambda _: gzip_body(pool.pick()), picks),
        }

    serve(answer, report.summary())


def handlers(directory: str, calls: str) -> None:
    """The v2 handlers on the pool, no HTTP, gzip clients: a JSON object ``{case: [handler, query]}`` in
    (handler ``random`` or ``puzzle``, by ids of the pool in turn), CPU ns per call of each case out, ``calls``
    calls each."""
    from sudokupool.api.endpoints import Endpoints
    from sudokupool.config import Settings
    from sudokupool.loading.loader import load_latest
    from sudokupool.state import Runtime
    from sudokupool.storage.local import LocalStore

    pool, _ = asyncio.run(load_latest(LocalStore(Path(directory)), loaded_at=0))
    endpoints = Endpoints(Runtime(Settings(), pool=pool), b"{}")
    count = int(calls)
    ids = [pool.body(i)[17:30].decode() for i in range(0, len(pool), 7)]

    def per_call(handler: str, query: str) -> float:
        if handler == "set":  # a module's handler, where this checkout has one
            from sudokupool.api.sets import puzzle_set

            def call(scope: dict[str, Any], param: str | None) -> Any:
                return puzzle_set(endpoints, scope, param)
        else:
            call = getattr(endpoints, handler)
        params = [ids[i % len(ids)] for i in range(count)] if handler == "puzzle" else [None] * count
        scope = {"query_string": query.encode(), "headers": [(b"accept-encoding", b"gzip")]}
        return cpu_ns(lambda param: call(scope, param), params)

    serve(lambda line: {case: per_call(*how) for case, how in json.loads(line).items()})


def pack_load(directory: str) -> None:
    """The latest export of ``directory`` loaded as startup loads it (``load_export``, no cache directory), and
    its pack's checks alone on a fresh mapping of the file (``Pool.from_pack``): seconds of each per line read."""
    from sudokupool.loading.loader import load_export
    from sudokupool.pool.pack import map_file
    from sudokupool.pool.pool import Pool, PoolInfo
    from sudokupool.storage.local import LocalStore

    store = LocalStore(Path(directory))
    export = asyncio.run(store.list_exports(1)).latest
    assert export is not None and export.pack is not None

    def answer(_: str) -> dict[str, float]:
        started = time.perf_counter()
        pool, report = asyncio.run(load_export(store, export))
        found = {"load": time.perf_counter() - started}
        assert report.packed, report.summary()
        del pool
        info = PoolInfo("", export.key, export.size, 0)
        started = time.perf_counter()
        Pool.from_pack(map_file(Path(directory) / export.pack.key), info)
        found["map and check"] = time.perf_counter() - started
        return found

    serve(answer, export.key)


#: How many of a directory's newest exports ``many_exports`` lists: as the live sync does, as ``pool-exports`` does.
LIMITS = (16, 1000)


async def listing_lag(store: Any, seconds: float = 0.0) -> tuple[float, float]:
    """The most a 1 ms probe on the event loop wakes late while a sync's listing (the 16 newest, in a thread, as
    the live sync lists) runs three times, or for ``seconds`` without ``store``: time the loop could not have
    served a request. Returns it and how long the probe ran."""
    worst, began = 0.0, time.perf_counter()

    async def three() -> None:
        for _ in range(3):
            await store.list_exports(16)

    listing = asyncio.ensure_future(three() if store else asyncio.sleep(seconds))
    while not listing.done():
        asked = time.perf_counter()
        await asyncio.sleep(0.001)
        worst = max(worst, time.perf_counter() - asked - 0.001)
    await listing
    return worst, time.perf_counter() - began


def many_exports(directory: str) -> None:
    """Seconds of a local listing of ``directory``'s :data:`LIMITS` newest exports, and the loop's lag while a
    sync's listing runs ("loop lag max") and while nothing does for as long ("loop lag idle"), per line read."""
    from sudokupool.storage.local import LocalStore

    def answer(_: str) -> dict[str, float]:
        found: dict[str, float] = {}
        for limit in LIMITS:
            started = time.perf_counter()
            listing = asyncio.run(LocalStore(Path(directory)).list_exports(limit))
            found[f"limit {limit}"] = time.perf_counter() - started
            assert len(listing.objects) == limit
        found["loop lag max"], took = asyncio.run(listing_lag(LocalStore(Path(directory))))
        found["loop lag idle"] = asyncio.run(listing_lag(None, took))[0]
        return found

    serve(answer)


def memory(directory: str) -> None:
    """Load time and memory of the latest export of ``directory`` loaded as the service loads it (then the freed
    heap handed back, as its startup does), as the ready line: seconds, CPU seconds (this process and its ended
    children: steadier than seconds on a busy machine), RSS before (the imports), steady (after a collection)
    and peak (VmHWM), and the bytes the pool serves (identity record bodies and solution bodies)."""
    import gc
    import resource

    from sudokupool.loading.loader import load_latest
    from sudokupool.storage.local import LocalStore

    try:
        from sudokupool.serving.heap import release_free_memory
    except ImportError:  # a baseline with its heap settings at the top of the package
        from sudokupool.heap import release_free_memory  # type: ignore[no-redef]
    from support.servers import proc_status

    def cpu() -> float:
        own, ended = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime

    gc.collect()
    before = proc_status(os.getpid())["VmRSS"]
    started, cpu_started = time.perf_counter(), cpu()
    pool, report = asyncio.run(load_latest(LocalStore(Path(directory))))
    seconds, cpu_seconds = time.perf_counter() - started, cpu() - cpu_started
    gc.collect()
    release_free_memory()
    after = proc_status(os.getpid())
    served = sum(pool.body_length(i) + len(pool.solution_body(i)) for i in range(len(pool)))
    count, pool_rss = len(pool), after["VmRSS"] - before
    serve(str, {
        "puzzles": count, "skipped": report.skipped_total, "load_seconds": round(seconds, 2),
        "load_cpu_seconds": round(cpu_seconds, 2), "puzzles_per_second": round(count / seconds),
        "rss_before": before, "rss_steady": after["VmRSS"], "rss_peak": after["VmHWM"], "served_bytes": served,
        "pool_rss_over_served": round(pool_rss / served, 3), "peak_over_served": round(after["VmHWM"] / served, 3),
        "served_bytes_per_puzzle": round(served / count), "rss_bytes_per_puzzle": round(pool_rss / count),
    })  # fmt: skip


KINDS: dict[str, Callable[..., None]] = {
    "grader": grader,
    "app": app,
    "collector": collector,
    "pool-ops": pool_ops,
    "handlers": handlers,
    "pack-load": pack_load,
    "many-exports": many_exports,
    "memory": memory,
}

if __name__ == "__main__":
    KINDS[sys.argv[1]](*sys.argv[2:])
