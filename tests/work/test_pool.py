"""WorkPool against real work processes: results and errors come back, the queue bound refuses, a job past
its budget is stopped and its process replaced, a job whose client left is never started, processes recycle."""

from __future__ import annotations

import asyncio
import math
import operator
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sudokupool.config import Settings
from sudokupool.images.render import render
from sudokupool.loading.loader import LoadLimits
from sudokupool.state import JOB_MODULES, Runtime
from sudokupool.sudoku.answers import grade_answer, hint_answer
from sudokupool.web.printsheet import make_sheet
from sudokupool.work import WorkBudgetExceeded, WorkCrashed, WorkDropped, WorkPool, WorkQueueFull
from tests.helpers import wait_until

pytestmark = pytest.mark.slow

#: This process's scheduling group (its session's, Linux autogroup) and its niceness, where the kernel has them.
AUTOGROUP = "/proc/self/autogroup"


@pytest.fixture
async def pool() -> AsyncIterator[WorkPool]:
    work = WorkPool(processes=1, queue=2, budget=5.0)
    yield work
    await work.aclose()


@pytest.mark.anyio
async def test_a_job_runs_in_another_process_at_a_lower_priority(pool: WorkPool) -> None:
    assert await pool.submit(operator.add, 2, 3, kind="test") == 5
    pid = await pool.submit(os.getpid)
    assert pid != os.getpid()
    assert pool.pids() == [pid]
    assert pool.niceness == Settings.work_niceness
    assert await pool.submit(os.nice, 0) == os.nice(0) + pool.niceness
    assert pool.tally.outcomes[("test", "done")] == 1
    assert pool.stats()["resident_bytes"] > 0


@pytest.mark.anyio
async def test_a_work_process_is_idle_priority_in_its_workers_scheduling_group_and_a_process_group_of_its_own(
    pool: WorkPool,
) -> None:
    # SCHED_IDLE: a core only when no task of normal priority wants one, and a waking request's task takes it back at
    # once. It holds within the worker's session's scheduling group (Linux autogroup), where a nice value alone would
    # take its share of the worker's CPU; Ctrl-C goes to the terminal's foreground process group, the worker's alone.
    pid = await pool.submit(os.getpid)
    assert await pool.submit(os.sched_getscheduler, 0) == os.SCHED_IDLE
    assert await pool.submit(os.getsid, 0) == os.getsid(0)
    assert await pool.submit(os.getpgid, 0) == pid != os.getpgid(0)
    ours = autogroup()
    if ours is not None:  # a process in an autogroup: "/autogroup-N nice K"
        assert (await pool.submit(Path.read_text, Path(AUTOGROUP))).split()[0] == ours.split()[0]


@pytest.mark.anyio
async def test_a_work_process_at_the_workers_priority_keeps_its_policy() -> None:
    work = WorkPool(processes=1, queue=0, budget=5.0, niceness=0)
    try:
        assert await work.submit(os.sched_getscheduler, 0) == os.sched_getscheduler(0)
        assert await work.submit(os.nice, 0) == os.nice(0)
    finally:
        await work.aclose()


@pytest.mark.anyio
async def test_a_signal_to_every_process_leaves_a_running_job_to_finish(pool: WorkPool) -> None:
    # A platform stopping an instance signals every process in it (Heroku: SIGTERM); the worker then answers the
    # requests it holds, so its work process finishes their jobs and ends only when the worker closes its input.
    pid = await pool.submit(os.getpid)
    job = asyncio.ensure_future(pool.submit(time.sleep, 1.0))
    await asyncio.sleep(0.2)
    for stop in (signal.SIGTERM, signal.SIGINT):
        os.kill(pid, stop)
    assert await job is None
    assert await pool.submit(os.getpid) == pid
    await pool.aclose()
    wait_until(lambda: not alive(pid), "the work process gone once its input closed")


@pytest.mark.anyio
async def test_a_new_process_has_imported_the_preload_modules_before_its_first_job() -> None:
    asked = "'colorsys' in __import__('sys').modules"  # a module nothing here imports
    work = WorkPool(processes=1, queue=0, budget=5.0, preload=("colorsys",))
    try:
        assert await work.submit(eval, asked) is True
    finally:
        await work.aclose()
    plain = WorkPool(processes=1, queue=0, budget=5.0)
    try:
        assert await plain.submit(eval, asked) is False
    finally:
        await plain.aclose()


def test_the_apps_work_processes_preload_the_module_of_every_function_it_submits() -> None:
    jobs = (render, make_sheet, grade_answer, hint_answer)
    assert {job.__module__ for job in jobs} == set(JOB_MODULES)
    assert Runtime(Settings()).work.preload == JOB_MODULES


def autogroup() -> str | None:
    """This process's scheduling group and its niceness (Linux autogroup), or None where it has none: a kernel
    without autogroup has no such file, and one whose process sits in a CPU cgroup of its own shows it empty."""
    try:
        return Path(AUTOGROUP).read_text().strip() or None
    except FileNotFoundError:
        return None


