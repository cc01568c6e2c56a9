"""The metrics a scrape shows (docs/operations.md lists them), kept in prometheus-client's objects.

The request path only counts into plain numbers (:class:`~sudokupool.api.tally.RequestTally`, the
limiter's decisions, the image cache's tally, the sync status); :meth:`Exporter.flush` adds what they
counted since the last flush to the client's counters and sets the gauges from the app's state. A scrape
flushes first, so its figures are exact for the process that answers it.

With several workers (``PROMETHEUS_MULTIPROC_DIR`` set by :mod:`sudokupool.serving.launcher`), the client keeps its
values in that directory, one file per worker, and a scrape, answered by any worker, merges them all:
counters and histograms are summed; each gauge says how it is merged (``multiprocess_mode``). Every
worker also flushes once a second, so the others' figures in a scrape are at most a second old.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import math
import os
import platform
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics
from prometheus_client.exposition import choose_encoder, generate_latest
from prometheus_client.gc_collector import GCCollector
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from sudokupool import __version__
from sudokupool.api.limiter import RateLimiter
from sudokupool.api.tally import BUCKETS, RequestTally, code_label
from sudokupool.loading.cache import Received
from sudokupool.metrics import text
from sudokupool.metrics.loop import BUCKETS as LAG_BUCKETS
from sudokupool.metrics.loop import LoopLag
from sudokupool.serving.tasks import cancel
from sudokupool.state import Runtime
from sudokupool.storage.naming import export_order
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.work.pool import JOB_BUCKETS

#: Seconds between the flushes of each worker when several share the metrics.
FLUSH_SECONDS = 1.0

REQUEST_LABELS = ("surface", "route", "method", "status", "code")

#: Seconds between two reads of the proportional memory (``/proc/self/smaps_rollup``: 0.2-1 ms a read).
PSS_SECONDS = 10.0


@dataclass
class Sources:
    """Where the figures come from: the app's state, and the counters its parts keep."""

    runtime: Runtime
    tally: RequestTally
    limiter: RateLimiter
    storage_down: Callable[[], bool]
    #: Each Redis server (cluster node) called so far, by ``host:port``, and whether it is failing now.
    redis_nodes: Callable[[], dict[str, bool]]
    redis_fallbacks: Callable[[], int]


