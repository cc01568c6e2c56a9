"""What ``sudokupool serve`` (the launcher) and the server's worker processes share, on both servers.

- **Dying with the launcher.** The launcher's pid travels to the workers as ``SUDOKUPOOL_LAUNCHER_PID``; a
  worker (a process other than the launcher) asks Linux, when its app is built, for a signal when its
  parent dies (``prctl(PR_SET_PDEATHSIG)``), then checks that its parent is still the launcher: a launcher
  killed with SIGKILL, which can stop nothing itself, takes its workers with it, and they free the port.
  The signal (``SUDOKUPOOL_LAUNCHER_SIGNAL``) is SIGTERM for uvicorn's workers, a shutdown like any other
  (requests in flight may finish within ``SUDOKUPOOL_SHUTDOWN_TIMEOUT``), and SIGKILL for granian's: a
  granian worker (2.8.7) that gets SIGTERM while its app is starting can hang for good, its main thread
  blocked in granian's own code with the GIL held.
- **One line for a failed start.** The launcher makes a report file (``SUDOKUPOOL_STARTUP_REPORT``); a worker
  whose startup fails writes its one-line reason there instead of logging it, and the launcher, once the
  server has stopped, prints the first reason as its last line and exits with :data:`STARTUP_FAILED`,
  whatever the server and however many workers there were.
  The servers' own lines about that failure (uvicorn's ``Application startup failed. Exiting.`` and
  ``Child process [N] failed to start``, granian's ``ASGI lifespan startup failed`` and ``Unexpected exit
  from worker-N``) are dropped once a reason was handed over (:class:`QuietFailedStart`): the reason is
  the one ERROR line.
- **Leftovers of a launcher that was killed.** Its temporary files and directories carry its pid in their
  names (``sudokupool-<what>-<pid>-...``); the next launch removes those whose launcher is gone.

The settings, port and keys are checked by the launcher before any of this (exit status 2).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Final

LAUNCHER_PID: Final = "SUDOKUPOOL_LAUNCHER_PID"
STARTUP_REPORT: Final = "SUDOKUPOOL_STARTUP_REPORT"
LAUNCHER_SIGNAL: Final = "SUDOKUPOOL_LAUNCHER_SIGNAL"
#: The exit status of a start that failed after the settings were accepted: the pool could not be loaded,
#: the metrics port could not be listened on... (uvicorn's own status for a failed startup).
STARTUP_FAILED: Final = 3
#: prctl(2)'s option for the signal sent when the parent dies.
_PR_SET_PDEATHSIG: Final = 1
_LEFTOVER: Final = re.compile(r"^sudokupool-(?:metrics|startup|logging|listing)-(\d+)-")


def temporary_name(what: str) -> str:
    """The prefix of a temporary file or directory of this launcher (see :func:`sweep_leftovers`)."""
    return f"sudokupool-{what}-{os.getpid()}-"


def sweep_leftovers(directory: str | None = None) -> list[str]:
    """Remove the temporary files and directories of launchers that are no longer running (killed, so they
    could not clean up); the paths removed."""
    removed = []
    where = Path(directory or tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for path in where.iterdir():
            match = _LEFTOVER.match(path.name)
            if match is None or _running(int(match.group(1))):
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    path.unlink()
            removed.append(str(path))
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: not ours to judge
    return True


class Supervisor:
    """The launcher's side: the environment its workers start with, and what they reported."""

    def __init__(self, environ: MutableMapping[str, str], *, death_signal: signal.Signals = signal.SIGTERM) -> None:
        sweep_leftovers()
        self.environ = environ
        environ[LAUNCHER_PID] = str(os.getpid())
        environ[LAUNCHER_SIGNAL] = death_signal.name
        self.report = ""
        try:
            fd, self.report = tempfile.mkstemp(prefix=temporary_name("startup"), suffix=".txt")
        except OSError:
            # No writable temporary directory: the workers log their reasons themselves, as without a launcher.
            return
        os.close(fd)
        environ[STARTUP_REPORT] = self.report
        quiet_server_lines(lambda: self.failure() is not None)

    def failure(self) -> str | None:
        """The first reason a worker (or the launcher's own app) gave for a failed startup, or None."""
        if not self.report:
            return None
        try:
            text = Path(self.report).read_text(errors="replace")
        except OSError:
            return None
        lines = [line for line in text.splitlines() if line.strip()]
        return lines[0] if lines else None

    def close(self) -> None:
        # What the workers shared (sudokupool.loading.shared) goes with the launcher.
        for path in Path(tempfile.gettempdir()).glob(f"sudokupool-listing-{os.getpid()}-*"):
            with contextlib.suppress(OSError):
                path.unlink()
        if self.report:
            with contextlib.suppress(OSError):
                os.remove(self.report)
        for name in (STARTUP_REPORT, LAUNCHER_PID, LAUNCHER_SIGNAL):
            self.environ.pop(name, None)


#: The servers' ERROR lines that only say a startup failed (the reason is the launcher's line).
SERVER_FAILURE_LINES: Final = (
    re.compile(r"Application startup failed\. Exiting\.$"),
    re.compile(r"Child process \[\d+\] failed to start, stopping the parent process\.$"),
    re.compile(r"ASGI lifespan startup failed$"),
    re.compile(r"Unexpected exit from worker-\d+$"),
)
SERVER_LOGGERS: Final = ("uvicorn.error", "_granian")
_reported = False


class QuietFailedStart(logging.Filter):
    """Drops :data:`SERVER_FAILURE_LINES` once ``reported()`` says the reason was handed to the launcher."""

    def __init__(self, reported: Callable[[], bool]) -> None:
        super().__init__()
        self.reported = reported

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        message = record.getMessage()
        return not (any(line.match(message) for line in SERVER_FAILURE_LINES) and self.reported())


def quiet_server_lines(reported: Callable[[], bool]) -> None:
    """Put a :class:`QuietFailedStart` on the servers' loggers (once)."""
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, QuietFailedStart) for existing in logger.filters):
            logger.addFilter(QuietFailedStart(reported))


def report_startup_failure(message: str) -> bool:
    """Hand a failed startup's one-line ``message`` to the launcher; False when there is none to hand it to
    (then the server logs it as usual)."""
    path = os.environ.get(STARTUP_REPORT)
    if not path:
        return False
    line = " ".join(message.split()) + "\n"
    try:
        # One short write with O_APPEND: workers failing at once do not interleave their lines.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError:
        return False
    try:
        os.write(fd, line.encode())
    except OSError:
        return False
    finally:
        os.close(fd)
    global _reported
    _reported = True
    return True


def worker_started() -> None:
    """In a worker of ``sudokupool serve``: die with the launcher (see the module docstring). Nothing in the
    launcher itself (one uvicorn worker runs there) or in a server started some other way."""
    raw = os.environ.get(LAUNCHER_PID, "")
    if os.environ.get(STARTUP_REPORT):
        quiet_server_lines(lambda: _reported)
    if not raw.isdigit() or int(raw) == os.getpid():
        return
    death_signal = getattr(signal, os.environ.get(LAUNCHER_SIGNAL, ""), signal.SIGTERM)
    die_with_parent(death_signal)
    if os.getppid() != int(raw):
        # The launcher was gone before the request above was made: nothing would signal this worker.
        print(f"sudokupool: worker {os.getpid()}: the launcher (pid {raw}) is gone; exiting", file=sys.stderr)
        raise SystemExit(STARTUP_FAILED)


def die_with_parent(sig: int = signal.SIGTERM) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
