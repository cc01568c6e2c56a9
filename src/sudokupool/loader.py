"""Load one export from a store into a new :class:`~sudokupool.pool.Pool`: stream, validate, build.

Loading is one pass over the stream: chunks are decompressed, split into lines and parsed as they
arrive, so the whole file is never held in memory. The CPU work runs off the event loop (worker
processes for large exports, so they use every core and leave the serving process's GIL alone), so a
live reload does not stall requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import multiprocessing
import os
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from sudokupool.export import ExportError, LineError, LineReader, Lines, parse_record
from sudokupool.pool import Part, Pool, PoolBuilder, prepare
from sudokupool.storage.base import ExportObject, ExportStore, StorageError

logger = logging.getLogger("sudokupool.loader")

Verify = Callable[[dict[str, Any]], None]
P = ParamSpec("P")
T = TypeVar("T")

#: Bad lines logged one by one before the rest are only counted.
MAX_LOGGED_LINES = 50
#: Exports at least this large (as stored) are parsed in worker processes.
WORKER_THRESHOLD = 16 * 1024 * 1024
#: How much nicer than the server a background load's threads and worker processes run by default
#: (Unix; the live sync passes ``SUDOKUPOOL_SYNC_NICENESS``).
BACKGROUND_NICENESS = 10


class LoadError(Exception):
    """The export cannot be used at all. The message names the export and the reason."""


@dataclass
class LoadReport:
    """What loading one export found: lines loaded, and lines skipped by reason."""

    key: str
    loaded: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[tuple[int, str]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    def summary(self) -> str:
        reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(self.skipped.items()))
        skipped = f"skipped {self.skipped_total} ({reasons})" if self.skipped else "skipped 0"
        return f"{self.key}: loaded {self.loaded} puzzles, {skipped}, in {self.seconds:.2f} s"


def prepare_lines(
    lines: Lines, loaded_at: int, verify: Verify | None = None
) -> tuple[Part, list[int], list[tuple[int, str, str]]]:
    """Parse, validate and serialize ``lines``: the prepared :class:`Part`, the line number of each of
    its records, and ``(line, reason, message)`` for each bad line. Runs in worker processes."""
    numbers: list[int] = []
    problems: list[tuple[int, str, str]] = []

    def records() -> Iterator[dict[str, Any]]:
        # One record at a time into prepare (see there why).
        for number, line in lines.numbered():
            try:
                record = parse_record(line)
                if verify is not None:
                    verify(record)
            except LineError as exc:
                problems.append((number, exc.reason, str(exc)))
                continue
            numbers.append(number)
            yield record

    return prepare(records(), loaded_at), numbers, problems


class _Collector:
    """The parent's side: prepared parts in export order into the builder, problems into the report."""

    def __init__(self, key: str, builder: PoolBuilder, report: LoadReport, *, log_lines: bool) -> None:
        self.key = key
        self.builder = builder
        self.report = report
        self.log_lines = log_lines

    def add(self, prepared: tuple[Part, list[int], list[tuple[int, str, str]]]) -> None:
        part, numbers, problems = prepared
        duplicates = self.builder.add_part(part)
        ids = part.id_list() if duplicates else []
        for position in duplicates:
            problems.append((numbers[position], "duplicate-id", f"duplicate-id: {ids[position]} appeared before"))
        problems.sort()
        report = self.report
        report.loaded += len(part) - len(duplicates)
        for number, reason, message in problems:
            report.skipped[reason] += 1
            if len(report.problems) < MAX_LOGGED_LINES:
                report.problems.append((number, message))
                if self.log_lines:
                    logger.warning("%s line %d skipped: %s", self.key, number, message)


def lower_priority(niceness: int) -> None:
    """Make the calling thread (Linux nice is per thread) or process ``niceness`` steps nicer."""
    if niceness and hasattr(os, "nice"):
        with contextlib.suppress(OSError):  # not allowed here: run at normal priority
            os.nice(niceness)


def _start_worker(niceness: int) -> None:
    """A worker process only parses and serializes acyclic records: refcounting frees all of it."""
    gc.disable()
    lower_priority(niceness)


_loads_running = 0
_gc_was_enabled = True


