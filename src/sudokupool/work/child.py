"""A work process: ``python -m sudokupool.work.child NICENESS [MODULE ...]``, started and fed by
:mod:`sudokupool.work.process`.

It imports each ``MODULE`` first (those its jobs' functions live in), at its worker's priority, so that no job pays for
them and a busy machine slows them no more than its worker's own start. Then it runs ``NICENESS`` steps nicer than its
worker, in a session of its own (:mod:`.process` starts it so) whose scheduling group (Linux autogroup, where the kernel
has it on) it makes that many steps nicer too: with autogroup a nice value counts only against the tasks of the same
session, so without a group of its own the process would take its share of the CPU from its worker's group, the serving
loop and the sync's loading thread. It dies with the worker that started it (the worker's death signals it: no
terminal's Ctrl-C reaches another session).

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
#: This process's scheduling group (its session's, Linux autogroup) and its niceness, where the kernel has them.
AUTOGROUP: Final = "/proc/self/autogroup"


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
    """Make this process, and its session's scheduling group where there is one, ``niceness`` steps nicer."""
    if not niceness:
        return
    with contextlib.suppress(OSError), open(AUTOGROUP, "w") as group:  # no autogroup here: plain nice alone
        group.write(str(niceness))
    if hasattr(os, "nice"):
        os.nice(niceness)


def main() -> None:
    die_with_parent(signal.SIGKILL)
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
