"""Load one export from a store into a new :class:`~sudokupool.pool.Pool`: stream, validate, build.

Loading is one pass over the stream: chunks are decompressed, split into lines and parsed as they
arrive, so the whole file is never held in memory. The CPU work runs in a worker thread, one chunk at
a time, so a live reload leaves the event loop free to serve requests.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sudokupool.export import ExportError, LineError, LineReader, parse_record
from sudokupool.pool import Pool, PoolBuilder
from sudokupool.storage.base import ExportObject, ExportStore, StorageError

logger = logging.getLogger("sudokupool.loader")

Verify = Callable[[dict[str, Any]], None]

#: Bad lines logged one by one before the rest are only counted.
MAX_LOGGED_LINES = 50


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


class _Consumer:
    """The CPU side of loading: lines in, validated records added to the builder."""

    def __init__(
        self, key: str, builder: PoolBuilder, report: LoadReport, *, log_lines: bool, verify: Verify | None
    ) -> None:
        self.key = key
        self.verify = verify
        self.builder = builder
        self.report = report
        self.log_lines = log_lines

    def consume(self, lines: list[tuple[int, bytes]]) -> None:
        builder, report = self.builder, self.report
        for number, line in lines:
            try:
                record = parse_record(line)
                if record["canonical_id"] in builder:
                    raise LineError("duplicate-id", f"canonical_id {record['canonical_id']} appeared before")
                if self.verify is not None:
                    self.verify(record)
            except LineError as exc:
                self._skip(number, exc)
                continue
            builder.add(record)
            report.loaded += 1

    def _skip(self, number: int, exc: LineError) -> None:
        report = self.report
        report.skipped[exc.reason] += 1
        if len(report.problems) < MAX_LOGGED_LINES:
            report.problems.append((number, str(exc)))
            if self.log_lines:
                logger.warning("%s line %d skipped: %s", self.key, number, exc)


async def load_export(
    store: ExportStore,
    export: ExportObject,
    *,
    loaded_at: int | None = None,
    log_lines: bool = True,
    verify: Verify | None = None,
) -> tuple[Pool, LoadReport]:
    """Stream ``export`` from ``store``, validate every line and build a pool of the good ones.

    ``verify`` may check each parsed record further (``sudokupool check`` replays solve paths) and
    raise :class:`~sudokupool.export.LineError` to skip it.

    Raise :class:`LoadError` when the export is unreadable, truncated, or holds no valid puzzle.
    """
    started = time.perf_counter()
    builder = PoolBuilder(loaded_at=int(time.time()) if loaded_at is None else loaded_at)
    report = LoadReport(key=export.key)
    consumer = _Consumer(export.key, builder, report, log_lines=log_lines, verify=verify)
    reader = LineReader(gzipped=export.key.endswith(".gz"))
    # Local keys are file names under the store's path; S3 keys already include the store's prefix.
    where = store.description
    file_name = export.key.rsplit("/", 1)[-1]
    name = where if where.endswith(file_name) else f"{where.rstrip('/')}/{file_name}"

    def step(chunk: bytes) -> None:
        consumer.consume(reader.feed(chunk))

    try:
        async for chunk in store.open(export.key):
            await asyncio.to_thread(step, chunk)
        consumer.consume(reader.finish())
    except (StorageError, ExportError) as exc:
        raise LoadError(f"cannot load export {name}: {exc}") from None
    report.seconds = time.perf_counter() - started
    if report.loaded == 0:
        raise LoadError(f"cannot load export {name}: no valid puzzle in it ({report.summary()})")
    pool = builder.build(source=store.description, export_key=export.key, export_size=export.size)
    return pool, report


async def load_latest(store: ExportStore, *, loaded_at: int | None = None) -> tuple[Pool, LoadReport]:
    """Load the newest export in ``store``; :class:`LoadError` if there is none or it cannot be used."""
    try:
        listing = await store.list_exports(limit=1)
    except StorageError as exc:
        raise LoadError(f"cannot list exports in {store.description}: {exc}") from None
    if listing.latest is None:
        raise LoadError(f"no export (pool-YYYYMMDDTHHMMSSZ.ndjson[.gz]) found in {store.description}")
    return await load_export(store, listing.latest, loaded_at=loaded_at)