def test_a_live_reloads_thread_runs_at_a_higher_priority_than_the_work_processes() -> None:
    settings = Settings()
    _, reload_niceness = LoadLimits.from_settings(settings).pace(background=True)
    assert 0 < reload_niceness < WorkPool.from_settings(settings).niceness


@pytest.mark.anyio
async def test_a_jobs_own_exception_comes_back_and_the_process_stays(pool: WorkPool) -> None:
    pid = await pool.submit(os.getpid)
    with pytest.raises(ValueError, match="factorial"):
        await pool.submit(math.factorial, -1, kind="test")
    assert await pool.submit(os.getpid) == pid
    assert pool.tally.outcomes[("test", "failed")] == 1


@pytest.mark.anyio
async def test_past_the_queue_bound_a_job_is_refused_at_once(pool: WorkPool) -> None:
    await pool.submit(os.getpid)  # the process is up
    running = asyncio.create_task(pool.submit(time.sleep, 1.0))
    waiting = [asyncio.create_task(pool.submit(operator.add, i, 0)) for i in range(2)]
    await asyncio.sleep(0)
    assert pool.stats()["waiting"] == 2
    with pytest.raises(WorkQueueFull) as refused:
        await pool.submit(operator.add, 9, 0, kind="test")
    assert 1 <= refused.value.retry_after <= 60
    assert pool.tally.outcomes[("test", "rejected")] == 1
    assert await asyncio.gather(*waiting) == [0, 1]
    await running


@pytest.mark.anyio
async def test_a_job_past_its_budget_is_stopped_and_its_process_replaced() -> None:
    pool = WorkPool(processes=1, queue=2, budget=0.5)
    try:
        first = await pool.submit(os.getpid)
        with pytest.raises(WorkBudgetExceeded):
            await pool.submit(time.sleep, 30, kind="test")
        assert pool.tally.outcomes[("test", "over_budget")] == 1
        second = await pool.submit(os.getpid)
        assert second != first
        assert pool.stats()["processes_started"] == 2
    finally:
        await pool.aclose()


@pytest.mark.anyio
async def test_a_waiting_job_whose_client_left_never_starts(pool: WorkPool) -> None:
    await pool.submit(os.getpid)
    running = asyncio.create_task(pool.submit(time.sleep, 0.5))
    gone = asyncio.Event()
    dropped = asyncio.create_task(pool.submit(os.getpid, kind="test", left=gone.wait))
    await asyncio.sleep(0)
    gone.set()
    with pytest.raises(WorkDropped):
        await dropped
    await running
    assert pool.tally.outcomes[("test", "dropped")] == 1
    assert ("test", "done") not in pool.tally.outcomes
    assert pool.stats() | {"resident_bytes": 0} == {
        "waiting": 0,
        "running": 0,
        "processes": 1,
        "resident_bytes": 0,
        "processes_started": 1,
    }


@pytest.mark.anyio
async def test_a_process_is_replaced_after_its_jobs_and_when_it_grew() -> None:
    pool = WorkPool(processes=1, queue=2, jobs_per_process=2)
    try:
        pids = [await pool.submit(os.getpid) for _ in range(4)]
        assert pids[0] == pids[1] != pids[2] == pids[3]
    finally:
        await pool.aclose()
    small = WorkPool(processes=1, queue=2, process_bytes=1)
    try:
        assert await small.submit(os.getpid) != await small.submit(os.getpid)
    finally:
        await small.aclose()


@pytest.mark.anyio
async def test_a_process_that_dies_mid_job_is_a_crash_and_the_next_job_gets_a_new_one(pool: WorkPool) -> None:
    with pytest.raises(WorkCrashed):
        await pool.submit(os._exit, 3, kind="test")
    assert pool.tally.outcomes[("test", "crashed")] == 1
    assert await pool.submit(operator.add, 1, 1) == 2


@pytest.mark.anyio
async def test_closing_stops_every_process(pool: WorkPool) -> None:
    pid = await pool.submit(os.getpid)
    await pool.aclose()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(WorkCrashed):
        await pool.submit(os.getpid)


def test_a_work_process_mid_job_dies_with_its_worker(tmp_path: Path) -> None:
    # In a process group of its own, no signal to the worker's group reaches it: the worker's death does.
    started = tmp_path / "started"
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(started)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    try:
        assert worker.stdout is not None
        child = int(worker.stdout.readline())
        assert os.getpgid(child) != os.getpgid(worker.pid)
        wait_until(started.exists, "the work process running its minute-long job")
        worker.kill()
        worker.wait()
        wait_until(lambda: not alive(child), "the work process gone with its worker")
    finally:
        worker.kill()
        worker.wait()


#: A worker: a pool whose process says its pid, then runs a job of a minute that first makes the file argv[1].
WORKER = """
import asyncio, os, sys
from sudokupool.work import WorkPool

async def main():
    pool = WorkPool(processes=1, budget=120)
    print(await pool.submit(os.getpid), flush=True)
    await pool.submit(exec, f"import pathlib, time; pathlib.Path({sys.argv[1]!r}).touch(); time.sleep(60)")

asyncio.run(main())
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped by its new parent, counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False
