"""A work process: ``python -m sudokupool.work.child NICENESS [MODULE ...]``, started and fed by
:mod:`sudokupool.work.process`.

It imports each ``MODULE`` first (those its jobs' functions live in), at its worker's priority, so that no job pays for
them and a busy machine slows them no more than its worker's own start. Then it runs ``NICENESS`` steps nicer than its
worker and, where the system has it (Linux), under the ``SCHED_IDLE`` policy: it takes a core only when no task of
normal priority wants one, and a request's task that wakes takes the core back at once. It stays in its worker's
session, and so in its worker's scheduling group (Linux autogroup, where the kernel has it on), in which that policy
leaves the group's share to the serving loop and the sync's loading thread. It has a process group of its own, so a
terminal's Ctrl-C (sent to the foreground group) reaches the worker alone. It ignores SIGTERM and SIGINT (a platform may
signal every process of an instance it stops) and finishes its job: the worker closes its input once its requests are
answered, and its death signals it.

It reads jobs from its standard input and writes answers to the standard output it was started with, one at a
time, until its input ends. A job is ``(function, args)`` pickled (the function by its module and name); an
answer is ``(True, result)`` or ``(False, exception)`` pickled, after a header with its length and this
process's resident memory once the job's garbage was handed back to the OS (``malloc_trim``), so the pool can
retire a process that grew. Whatever a job prints goes to standard error: the answers' pipe carries answers only.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import signal
import sys
from typing import BinaryIO, Final

from sudokupool.serving.heap import release_free_memory
from sudokupool.serving.supervision import die_with_parent
from sudokupool.work.wire import ANSWER_HEADER, JOB_HEADER

_PAGE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """This process's resident set (``/proc/self/statm``); 0 where there is none."""
    try:
        with open("/proc/self/statm", "rb") as file:
            return int(file.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _read(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if len(data) == size else None


def serve(jobs: BinaryIO, answers: BinaryIO) -> None:
    """Say it is ready (an empty answer) on ``answers``, then answer jobs from ``jobs`` there until ``jobs`` ends."""
    answers.write(ANSWER_HEADER.pack(0, resident_bytes()))
    answers.flush()
    while True:
        head = _read(jobs, JOB_HEADER.size)
        if head is None:
            return
        payload = _read(jobs, JOB_HEADER.unpack(head)[0])
        if payload is None:
            return
        try:
            function, args = pickle.loads(payload)
            answer = pickle.dumps((True, function(*args)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # the job's own failure goes back to the caller, as it is
            try:
                answer = pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:
                answer = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        del payload
        # The render's freed heap goes back now, between jobs, where it costs no request any time.
        release_free_memory()
        answers.write(ANSWER_HEADER.pack(len(answer), resident_bytes()) + answer)
        answers.flush()


def lower_priority(niceness: int) -> None:
    """Make this process ``niceness`` steps nicer and, when that is above 0, put it under ``SCHED_IDLE`` where the
    system has that policy."""
    if not niceness:
        return
    if hasattr(os, "nice"):
        os.nice(niceness)
    if hasattr(os, "SCHED_IDLE"):
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def main() -> None:
    die_with_parent(signal.SIGKILL)
    # A platform stopping its instance signals every process in it (Heroku: SIGTERM), a terminal's Ctrl-C its
    # foreground group: the worker then answers the requests it holds, whose jobs this process must finish. It ends
    # when the worker closes its input, or with the worker.
    for stop in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    for module in sys.argv[2:]:
        importlib.import_module(module)
    lower_priority(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    # Answers go out on a copy of the original standard output; what a job prints goes to standard error.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
