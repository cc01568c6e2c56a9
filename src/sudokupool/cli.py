"""The ``sudokupool`` command line: serve, check, pack, canonical, grade, build, publish, keys, settings."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import TextIO, cast

from sudokupool import __version__
from sudokupool.commands import COMMAND_MODULES, CommandError
from sudokupool.config import SettingsError

#: The exit status after a broken pipe: what a shell reports for a command killed by SIGPIPE (128 + 13),
#: as for ``yes | head -1``, so a ``set -o pipefail`` script treats us like any other filter cut short.
BROKEN_PIPE = 141


class StreamClosed(Exception):
    """A standard stream the command uses was closed when the process started."""


class OutputError(Exception):
    """Writing to standard output failed; the OSError is its cause."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like KeyboardInterrupt so that ``with`` blocks (pools) unwind."""


class _ClosedStream:
    """Stands in for a standard stream whose descriptor was closed at start-up (Python leaves it None): using
    it raises StreamClosed, so a command stops with one line rather than an AttributeError or a TypeError."""

    def __init__(self, which: str) -> None:
        self.which = which

    def _closed(self) -> StreamClosed:
        return StreamClosed(f"standard {self.which} is closed")

    def read(self, size: int = -1) -> str:
        raise self._closed()

    def readline(self, size: int = -1) -> str:
        raise self._closed()

    def __iter__(self) -> Iterator[str]:
        raise self._closed()

    def write(self, text: str) -> int:
        raise self._closed()

    def flush(self) -> None:
        """Nothing to flush (the interpreter flushes standard output at exit)."""


class _Output:
    """Standard output, with its write errors told apart from the command's other OSErrors."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError as exc:
            raise OutputError from exc

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as exc:
            raise OutputError from exc

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand; given the arguments of one, of that one alone: a command imports what it
    runs on, and a process that checks a file need not import the server (a third of a second)."""
    parser = argparse.ArgumentParser(prog="sudokupool", description="A read-only Sudoku puzzle pool API.")
    parser.add_argument("--version", action="version", version=f"sudokupool {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    asked = next((arg for arg in argv or () if not arg.startswith("-")), None)
    for name in (asked,) if asked in COMMAND_MODULES else COMMAND_MODULES:
        importlib.import_module(f"sudokupool.commands.{name}").register(subparsers)
    return parser


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def _nothing() -> None:
    pass


def _catch_sigterm(command: str) -> Callable[[], None]:
    """Turn SIGTERM into Terminated while ``command`` runs; the function that puts the previous handler back."""
    # serve leaves its signals to the server (uvicorn's and granian's graceful shutdowns run in this process),
    # and a handler can only be set from the main thread.
    if command == "serve" or threading.current_thread() is not threading.main_thread():
        return _nothing
    previous = signal.signal(signal.SIGTERM, _terminate)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore


def _discard_output(stdout: TextIO) -> None:
    # As Python's documentation on SIGPIPE shows: point the descriptor at devnull, so that the interpreter's
    # own flush of standard output at exit does not fail a second time.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, stdout.fileno())
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script and of ``python -m sudokupool``.

    Every failure reaches the user as one line on stderr, never a traceback: a command's usage error
    (:class:`~sudokupool.commands.CommandError`, exit 2), a bad setting (2), a closed
    standard stream (2), output that cannot be written (1; a broken pipe exits quietly with 141), another
    OSError (1), Ctrl-C (130) and SIGTERM (143), which also stop a command's worker processes.
    """
    if sys.stdin is None:
        sys.stdin = cast(TextIO, _ClosedStream("input"))
    stdout = sys.stdout if sys.stdout is not None else cast(TextIO, _ClosedStream("output"))
    sys.stdout = cast(TextIO, _Output(stdout))
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    prefix = "sudokupool"
    restore = _nothing
    try:
        try:
            args = parser.parse_args(argv)
            if not getattr(args, "func", None):
                parser.print_help()
                return 2
            prefix = f"sudokupool {args.command}"
            restore = _catch_sigterm(args.command)
            code: int = args.func(args)
            return code
        finally:
            # Flushed here, so that an output error is reported below rather than by the interpreter at exit.
            sys.stdout.flush()
    except CommandError as exc:
        # A command's usage error: one line on stderr, named for the command, exit status 2.
        print(f"{prefix}: {exc}", file=sys.stderr)
        return 2
    except SettingsError as exc:
        # Every command reports a bad setting the same way: one line on stderr, exit status 2.
        print(f"sudokupool: {exc}", file=sys.stderr)
        return 2
    except StreamClosed as exc:
        print(f"sudokupool: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prefix}: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print(f"{prefix}: stopped by SIGTERM", file=sys.stderr)
        return 143
    except OutputError as exc:
        _discard_output(stdout)
        if isinstance(exc.__cause__, BrokenPipeError):
            # The reader went away (``| head``): nothing went wrong, and there is no one left to tell.
            return BROKEN_PIPE
        print(
            f"sudokupool: cannot write output: {getattr(exc.__cause__, 'strerror', None) or exc.__cause__}",
            file=sys.stderr,
        )
        return 1
    except OSError as exc:
        # What the command did not handle itself is still about the machine (a full disk, a permission), not
        # a bug in the program: one line, like any other operator error.
        print(f"{prefix}: {exc}", file=sys.stderr)
        return 1
    finally:
        restore()
        sys.stdout = stdout


if __name__ == "__main__":
    sys.exit(main())