def _gc_paused(load: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Run the coroutine function ``load`` inside :func:`_no_cyclic_gc`."""

    @functools.wraps(load)
    async def paused(*args: P.args, **kwargs: P.kwargs) -> T:
        with _no_cyclic_gc():
            return await load(*args, **kwargs)

    return paused


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a load runs; overlapping loads resume it once, at the end.

    Parsed records are trees of dicts and lists, freed by refcounting as soon as they are serialized,
    yet every full collection during a load traverses them, holding the GIL: measured on the demo
    export, collections of 40 to 140 ms that found nothing stalled the event loop beside the load
    (worst loop lag 122 ms; 22 ms without them) and doubled the load time. Cyclic garbage that requests
    make meanwhile waits for the collection after the load.
    """
    global _loads_running, _gc_was_enabled
    if _loads_running == 0:
        _gc_was_enabled = gc.isenabled()
    _loads_running += 1
    gc.disable()
    try:
        yield
    finally:
        _loads_running -= 1
        if _loads_running == 0 and _gc_was_enabled:
            gc.enable()


def _worker_count(export: ExportObject, workers: int | None, *, background: bool) -> int:
    if workers is not None:
        return workers
    if export.size >= WORKER_THRESHOLD:
        return min(os.cpu_count() or 1, 4)
    # A small export parses fast in a thread, but beside a serving loop that thread holds the GIL the
    # loop needs: one worker process keeps the loop's p99 lag at 5 ms instead of 15 (demo export).
    return 1 if background else 0


@_gc_paused
async def load_export(
    store: ExportStore,
    export: ExportObject,
    *,
    loaded_at: int | None = None,
    log_lines: bool = True,
    verify: Verify | None = None,
    workers: int | None = None,
    background: bool = False,
    niceness: int | None = None,
) -> tuple[Pool, LoadReport]:
    """Stream ``export`` from ``store``, validate every line and build a pool of the good ones.

    Chunks are decompressed in a thread and cut at their last newline; their lines are parsed in
    ``workers`` processes (default: one per core for exports of at least 16 MiB, else a thread, or one
    process in the background), at most two chunks per worker ahead, so neither the file nor the
    parsed records are ever held whole (one chunk per worker left workers idle: 13.3 s against 11.8 s
    for the 1M bench export). ``verify`` may check each parsed record further (``sudokupool check``
    replays solve paths) and raise :class:`~sudokupool.export.LineError` to skip it; it needs a thread
    (``workers=0``).

    ``background`` (a live reload beside a serving event loop) runs the threads and worker processes
    ``niceness`` (default :data:`BACKGROUND_NICENESS`) steps nicer, so the CPU goes to requests first;
    the startup load runs at full priority, as nothing is served yet. The cyclic garbage collector is
    paused meanwhile (see :func:`_no_cyclic_gc`).

    Raise :class:`LoadError` when the export is unreadable, truncated, or holds no valid puzzle.
    """
    started = time.perf_counter()
    stamp = int(time.time()) if loaded_at is None else loaded_at
    builder = PoolBuilder(loaded_at=stamp)
    report = LoadReport(key=export.key)
    collector = _Collector(export.key, builder, report, log_lines=log_lines)
    reader = LineReader(gzipped=export.key.endswith(".gz"))
    # Local keys are file names under the store's path; S3 keys already include the store's prefix.
    where = store.description
    file_name = export.key.rsplit("/", 1)[-1]
    name = where if where.endswith(file_name) else f"{where.rstrip('/')}/{file_name}"
    count = 0 if verify is not None else _worker_count(export, workers, background=background)
    if not background:
        niceness = 0
    elif niceness is None:
        niceness = BACKGROUND_NICENESS
    # Own threads rather than the loop's default executor, so their priority can be lowered and
    # requests that use the default executor (image renders) never wait behind a load's chunks.
    threads = ThreadPoolExecutor(2, "sudokupool-load", initializer=lower_priority, initargs=(niceness,))
    executor = None
    if count:
        context = multiprocessing.get_context("spawn")
        executor = ProcessPoolExecutor(count, mp_context=context, initializer=_start_worker, initargs=(niceness,))
    loop = asyncio.get_running_loop()
    pending: deque[asyncio.Future[tuple[Part, list[int], list[tuple[int, str, str]]]]] = deque()

    def submit(lines: Lines) -> None:
        if not lines.data:
            return
        if executor is not None:
            pending.append(loop.run_in_executor(executor, prepare_lines, lines, stamp))
        else:
            pending.append(loop.run_in_executor(threads, prepare_lines, lines, stamp, verify))

    try:
        async for chunk in store.open(export.key):
            submit(await loop.run_in_executor(threads, reader.feed, chunk))
            while len(pending) > 2 * max(count, 1):
                collector.add(await pending.popleft())
        submit(reader.finish())
        while pending:
            collector.add(await pending.popleft())
    except (StorageError, ExportError) as exc:
        raise LoadError(f"cannot load export {name}: {exc}") from None
    except BrokenProcessPool:
        raise LoadError(f"cannot load export {name}: a worker process died (out of memory?)") from None
    finally:
        for future in pending:
            future.cancel()
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        threads.shutdown(wait=False, cancel_futures=True)
    report.seconds = time.perf_counter() - started
    if report.loaded == 0:
        raise LoadError(f"cannot load export {name}: no valid puzzle in it ({report.summary()})")
    pool = builder.build(source=store.description, export_key=export.key, export_size=export.size)
    return pool, report


async def load_latest(
    store: ExportStore, *, loaded_at: int | None = None, background: bool = False
) -> tuple[Pool, LoadReport]:
    """Load the newest export in ``store``; :class:`LoadError` if there is none or it cannot be used."""
    try:
        listing = await store.list_exports(limit=1)
    except StorageError as exc:
        raise LoadError(f"cannot list exports in {store.description}: {exc}") from None
    if listing.latest is None:
        raise LoadError(f"no export (pool-YYYYMMDDTHHMMSSZ.ndjson[.gz]) found in {store.description}")
    return await load_export(store, listing.latest, loaded_at=loaded_at, background=background)
