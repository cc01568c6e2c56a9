"""One work process seen from the serving worker: started, handed one job at a time, stopped.

The child is a fresh interpreter (``python -m sudokupool.work.child``), not a fork of the serving worker: it
holds none of the worker's pool, sockets or threads, only what its jobs import. Jobs and answers travel over
its standard input and output through asyncio's pipes, so waiting for an answer never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import sys
from collections.abc import Callable, Sequence
from typing import Any

from sudokupool.work.errors import WorkCrashed
from sudokupool.work.wire import ANSWER_HEADER, JOB_HEADER

#: Seconds a new work process has to say it is ready.
START_SECONDS = 30.0
#: Seconds a work process has to end once its input is closed, before it is killed.
STOP_SECONDS = 2.0


class WorkProcess:
    """A started child and what it reported: jobs answered and its resident bytes after the last one."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.jobs = 0
        self.rss = 0

    @classmethod
    async def start(cls, niceness: int, preload: Sequence[str] = ()) -> WorkProcess:
        """A new child, ``niceness`` steps nicer than this process once it has imported the ``preload`` modules."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sudokupool.work.child",
            str(niceness),
            *preload,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        started = cls(process)
        # Its first answer, empty, says the interpreter is up: a job's budget never pays for a start.
        try:
            size, started.rss = ANSWER_HEADER.unpack(
                await asyncio.wait_for(process.stdout.readexactly(ANSWER_HEADER.size), START_SECONDS)  # type: ignore[union-attr]
            )
        except (TimeoutError, asyncio.IncompleteReadError):
            started.kill()
            await process.wait()
            raise WorkCrashed(f"a work process did not start within {START_SECONDS:g} s") from None
        assert size == 0
        return started

    @property
    def pid(self) -> int:
        return self.process.pid

    async def call(self, function: Callable[..., Any], args: Sequence[Any]) -> Any:
        """Run ``function(*args)`` in the child and return its result, or raise the exception it raised.

        Raises :class:`WorkCrashed` when the child ends without answering. Cancelled (the budget), the child
        is left mid-job: :meth:`kill` it.
        """
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        payload = pickle.dumps((function, tuple(args)), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            stdin.write(JOB_HEADER.pack(len(payload)) + payload)
            await stdin.drain()
            size, self.rss = ANSWER_HEADER.unpack(await stdout.readexactly(ANSWER_HEADER.size))
            answer = await stdout.readexactly(size)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise WorkCrashed(f"the work process {self.pid} ended without an answer") from exc
        self.jobs += 1
        ok, value = pickle.loads(answer)
        if not ok:
            raise value
        return value

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()

    async def stop(self) -> None:
        """End the child: its input closed (it exits between jobs), killed if it has not after :data:`STOP_SECONDS`."""
        stdin = self.process.stdin
        if stdin is not None:
            stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), STOP_SECONDS)
        except TimeoutError:
            self.kill()
            await self.process.wait()
