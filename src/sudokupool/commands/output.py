"""What long commands print: a progress bar with rate and ETA on a terminal (log lines otherwise), and the bad
lines a check found."""

from __future__ import annotations

import time
from typing import Any, TextIO

from sudokupool.loading.loader import LoadReport
from sudokupool.logs import counted


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """Reports ``done`` out of ``total``: redraws one line (at most 10 times a second) when ``stream`` is a
    terminal, else writes a plain line every ``interval`` seconds so logs stay readable."""

    def __init__(self, total: int, stream: TextIO, *, interval: float = 10.0, width: int = 30) -> None:
        self.total = max(total, 1)
        self.stream = stream
        self.tty = stream.isatty()
        self.interval = 0.1 if self.tty else interval
        self.width = width
        self.started = time.monotonic()
        self.last = self.started
        self.text = ""

    def line(self, done: int, extra: str = "", eta_seconds: float | None = None) -> str:
        elapsed = time.monotonic() - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        if eta_seconds is None and rate > 0:
            eta_seconds = (self.total - done) / rate
        eta = "?" if eta_seconds is None else _clock(eta_seconds)
        fraction = min(done / self.total, 1.0)
        text = f"{done}/{self.total} {fraction:4.0%} {rate:6.1f}/s ETA {eta} {extra}".rstrip()
        if self.tty:
            filled = int(fraction * self.width)
            return f"[{'#' * filled}{'.' * (self.width - filled)}] {text}"
        return f"progress: {text} elapsed {_clock(elapsed)}"

    def update(self, done: int, extra: str = "", eta_seconds: float | None = None) -> None:
        """Record progress; prints only when the interval has passed. ``eta_seconds`` replaces the estimate
        from the overall rate when the caller knows better (e.g. the slowest of several quotas)."""
        now = time.monotonic()
        if now - self.last < self.interval:
            return
        self.last = now
        self._show(self.line(done, extra, eta_seconds))

    def final(self, done: int, extra: str = "") -> None:
        """Print the last state whatever the interval, so a log always ends with the totals."""
        self._show(self.line(done, extra))

    def _show(self, text: str) -> None:
        if self.tty:
            # Pad with spaces so a shorter line fully overwrites the previous one.
            self.stream.write("\r" + text.ljust(len(self.text)))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.text = text

    def close(self) -> None:
        """End the bar's line on a terminal."""
        if self.tty and self.text:
            self.stream.write("\n")
            self.stream.flush()


def print_problems(report: LoadReport, *, file: Any = None) -> None:
    """The first bad lines of ``report``, one a line, then how many more there were."""
    for number, problem in report.problems:
        print(f"line {number}: {problem}", file=file)
    if report.skipped_total > len(report.problems):
        print(f"... and {counted(report.skipped_total - len(report.problems), 'more bad line')}", file=file)