class Exporter:
    """The metrics of one process (``multiprocess_dir``: one worker of several)."""

    def __init__(self, sources: Sources, *, multiprocess_dir: str | None = None, lag: LoopLag | None = None) -> None:
        self.sources = sources
        self.multiprocess_dir = multiprocess_dir
        self.lag = lag if lag is not None else LoopLag()
        # A counter's `_created` series doubles the output and tells an operator nothing here.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        # The objects below write to files in multiprocess mode (chosen by prometheus-client at its import,
        # from PROMETHEUS_MULTIPROC_DIR); in one process they are read through this registry.
        own = None if multiprocess_dir else CollectorRegistry()
        self._seen: dict[str, float] = {}

        def counter(name: str, doc: str, labels: tuple[str, ...] = ()) -> Counter:
            return Counter(name, doc, labels, registry=own)

        def gauge(name: str, doc: str, mode: str, labels: tuple[str, ...] = ()) -> Gauge:
            return Gauge(name, doc, labels, registry=own, multiprocess_mode=mode)  # type: ignore[arg-type]

        self.requests = counter("sudokupool_http_requests", "Requests answered, by route template.", REQUEST_LABELS)
        self.duration = Histogram(
            "sudokupool_http_request_duration_seconds",
            "Time in the app from routing a request to its last byte handed to the server.",
            REQUEST_LABELS,
            buckets=BUCKETS,
            registry=own,
        )
        self.in_flight = gauge(
            "sudokupool_http_requests_in_flight",
            "Requests in the app now (routed, last byte not handed over).",
            "livesum",
        )
        self.loop_lag = Histogram(
            "sudokupool_event_loop_lag_seconds",
            "How late a timer on the event loop fired, sampled every 0.25 s.",
            buckets=LAG_BUCKETS,
            registry=own,
        )
        self.build = gauge(
            "sudokupool_build_info", "The version, server and Python serving (always 1).", "livemax",
            ("version", "server", "python"),
        )  # fmt: skip
        # The server `sudokupool serve` runs (SUDOKUPOOL_SERVER), from the setting rather than the modules
        # loaded: one process may have imported both servers' modules.
        self.build.labels(__version__, sources.runtime.settings.server, platform.python_version()).set(1)
        self.puzzles = gauge("sudokupool_pool_puzzles", "Puzzles in the served pool.", "livemax", ("difficulty",))
        self.export_time = gauge(
            "sudokupool_export_timestamp_seconds", "When the served export was made (its name).", "livemin"
        )
        self.export_age = gauge("sudokupool_export_age_seconds", "Age of the served export.", "livemax")
        self.loaded_time = gauge("sudokupool_pool_loaded_timestamp_seconds", "When the pool was loaded.", "livemin")
        self.sync = {
            "attempts": counter("sudokupool_sync_attempts", "Looks for a newer export (the startup load is one)."),
            "successes": counter("sudokupool_sync_successes", "Looks that reached storage and refused nothing."),
            "failures": counter("sudokupool_sync_failures", "Looks that failed: storage unreachable or refused."),
            "refusals": counter("sudokupool_sync_refusals", "Exports refused for what they contain."),
        }
        self.sync_success = gauge(
            "sudokupool_sync_last_success_timestamp_seconds",
            "When a look for a newer export last succeeded.",
            "livemin",
        )
        self.load_seconds = gauge(
            "sudokupool_sync_last_load_seconds",
            "Seconds the last load of an export took (download included).",
            "livemax",
        )
        self.swap_seconds = gauge(
            "sudokupool_sync_last_swap_seconds", "Seconds from a new pool served to the old one let go.", "livemax"
        )
        self.downloaded = counter("sudokupool_storage_downloaded_bytes", "Bytes received from storage by downloads.")
        self.decisions = counter(
            "sudokupool_limiter_decisions", "Rate-limiter decisions on /api/v2, by tier.", ("tier", "outcome")
        )
        for outcome, by_tier in sources.limiter.decisions.items():
            for tier in by_tier:
                self.decisions.labels(tier, outcome)
        self.fallbacks = counter(
            "sudokupool_limiter_redis_fallbacks", "Requests limited in process memory because Redis failed."
        )
        self.images = {
            "hits": counter("sudokupool_image_cache_hits", "Image requests answered from the render cache."),
            "misses": counter("sudokupool_image_cache_misses", "Image requests that had to wait for a render."),
            "renders": counter(
                "sudokupool_image_renders", "Renders started (every format and size), each a job of the work pool."
            ),
        }
        self.image_bytes = gauge(
            "sudokupool_image_cache_bytes", "Bytes of rendered images (every format and size) in the cache.", "livesum"
        )
        self.answers = {
            "hits": counter(
                "sudokupool_grid_cache_hits", "Grid answers and hints served from the engine's result cache."
            ),
            "misses": counter(
                "sudokupool_grid_cache_misses", "Grid answers and hints that had to wait for a lookup or a job."
            ),
            "renders": counter(
                "sudokupool_grid_answers",
                "Grid answers and hints computed (lookups moved in the loop, grades and hints in the work pool).",
            ),
        }
        self.answer_bytes = gauge(
            "sudokupool_grid_cache_bytes", "Bytes of grid answers and hints in the engine's result cache.", "livesum"
        )
        self.work_jobs = counter(
            "sudokupool_work_jobs",
            "Jobs submitted to the work pool, by kind and how they ended (rejected: queue full; dropped: the client "
            "left before the job started; over_budget: stopped past its time budget).",
            ("kind", "outcome"),
        )
        self.work_seconds = Histogram(
            "sudokupool_work_job_duration_seconds",
            "Time a job ran in a work process (its answer included), by kind.",
            ("kind",),
            buckets=JOB_BUCKETS,
            registry=own,
        )
        self.work_waiting = gauge("sudokupool_work_queue_depth", "Jobs waiting for a work process now.", "livesum")
        self.work_running = gauge("sudokupool_work_jobs_running", "Jobs running in a work process now.", "livesum")
        self.work_processes = gauge("sudokupool_work_processes", "Work processes alive now.", "livesum")
        self.work_resident = gauge(
            "sudokupool_work_resident_bytes",
            "Resident bytes of the work processes, each as it reported after its last job.",
            "livesum",
        )
        self.work_started = counter("sudokupool_work_processes_started", "Work processes started (replacements too).")
        self.storage_down = gauge("sudokupool_storage_down", "1 while export storage is unreachable.", "livemax")
        self.redis_down = gauge(
            "sudokupool_redis_down", "1 while the Redis server (cluster node) is unreachable.", "livemax", ("node",)
        )
        self.pss = gauge(
            "sudokupool_process_proportional_memory_bytes",
            "Proportional set size: resident memory, pages shared with n processes counted 1/n.",
            "livesum",
        )
        self._pss_at = -math.inf
        # Downloads are counted per process: this app's start from what the process received so far.
        self._seen["downloaded"] = Received.bytes
        self._finished = 0
        self._lag_task: asyncio.Task[None] | None = None
        if own is not None:
            ProcessCollector(registry=own)
            PlatformCollector(registry=own)
            GCCollector(registry=own)
            self.registry = own
            self.process: ProcessFigures | None = None
        else:
            self.registry = CollectorRegistry()
            MultiProcessCollector(self.registry, path=multiprocess_dir)  # type: ignore[no-untyped-call]
            PlatformCollector(registry=self.registry)
            self.process = ProcessFigures()
        self._task: asyncio.Task[None] | None = None

    def _delta(self, name: str, total: float) -> float:
        """How much the counter ``name`` (a running total kept elsewhere) grew since the last flush."""
        last = self._seen.get(name, 0.0)
        self._seen[name] = total
        # A total that went down was started again (a new object): all of it is new.
        return total - last if total >= last else total

    def flush(self) -> None:
        """Add what was counted since the last flush, and set the gauges from the app's state now."""
        sources = self.sources
        tally = sources.tally
        for (route, method, status), counts in tally.drain().items():
            labels = (route[0], route[1], method, f"{status // 100}xx", code_label(status))
            add_observations(self.duration.labels(*labels), counts)
            answered = sum(counts[1:])
            self.requests.labels(*labels).inc(answered)
            self._finished += int(answered)
        self.in_flight.set(tally.started - self._finished)
        lag = self.lag.drain()
        if lag[0] or any(lag[1:]):
            add_observations(self.loop_lag, lag)
        runtime = sources.runtime
        now = time.time()
        pool = runtime.pool
        if pool is not None:
            for difficulty in DIFFICULTIES:
                self.puzzles.labels(difficulty.lower()).set(pool.count(difficulty))
            order = export_order(pool.info.export_key)
            # An export whose name carries no time (a single local file): NaN, which no alert compares true.
            made = order[0].timestamp() if order is not None else math.nan
            self.export_time.set(made)
            self.export_age.set(now - made)
            self.loaded_time.set(pool.info.loaded_at)
        sync = runtime.sync
        for name, counter in self.sync.items():
            counter.inc(self._delta(f"sync.{name}", getattr(sync, name)))
        if sync.last_success_at is not None:
            self.sync_success.set(sync.last_success_at)
        if sync.last_load_seconds is not None:
            self.load_seconds.set(sync.last_load_seconds)
        if sync.last_swap_seconds is not None:
            self.swap_seconds.set(sync.last_swap_seconds)
        self.downloaded.inc(self._delta("downloaded", Received.bytes))
        for outcome, by_tier in sources.limiter.decisions.items():
            for tier, total in by_tier.items():
                grown = self._delta(f"limiter.{outcome}.{tier}", total)
                if grown:
                    self.decisions.labels(tier, outcome).inc(grown)
        self.fallbacks.inc(self._delta("fallbacks", sources.redis_fallbacks()))
        images = runtime.image_tally
        for name, counter in self.images.items():
            counter.inc(self._delta(f"images.{name}", getattr(images, name)))
        self.image_bytes.set(runtime.images.stats()["bytes"])
        answers = runtime.answer_tally
        for name, counter in self.answers.items():
            counter.inc(self._delta(f"answers.{name}", getattr(answers, name)))
        self.answer_bytes.set(runtime.answers.stats()["bytes"])
        self.flush_work(runtime)
        self.storage_down.set(1 if sources.storage_down() else 0)
        for node, down in sources.redis_nodes().items():
            self.redis_down.labels(node).set(1 if down else 0)
        clock = time.monotonic()
        if clock - self._pss_at >= PSS_SECONDS:
            self._pss_at = clock
            pss = proportional_memory()
            if pss is not None:
                self.pss.set(pss)
        if self.process is not None:
            self.process.flush()

    def flush_work(self, runtime: Runtime) -> None:
        work = runtime.work
        tally = work.tally
        for (kind, outcome), total in tally.outcomes.items():
            grown = self._delta(f"work.{kind}.{outcome}", total)
            if grown:
                self.work_jobs.labels(kind, outcome).inc(grown)
        for kind, counts in tally.drain().items():
            add_observations(self.work_seconds.labels(kind), counts)
        stats = work.stats()
        self.work_waiting.set(stats["waiting"])
        self.work_running.set(stats["running"])
        self.work_processes.set(stats["processes"])
        self.work_resident.set(stats["resident_bytes"])
        self.work_started.inc(self._delta("work.started", stats["processes_started"]))

    def exposition(self, accept: str = "") -> tuple[bytes, str]:
        """The scrape's body in the format ``accept`` asks for (Prometheus text by default), and its type.

        Reads files in multiprocess mode: then call it off the event loop (after :meth:`flush`, on it); in one
        process it reads the registry in memory (and /proc).
        """
        parts, content_type = self.exposition_parts(accept)
        return b"".join(parts), content_type

    def exposition_parts(self, accept: str = "") -> tuple[Iterator[bytes], str]:
        """:meth:`exposition`'s body in parts, made as they are asked for: a few lines each in Prometheus's text
        format (:mod:`sudokupool.metrics.text`), the whole body at once in another (OpenMetrics)."""
        if self.multiprocess_dir:
            forget_dead_workers(self.multiprocess_dir)
        encoder, content_type = choose_encoder(accept)
        if encoder is generate_latest:
            return text.families(self.registry), content_type
        if isinstance(encoder, partial) and encoder.func is generate_latest:
            return text.families(self.registry, encoder.keywords["escaping"]), content_type
        return iter((encoder(self.registry),)), content_type

    def start(self) -> None:
        """Sample the event loop's lag; with several workers, flush every :data:`FLUSH_SECONDS` too, so any
        worker's scrape sees this one's."""
        if self._lag_task is None:
            self._lag_task = asyncio.create_task(self.lag.run(), name="sudokupool-loop-lag")
        if self.multiprocess_dir and self._task is None:
            self._task = asyncio.create_task(self._flush_every(FLUSH_SECONDS), name="sudokupool-metrics")

    async def _flush_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            self.flush()

    async def stop(self) -> None:
        """Stop flushing, after a last flush; a worker that stops drops its gauges from the merge."""
        task, self._task = self._task, None
        await cancel(task)
        lag, self._lag_task = self._lag_task, None
        await cancel(lag)
        if self.multiprocess_dir:
            self.flush()
            mark_process_dead(os.getpid(), self.multiprocess_dir)  # type: ignore[no-untyped-call]


