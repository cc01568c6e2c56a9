"""Load one export from a store into a new :class:`~sudokupool.pool.pool.Pool`: its pack, or parse it.

An export with a valid pack beside it (``sudokupool.pool.pack``) is loaded by mapping the pack (a copy
of the service's own, kept in the cache directory when there is one): a header check, a checksum and a
check of its structure (``sudokupool.pool.validate``). A pack that is damaged or made from another export is
refused with one log line, and the export is parsed instead: one pass over the export file (a local one
in place, any other downloaded first) in one thread off the event loop, into a pack written to a
temporary file (or to the cache directory, for the next boot) and mapped as above.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import stat
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, TypeVar

from sudokupool.config import BadLineLimit, Settings
from sudokupool.loading import cache
from sudokupool.logs import counted
from sudokupool.pool import checked
from sudokupool.pool.checked import Copy
from sudokupool.pool.export import MIN_RECORD_BYTES, ExportError, LineError, Record, numbered_lines, parse_record
from sudokupool.pool.pack import PACE, PackError, map_file
from sudokupool.pool.pool import Pool, PoolBuilder, PoolInfo
from sudokupool.storage.base import ExportObject, ExportStore, StorageError
from sudokupool.storage.naming import export_timestamp, is_export_name, pack_key

logger = logging.getLogger("sudokupool.loader")

Verify = Callable[[Record], None]
T = TypeVar("T")

#: CPU seconds of the threads of the load in progress in this task (:func:`load_export`), from :func:`_in_thread`.
_LOAD_CPU: ContextVar[list[float] | None] = ContextVar("sudokupool_load_cpu", default=None)

#: How far ahead of this machine's clock an export's name may be dated (clocks of machines differ a little).
MAX_AHEAD = timedelta(hours=1)
#: Bad lines logged (and kept in the report) one by one; the rest are only counted.
MAX_LOGGED_LINES = 20


class LoadError(Exception):
    """The export cannot be used at all. The message (one line) names the export and the reason, and
    the first bad line when lines are to blame; ``report`` is what loading found until then, if anything.
    ``unreachable``: storage failed while the export was read (a cut connection, not a truncated file)."""

    def __init__(self, message: str, report: LoadReport | None = None, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.report = report
        self.unreachable = unreachable


@dataclass(frozen=True)
class LoadLimits:
    """The bounds an export must keep (``SUDOKUPOOL_MAX_RECORD_BYTES``, ``SUDOKUPOOL_MAX_EXPORT_BYTES``,
    ``SUDOKUPOOL_MAX_BAD_LINES``), and how a background load (a live sync's) goes easy on the requests
    beside it: its download's rate (``SUDOKUPOOL_SYNC_DOWNLOAD_RATE``, MiB per second) and how many steps
    nicer its thread runs (``SUDOKUPOOL_SYNC_NICENESS``, Unix). The defaults are the settings' defaults."""

    max_record_bytes: int = Settings.max_record_bytes
    max_export_bytes: int = Settings.max_export_bytes
    max_bad_lines: BadLineLimit = Settings.max_bad_lines
    sync_download_rate: int = Settings.sync_download_rate
    sync_niceness: int = Settings.sync_niceness

    @classmethod
    def from_settings(cls, settings: Settings) -> LoadLimits:
        return cls(**{limit.name: getattr(settings, limit.name) for limit in fields(cls)})

    def pace(self, background: bool) -> tuple[int, int]:
        """A load's download rate (bytes a second; 0: at full speed) and how many steps nicer its thread
        runs: a background load's from the settings, else neither."""
        return (self.sync_download_rate << 20, self.sync_niceness) if background else (0, 0)

    def give_up(self, export: ExportObject) -> int:
        """The bad lines past which ``export`` is refused whatever else it holds (see
        :meth:`BadLineLimit.certain`): it can hold at most one good line per :data:`MIN_RECORD_BYTES` of
        its inflated size. Loading stops there, so a flood of bad lines costs little to refuse; but not
        before :data:`MAX_LOGGED_LINES` of them, which the report (and ``sudokupool check``) lists."""
        size = self.max_export_bytes if export.key.endswith(".gz") else min(export.size, self.max_export_bytes)
        return max(self.max_bad_lines.certain(size // MIN_RECORD_BYTES), MAX_LOGGED_LINES)


@dataclass
class LoadReport:
    """What loading one export found: lines read and loaded, lines skipped by reason, the first few
    bad lines (``(number, message)``, at most :data:`MAX_LOGGED_LINES`)."""

    key: str
    loaded: int = 0
    lines: int = 0
    last_line: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[tuple[int, str]] = field(default_factory=list)
    seconds: float = 0.0
    #: CPU seconds of the load's threads (the parse, the pack's checks): well under ``seconds``, the load waited
    #: for a core (or for storage).
    cpu_seconds: float = 0.0
    #: Loaded from the export's pack rather than parsed.
    packed: bool = False

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    def fields(self) -> dict[str, Any]:
        """The figures of :meth:`summary`, as the fields of its log line (``SUDOKUPOOL_LOG_FORMAT=json``)."""
        return {
            "export": self.key,
            "count": self.loaded,
            "skipped": self.skipped_total,
            "duration": round(self.seconds, 3),
            "cpu": round(self.cpu_seconds, 3),
            "packed": self.packed,
        }

    def summary(self) -> str:
        reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(self.skipped.items()))
        skipped = f"skipped {self.skipped_total} ({reasons})" if self.skipped else "skipped 0"
        took = f"{self.seconds:.2f} s" + (f" ({self.cpu_seconds:.2f} s of CPU)" if self.cpu_seconds else "")
        if self.packed:
            return f"{self.key}: loaded {counted(self.loaded, 'puzzle')} from its pack in {took}"
        return f"{self.key}: loaded {counted(self.loaded, 'puzzle')}, {skipped}, in {took}"

    def first_bad_line(self) -> str:
        """``line N: reason: detail`` for the first bad line, or an empty string."""
        return "line {}: {}".format(*self.problems[0]) if self.problems else ""


def _describe(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "out of memory (MemoryError)"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class _Parse:
    """One export's parse, all of it in one thread: lines in, prepared records into a pack, bad lines into
    the report, and the bound on bad lines (refusing at the first bad line past which no rest of the
    export could keep it)."""

    def __init__(self, store: ExportStore, export: ExportObject, limits: LoadLimits, verify: Verify | None) -> None:
        self.store, self.export, self.limits, self.verify = store, export, limits, verify
        self.name = _export_name(store, export.key)
        self.give_up = limits.give_up(export)
        self.report = LoadReport(key=export.key)
        self.started = time.perf_counter()
        #: Set when the load is given up (cancelled): the thread stops at the next line.
        self.stopped = threading.Event()

    def bad(self, number: int, reason: str, message: str) -> None:
        report = self.report
        report.skipped[reason] += 1
        if len(report.problems) < MAX_LOGGED_LINES:
            report.problems.append((number, message))
        if report.skipped_total > self.give_up:
            raise self.refusal()

    def run(self, raw: IO[bytes], builder: PoolBuilder) -> Pool:
        """Parse every line of the export file ``raw`` into ``builder``, refuse the export if it broke the
        bound on bad lines or holds no valid puzzle, and build its pool."""
        report, limits, most = self.report, self.limits, self.limits.max_record_bytes
        gzipped = self.export.key.endswith(".gz")
        for number, line in numbered_lines(raw, gzipped=gzipped, max_line=most, max_bytes=limits.max_export_bytes):
            if self.stopped.is_set():
                raise ExportError("stopped")
            report.lines += 1
            report.last_line = number
            if line is None:
                self.bad(number, "too-long", f"too-long: more than the {most} bytes a record may take")
                continue
            try:
                record = parse_record(line)
                if self.verify is not None:
                    self.verify(record)
                added = builder.add(record)
            except LineError as exc:
                self.bad(number, exc.reason, str(exc))
                continue
            except Exception as exc:  # a record that cannot be served, memory running out...
                raise ExportError(f"line {number}: {_describe(exc)}") from None
            if added:
                report.loaded += 1
            else:
                self.bad(number, "duplicate-id", f"duplicate-id: {record.canonical_id} appeared before")
        report.seconds = time.perf_counter() - self.started
        if report.loaded == 0:
            first = f"; the first bad line is {report.first_bad_line()}" if report.problems else ""
            raise LoadError(
                f"cannot load export {self.name}: no valid puzzle in it ({report.summary()}){first}", report
            )
        if not limits.max_bad_lines.allows(report.skipped_total, report.lines):
            raise self.refusal()
        return builder.build(source=self.store.description, export_key=self.export.key, export_size=self.export.size)

    def refusal(self) -> LoadError:
        report = self.report
        bad = f"{counted(report.skipped_total, 'bad line')} of {report.lines} read"
        bound = f"more than SUDOKUPOOL_MAX_BAD_LINES={self.limits.max_bad_lines} allows"
        return LoadError(
            f"cannot load export {self.name}: {bad}, {bound}; the first is {report.first_bad_line()}", report
        )


def export_time(export: ExportObject) -> int:
    """The export's time (seconds, UTC), which every instance serves as ``synced_at``: the time in its
    name, or for a single file of another name its upload (modification) time. Both are the same on every
    instance that loads the export, so the same export gives the same bodies and ETags everywhere."""
    moment = export_timestamp(export.key) if is_export_name(export.key) else export.uploaded
    return int(moment.timestamp())


def lower_priority(niceness: int) -> None:
    """Make the calling thread (Linux nice is per thread) or process ``niceness`` steps nicer."""
    if niceness:
        with contextlib.suppress(OSError):  # not allowed here: run at normal priority
            os.nice(niceness)


async def load_export(
    store: ExportStore,
    export: ExportObject,
    *,
    loaded_at: int | None = None,
    background: bool = False,
    cache_dir: str | Path | None = None,
    limits: LoadLimits | None = None,
    packs: bool = True,
) -> tuple[Pool, LoadReport]:
    """Load ``export`` from ``store``: map its pack when it has a valid one (and ``packs``), else parse it.

    The pack is looked for in ``cache_dir`` (when set) and beside the export; a pack from remote storage
    is downloaded to ``cache_dir`` (or to a temporary file). Without a usable pack the export is parsed
    (:func:`parse_export`), and with ``cache_dir`` the pack that makes is kept there for the next load.
    Raise :class:`LoadError` when the export is unreadable, truncated, or holds no valid puzzle.
    """
    stamp = int(time.time()) if loaded_at is None else loaded_at
    limits = limits or LoadLimits()
    if is_export_name(export.key) and (dated := export_timestamp(export.key)) > datetime.now(UTC) + MAX_AHEAD:
        # Served, it would stay the newest export until removed: no export made after it could replace it.
        raise LoadError(
            f"cannot load export {_export_name(store, export.key)}: its name is dated {dated:%Y-%m-%dT%H:%M:%SZ}, "
            "more than an hour ahead of this machine's clock"
        )
    keep, private = cache.KEEP, False
    if cache_dir:
        cache_dir = await asyncio.to_thread(cache.own_directory, Path(cache_dir))
    path_of: Callable[[str], Path] | None = getattr(store, "path_of", None)
    if not cache_dir and export.pack is not None and path_of is not None:
        # A local pack is mapped from a copy; without a cache directory, one per machine and source, which
        # holds that copy only (a parse's pack goes to a temporary file, as without a cache directory).
        cache_dir, keep, private = await asyncio.to_thread(cache.private_dir, path_of(export.pack.key).parent), 1, True
    # A single file of another name than an export's: no pack is looked for or kept.
    cached = Path(cache_dir) / Path(pack_key(export.key)).name if cache_dir and is_export_name(export.key) else None
    started = time.perf_counter()
    spent: list[float] = []
    counting = _LOAD_CPU.set(spent)
    try:
        pool, report = await _load(store, export, stamp, cached, keep, private, background, limits, packs)
    finally:
        _LOAD_CPU.reset(counting)
    if report is None:
        report = LoadReport(key=export.key, loaded=len(pool), packed=True, seconds=time.perf_counter() - started)
    report.cpu_seconds = sum(spent)
    if cached is not None:
        # Never the pack just loaded; a partial file only once nobody holds its lock.
        await asyncio.to_thread(cache.prune, cached.parent, cached.name, keep)
    return pool, report


async def _load(
    store: ExportStore,
    export: ExportObject,
    stamp: int,
    cached: Path | None,
    keep: int,
    private: bool,
    background: bool,
    limits: LoadLimits,
    packs: bool,
) -> tuple[Pool, LoadReport | None]:
    """:func:`load_export`'s pool, from a pack (no report) or parsed (with its report)."""
    pool, tried = None, False
    if packs and cached is not None:
        pool, tried = await _load_copy(store, export, stamp, cached, background=background, limits=limits)
    report = None
    if pool is None:
        # Under the lock, so that the workers of one machine parse an export once: the others map its pack.
        async with cache.lock(cached):
            if not packs and cached is not None:
                await asyncio.to_thread(cached.unlink, missing_ok=True)
            elif packs and not tried:
                pool = await _load_pack(store, export, stamp, cached, background=background, limits=limits)
            if pool is None:
                pool, report = await parse_export(
                    store,
                    export,
                    loaded_at=stamp,
                    background=background,
                    limits=limits,
                    keep=None if private else cached,
                )
    return pool, report


def _export_name(store: ExportStore, key: str) -> str:
    # Local keys are file names under the store's path; S3 keys already include the store's prefix.
    where = store.description
    file_name = key.rsplit("/", 1)[-1]
    return where if where.endswith(file_name) else f"{where.rstrip('/')}/{file_name}"


async def _load_pack(
    store: ExportStore, export: ExportObject, stamp: int, cached: Path | None, *, background: bool, limits: LoadLimits
) -> Pool | None:
    """The pool of ``export``'s pack: the copy ``cached`` (in the cache directory), else the store's
    (downloaded into ``cached`` when remote). None when there is none, or it is refused (one log line)."""
    rate, nice = limits.pace(background)
    if cached is not None and await asyncio.to_thread(cached.is_file):
        pool = await _map_copy(store, export, stamp, cached, str(cached), "trying the next source", limits, background)
        if pool is not None:
            return pool
    if export.pack is None:
        return None
    where = _export_name(store, export.pack.key)
    try:
        async with _copied(store, export.pack, cached, rate) as file:
            return await _in_thread(nice, _opener(store, export, stamp, background, limits), map_file(file.fileno()))
    except PackError as exc:
        logger.warning("refused pack %s: %s; loading the export instead", where, exc)
    except (StorageError, OSError) as exc:
        logger.warning("cannot read pack %s: %s; loading the export instead", where, exc)
    return None


async def _load_copy(
    store: ExportStore, export: ExportObject, stamp: int, cached: Path, *, background: bool, limits: LoadLimits
) -> tuple[Pool | None, bool]:
    """The pool of the pack ``cached``, copied (or downloaded) there first when missing. Only the copy
    is made under the cache directory's lock: the workers of one machine then check their mappings of the
    one file side by side (each check is ~0.8 s of CPU for 1M records), not one after another. Return the
    pool (None when there is none or it is refused, logged) and whether the export's own pack was tried
    (copied here and refused, or unreadable): :func:`load_export` then parses the export at once."""
    where = None
    if not await asyncio.to_thread(cached.is_file):
        if export.pack is None:  # a parse's pack, made under the lock (load_export)
            return None, False
        async with cache.lock(cached):
            if not await asyncio.to_thread(cached.is_file):  # else another worker made it meanwhile
                where = _export_name(store, export.pack.key)
                try:
                    async with _copied(store, export.pack, cached, limits.pace(background)[0]):
                        pass
                except (StorageError, OSError) as exc:
                    logger.warning("cannot read pack %s: %s; loading the export instead", where, exc)
                    return None, True
    # A copy just made is the export's own pack: refused, the export is next; a copy found may be stale.
    then = "trying the next source" if where is None else "loading the export instead"
    pool = await _map_copy(store, export, stamp, cached, where or str(cached), then, limits, background)
    return pool, where is not None


async def _map_copy(
    store: ExportStore,
    export: ExportObject,
    stamp: int,
    cached: Path,
    name: str,
    then: str,
    limits: LoadLimits,
    background: bool,
) -> Pool | None:
    """The pool of the pack copy ``cached`` (of the pack ``name``); None when it is gone, or refused: logged
    (saying what is ``then`` done), and the copy removed unless another worker has already replaced it. Only
    a regular file of this user's that no other user may write is mapped, never through a symbolic link."""
    try:
        # The status of the file mapped, whatever is renamed to ``cached`` meanwhile: its checks' record is that file's.
        fd, copied = await asyncio.to_thread(cache.open_own, cached)
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("refused pack copy %s: %s; %s", cached, exc.strerror or exc, then)
        await asyncio.to_thread(_remove_link_or_copy, cached)
        return None
    try:
        copy = Copy(cached, copied, limits.max_record_bytes)
        opener = _opener(store, export, stamp, background, limits, copy)
        try:
            return await _in_thread(limits.pace(background)[1], opener, map_file(fd))
        except PackError as exc:
            logger.warning("refused pack %s: %s; %s", name, exc, then)
            await asyncio.to_thread(_remove_copy, cached, copied)
            return None
    finally:
        os.close(fd)


def _remove_link_or_copy(path: Path) -> None:
    """Remove what is at ``path`` in the cache directory (this user's own: only this user can have put it
    there) while it is a symbolic link or a file not fit to map, so that a fresh copy takes its place."""
    with contextlib.suppress(OSError):
        now = os.lstat(path)
        if stat.S_ISLNK(now.st_mode) or checked.not_own(now, "file") is not None:
            path.unlink()


def _remove_copy(path: Path, copied: os.stat_result) -> None:
    """Remove the refused copy ``path`` unless it is no longer the file ``copied`` (another worker's)."""
    with contextlib.suppress(OSError):
        now = os.stat(path)
        if (now.st_dev, now.st_ino) == (copied.st_dev, copied.st_ino):
            path.unlink()


def _opener(
    store: ExportStore,
    export: ExportObject,
    stamp: int,
    background: bool,
    limits: LoadLimits,
    copy: Copy | None = None,
) -> Callable[[Any], Pool]:
    info = PoolInfo(store.description, export.key, export.size, stamp, exported=export_time(export))
    max_record_bytes = limits.max_record_bytes
    return functools.partial(
        Pool.from_pack, info=info, max_record_bytes=max_record_bytes, background=background, copy=copy
    )


@contextlib.asynccontextmanager
async def _opened(store: ExportStore, item: ExportObject, keep: Path | None, rate: int) -> AsyncIterator[IO[bytes]]:
    """``item`` (an export or a pack) as a file to read: a local store's own file, else a copy downloaded
    at ``rate`` bytes a second (0: at full speed) into ``keep``, kept there when the block ends without an
    error, or into a temporary file (:func:`~sudokupool.loading.cache.new_file`)."""
    path_of: Callable[[str], Path] | None = getattr(store, "path_of", None)
    if path_of is None:
        with cache.new_file(keep) as copy:
            await cache.download(store, item.key, item.size, copy.fileno(), rate=rate)
            yield copy
        return
    path = path_of(item.key)
    try:
        local = await asyncio.to_thread(open, path, "rb")
    except OSError as exc:
        raise StorageError(f"{path}: {exc.strerror or exc}") from None
    with local:
        yield local


@contextlib.asynccontextmanager
async def _copied(store: ExportStore, item: ExportObject, keep: Path | None, rate: int) -> AsyncIterator[IO[bytes]]:
    """The pack ``item`` as a file of the service's own, to map: downloaded as :func:`_opened` downloads,
    or a local store's file copied (:func:`~sudokupool.loading.cache.copy`) into ``keep`` or a temporary
    file, so that whoever writes the store's file in place never changes what is mapped."""
    path_of: Callable[[str], Path] | None = getattr(store, "path_of", None)
    if path_of is None:
        async with _opened(store, item, keep, rate) as file:
            yield file
        return
    async with _opened(store, item, None, rate) as source:
        with cache.new_file(keep) as file:
            await asyncio.to_thread(cache.copy, source.fileno(), file.fileno())
            yield file


async def _in_thread(niceness: int, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` in a thread of the load's own, ``niceness`` steps nicer (a live reload: on busy
    cores the CPU goes to requests first); not the loop's default executor, where image renders would
    wait behind it."""
    thread = ThreadPoolExecutor(1, "sudokupool-load", initializer=lower_priority, initargs=(niceness,))
    try:
        return await asyncio.get_running_loop().run_in_executor(thread, _timed, _LOAD_CPU.get(), function, *args)
    finally:
        thread.shutdown(wait=False)


def _timed(spent: list[float] | None, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, its thread's CPU seconds added to ``spent`` (when given) however it ends."""
    started = time.thread_time()
    try:
        return function(*args)
    finally:
        if spent is not None:
            spent.append(time.thread_time() - started)


async def verify_bodies(pool: Pool, limits: LoadLimits, stopped: threading.Event) -> int | None:
    """Inflate and check every body of ``pool`` (:meth:`Pool.verify`) in a thread of its own, as a
    background load runs (nicer, and sleeping seven times as long as it works); the index of the first
    that is not its record, or None. Loading a pack checks its structure, not its bodies: a body that
    inflates to other JSON than its record's start would cost every record an inflate, ~16 s for 1M."""
    _, nice = limits.pace(True)
    verify = functools.partial(pool.verify, pace=PACE, stopped=stopped)
    try:
        return await _in_thread(nice, verify)
    finally:
        stopped.set()


async def parse_export(
    store: ExportStore,
    export: ExportObject,
    *,
    loaded_at: int | None = None,
    log_lines: bool = True,
    verify: Verify | None = None,
    background: bool = False,
    limits: LoadLimits | None = None,
    keep: Path | None = None,
) -> tuple[Pool, LoadReport]:
    """Read ``export`` from ``store``, validate every line and build a pool of the good ones.

    The records become a pack in a temporary file, or in the file ``keep``. ``verify`` may check each
    record further (``sudokupool check``) and raise :class:`~sudokupool.pool.export.LineError` to skip
    it. Whatever fails, the answer is one :class:`LoadError` whose one-line message names the export and
    the reason (the first bad line, when lines are to blame): unreadable, truncated, past a bound of
    ``limits``, no valid puzzle, a record that cannot be served, memory running out... Memory beyond the
    pool stays bounded by the longest record allowed.
    """
    limits = limits or LoadLimits()
    rate, nice = limits.pace(background)
    parse = _Parse(store, export, limits, verify)
    name, report = parse.name, parse.report
    spent = _LOAD_CPU.get()
    counting = None
    if spent is None:  # a parse on its own (`sudokupool check`)
        spent = []
        counting = _LOAD_CPU.set(spent)
    try:
        with cache.new_file(keep) as file:
            stamp = int(time.time()) if loaded_at is None else loaded_at
            builder = PoolBuilder(loaded_at=stamp, exported=export_time(export), file=file)
            if getattr(store, "path_of", None) is None and export.size > (most := limits.max_export_bytes):
                raise ExportError(f"it is {export.size} bytes, more than {most} (SUDOKUPOOL_MAX_EXPORT_BYTES)")
            async with _opened(store, export, None, rate) as raw:
                try:
                    pool = await _in_thread(nice, parse.run, raw, builder)
                finally:
                    parse.stopped.set()  # a load given up: its thread stops before its files close
    except LoadError:
        raise
    except (StorageError, ExportError) as exc:
        unreachable = isinstance(exc, StorageError)
        raise LoadError(f"cannot load export {name}: {exc}", report, unreachable=unreachable) from None
    except Exception as exc:
        # Anything else is refused the same way: one line, and the pool in service (if any) stays.
        logger.debug("loading %s failed", name, exc_info=True)
        raise LoadError(f"cannot load export {name}: {_describe(exc)} after line {report.last_line}", report) from None
    finally:
        report.seconds = time.perf_counter() - parse.started  # its pack's build included, as in its CPU
        report.cpu_seconds = sum(spent)
        if counting is not None:
            _LOAD_CPU.reset(counting)
    if log_lines:
        for number, message in report.problems:
            logger.warning("%s line %d skipped: %s", report.key, number, message)
        if unlogged := report.skipped_total - len(report.problems):
            more = "%s: %d more bad lines skipped (only the first %d are logged)"
            logger.warning(more, report.key, unlogged, MAX_LOGGED_LINES)
    return pool, report


async def load_latest(
    store: ExportStore, *, loaded_at: int | None = None, background: bool = False, limits: LoadLimits | None = None
) -> tuple[Pool, LoadReport]:
    """Load the newest export in ``store`` (``background``: as a live sync does, see :func:`load_export`);
    :class:`LoadError` if there is none or it cannot be used."""
    try:
        listing = await store.list_exports(limit=1)
    except StorageError as exc:
        raise LoadError(f"cannot list exports in {store.description}: {exc}") from None
    if listing.latest is None:
        raise LoadError(f"no export (pool-YYYYMMDDTHHMMSSZ.ndjson[.gz]) found in {store.description}")
    return await load_export(store, listing.latest, loaded_at=loaded_at, background=background, limits=limits)
