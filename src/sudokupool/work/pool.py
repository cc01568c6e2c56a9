"""The bounded pool for computed work: a few processes of their own, a bounded queue, a time budget a job.

Lookups answer from prepared bytes on the event loop; everything computed per request (renders, print
sheets, live grades and hints) is submitted here, so no client can grow the serving worker's heap or hold its
loop, and nothing else the loop waits for (metrics scrapes, sync, loading in threads) queues behind it.

- **Processes**, started when the first job comes and kept: a fresh interpreter each (see :mod:`.process`) at a lower
  CPU priority (``niceness``, and Linux's ``SCHED_IDLE``: see :mod:`.child`), so the GIL and the heap of a render never
  touch the worker, and a busy pool yields the cores to lookups. A new process imports the ``preload`` modules (the
  jobs' own) before it takes a job, at its worker's priority: a start, not a job, pays for them. A process is replaced
  after ``jobs_per_process`` jobs, or when it reports more than ``process_bytes`` resident after a job (its heap is
  trimmed after every job).
- **A bounded queue**: at most ``queue`` jobs wait for a process; one more is refused at once with
  :class:`WorkQueueFull` (answer 503 with ``Retry-After``).
- **Cancellation**: a waiting job whose client has left (``left`` returned) is dropped before it starts
  (:class:`WorkDropped`). A job that has started runs to its end, and its result is still cached.
- **A budget**: a job running longer than ``budget`` seconds is abandoned (:class:`WorkBudgetExceeded`) and
  its process killed; the next job starts a new one.

Jobs are a top-level function (pickled by its module and name) and picklable arguments; the result comes
back pickled. One pool serves one event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from bisect import bisect_left
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from sudokupool.config import Settings
from sudokupool.work.errors import WorkBudgetExceeded, WorkCrashed, WorkDropped, WorkError, WorkQueueFull
from sudokupool.work.process import WorkProcess

T = TypeVar("T")

#: How a job ended: ``done`` (a result), ``failed`` (its own exception), ``rejected`` (queue full), ``dropped``
#: (its client left while it waited), ``over_budget``, ``crashed`` (the process ended without an answer).
OUTCOMES: Final = ("done", "failed", "rejected", "dropped", "over_budget", "crashed")

#: Upper bounds (seconds) of the job-time histogram's buckets; the last bucket is +Inf.
JOB_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass
class WorkTally:
    """What the pool counted: outcomes by (kind, outcome) since it began, job seconds by kind since the last
    :meth:`drain` (``[sum, count per bucket..., +Inf]``), and processes started."""

    outcomes: dict[tuple[str, str], int] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)
    processes_started: int = 0
    _total_seconds: float = 0.0
    _total_jobs: int = 0

    def count(self, kind: str, outcome: str) -> None:
        key = (kind, outcome)
        self.outcomes[key] = self.outcomes.get(key, 0) + 1

    def observe(self, kind: str, seconds: float) -> None:
        counts = self.seconds.get(kind)
        if counts is None:
            counts = self.seconds[kind] = [0.0] * (len(JOB_BUCKETS) + 2)
        counts[0] += seconds
        counts[bisect_left(JOB_BUCKETS, seconds) + 1] += 1
        self._total_seconds += seconds
        self._total_jobs += 1

    def drain(self) -> dict[str, list[float]]:
        seconds, self.seconds = self.seconds, {}
        return seconds

    def mean_seconds(self) -> float:
        return self._total_seconds / self._total_jobs if self._total_jobs else 0.0


class WorkPool:
    """Runs submitted jobs in up to ``processes`` work processes; see the module's docstring for the bounds."""

    def __init__(
        self,
        *,
        processes: int = Settings.work_processes,
        queue: int = Settings.work_queue,
        budget: float = Settings.work_budget_seconds,
        niceness: int = Settings.work_niceness,
        jobs_per_process: int = Settings.work_process_jobs,
        process_bytes: int = Settings.work_process_bytes,
        preload: tuple[str, ...] = (),
    ) -> None:
        if processes < 1 or queue < 0 or budget <= 0:
            raise ValueError("a work pool needs processes >= 1, queue >= 0 and budget > 0")
        self.processes = processes
        self.queue = queue
        self.budget = budget
        self.niceness = niceness
        self.jobs_per_process = jobs_per_process
        self.process_bytes = process_bytes
        self.preload = preload
        self.tally = WorkTally()
        #: Jobs waiting for a process, and jobs running in one, now.
        self.waiting = 0
        self.running = 0
        self._free = processes  # processes a job may take now (started or to start)
        self._queue: list[asyncio.Future[None]] = []  # the waiting jobs' turns, first come first served
        self._idle: list[WorkProcess] = []
        self._live: set[WorkProcess] = set()
        self._stopping: set[asyncio.Task[None]] = set()
        self._closed = False

    @classmethod
    def from_settings(cls, settings: Settings, preload: tuple[str, ...] = ()) -> WorkPool:
        return cls(
            processes=settings.work_processes,
            queue=settings.work_queue,
            budget=settings.work_budget_seconds,
            niceness=settings.work_niceness,
            jobs_per_process=settings.work_process_jobs,
            process_bytes=settings.work_process_bytes,
            preload=preload,
        )

    async def submit(
        self,
        function: Callable[..., T],
        *args: Any,
        kind: str = "job",
        left: Callable[[], Awaitable[object]] | None = None,
    ) -> T:
        """Run ``function(*args)`` in a work process and return its result (or raise the exception it raised).

        ``function`` is a module-level function and ``args`` picklable (they are sent to another process).
        ``kind`` names the job in the metrics (``png``, ``print``, ``grade``...: a small closed set, never
        built from a request). ``left``, when given, is a coroutine function that returns once the job's client
        has gone (for an HTTP request, when ``receive`` gives ``http.disconnect``): a job still waiting then is
        dropped. Raises :class:`WorkQueueFull` at once when no process is free and ``queue`` jobs wait already,
        :class:`WorkDropped`, :class:`WorkBudgetExceeded`, or :class:`WorkCrashed`.
        """
        if self._closed:
            raise WorkCrashed("the work pool is closed")
        if self._free <= 0 and self.waiting >= self.queue:
            self.tally.count(kind, "rejected")
            raise WorkQueueFull(self.retry_after())
        try:
            await self._take_turn(left)
        except WorkDropped:
            self.tally.count(kind, "dropped")
            raise
        try:
            return await self._run(kind, function, args)
        finally:
            self._give_turn()

    def retry_after(self) -> int:
        """Whole seconds (1-60) until the jobs waiting now have likely run: what a 503 asks a client to wait."""
        mean = self.tally.mean_seconds() or 1.0
        return max(1, min(60, math.ceil(mean * (self.waiting + self.running) / self.processes)))

    async def _take_turn(self, left: Callable[[], Awaitable[object]] | None) -> None:
        if self._free > 0 and not self._queue:
            self._free -= 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append(turn)
        self.waiting += 1
        watch = asyncio.ensure_future(left()) if left is not None else None
        try:
            if watch is None:
                await turn
                return
            await asyncio.wait((turn, watch), return_when=asyncio.FIRST_COMPLETED)
            if not turn.done():
                raise WorkDropped("the client left before the job started")
        except BaseException:
            if turn.done() and not turn.cancelled():
                self._give_turn()  # given to this job as it left: pass it on
            else:
                turn.cancel()
                with contextlib.suppress(ValueError):
                    self._queue.remove(turn)
            raise
        finally:
            self.waiting -= 1
            if watch is not None:
                watch.cancel()

    def _give_turn(self) -> None:
        while self._queue:
            turn = self._queue.pop(0)
            if not turn.done():
                turn.set_result(None)
                return
        self._free += 1

    async def _run(self, kind: str, function: Callable[..., T], args: tuple[Any, ...]) -> T:
        process = self._idle.pop() if self._idle else await self._start()
        self.running += 1
        started = time.perf_counter()
        keep = False
        try:
            async with asyncio.timeout(self.budget):  # in place: wait_for would run the call in a task of its own
                result: T = await process.call(function, args)
        except TimeoutError:
            self.tally.count(kind, "over_budget")
            raise WorkBudgetExceeded(self.budget, self.retry_after()) from None
        except WorkCrashed:
            self.tally.count(kind, "crashed")
            raise
        except WorkError:
            raise
        except asyncio.CancelledError:
            raise
        except Exception:
            # The job's own exception: the process answered and is fit for the next job.
            self.tally.count(kind, "failed")
            keep = True
            raise
        else:
            self.tally.count(kind, "done")
            keep = True
            return result
        finally:
            self.running -= 1
            self.tally.observe(kind, time.perf_counter() - started)
            if keep and process.jobs < self.jobs_per_process and process.rss <= self.process_bytes:
                self._idle.append(process)
            else:
                # Past its budget, crashed, cancelled mid-job, or due for a fresh heap: a new one takes its place.
                self._retire(process, kill=not keep)

    async def _start(self) -> WorkProcess:
        try:
            process = await WorkProcess.start(self.niceness, self.preload)
        except OSError as exc:
            raise WorkCrashed(f"cannot start a work process: {exc}") from None
        self.tally.processes_started += 1
        self._live.add(process)
        return process

    def _retire(self, process: WorkProcess, *, kill: bool) -> None:
        self._live.discard(process)
        if kill:
            process.kill()
        task = asyncio.ensure_future(process.stop())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    def stats(self) -> dict[str, int]:
        """Now: ``waiting`` and ``running`` jobs, live ``processes``, their ``resident_bytes`` after their last
        jobs, and ``processes_started`` since the pool began."""
        return {
            "waiting": self.waiting,
            "running": self.running,
            "processes": len(self._live),
            "resident_bytes": sum(p.rss for p in self._live),
            "processes_started": self.tally.processes_started,
        }

    def pids(self) -> list[int]:
        """The live work processes' ids (for memory readings)."""
        return [p.pid for p in self._live]

    async def aclose(self) -> None:
        """Stop every process (waiting jobs are refused from now on; running ones end with their process)."""
        self._closed = True
        for process in list(self._live):
            self._retire(process, kill=process not in self._idle)
        self._idle.clear()
        if self._stopping:
            await asyncio.gather(*self._stopping, return_exceptions=True)