def proportional_memory() -> int | None:
    """This process's proportional set size in bytes (``Pss`` of ``/proc/self/smaps_rollup``); None where
    the kernel has no such file."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/smaps_rollup", "rb") as file:
        for line in file:
            if line.startswith(b"Pss:"):
                return int(line.split()[1]) * 1024
    return None


def add_observations(child: Any, counts: list[float]) -> None:
    """Add a tally's ``[sum, count per bucket...]`` to a histogram's child in one step.

    prometheus-client has no bulk observe; this adds to the same two values its ``observe`` adds to (the
    sum, and the bucket's own, non-cumulative count). tests/metrics/test_metrics.py checks the scraped histogram.
    """
    child._sum.inc(counts[0])
    for bucket, count in zip(child._buckets, counts[1:], strict=True):
        if count:
            bucket.inc(count)


class ProcessFigures:
    """This worker's process metrics (the client's defaults), written where the merge can sum them.

    prometheus-client's process collector reads the process it runs in, so in multiprocess mode a scrape
    would show only the worker that answers it. Every worker copies its own figures into values the merge
    combines: CPU seconds summed (including workers that exited, so the total never goes back), memory
    and file descriptors summed over live workers, the start time of the oldest.
    """

    MODES: ClassVar[dict[str, str]] = {
        "process_virtual_memory_bytes": "livesum",
        "process_resident_memory_bytes": "livesum",
        "process_open_fds": "livesum",
        "process_max_fds": "livemax",
        "process_start_time_seconds": "livemin",
    }

    def __init__(self) -> None:
        self.collector = ProcessCollector(registry=None)
        self.gauges: dict[str, Gauge] = {}
        self.cpu = Counter("process_cpu_seconds", "Total user and system CPU time spent in seconds.", registry=None)
        self.cpu_seen = 0.0
        for family in self.collector.collect():
            for sample in family.samples:
                mode = self.MODES.get(sample.name)
                if mode is not None:
                    self.gauges[sample.name] = Gauge(
                        sample.name,
                        family.documentation,
                        registry=None,
                        multiprocess_mode=mode,  # type: ignore[arg-type]
                    )

    def flush(self) -> None:
        for family in self.collector.collect():
            for sample in family.samples:
                gauge = self.gauges.get(sample.name)
                if gauge is not None:
                    gauge.set(sample.value)
                elif sample.name == "process_cpu_seconds_total":
                    self.cpu.inc(max(sample.value - self.cpu_seen, 0.0))
                    self.cpu_seen = sample.value


def forget_dead_workers(directory: str) -> None:
    """Drop the live gauges of workers that are gone without stopping (killed): their files would
    otherwise count in every merge until the directory is cleaned."""
    for path in glob.glob(os.path.join(directory, "gauge_live*_*.db")):
        pid = int(os.path.basename(path).rpartition("_")[2].removesuffix(".db"))
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]
        except PermissionError:
            pass
