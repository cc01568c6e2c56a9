"""Starting and stopping the processes the suite and the bench run (support/servers.py)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from support.servers import ROOT, stop_process, wait_for


def test_wait_for_says_when_the_process_exits_or_the_time_is_up() -> None:
    exited = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    with pytest.raises(RuntimeError, match="child exited with 3"):
        wait_for(lambda: False, timeout=30, process=exited, what="child")
    with pytest.raises(RuntimeError, match=r"was not ready within 0\.1 s"):
        wait_for(lambda: False, timeout=0.1, process=None, what="nothing")
    ticks = iter([False, False, True])
    wait_for(lambda: next(ticks), timeout=30, process=None, what="three tries")


def test_stop_process_kills_what_ignores_its_signal() -> None:
    script = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(flush=True); time.sleep(60)"
    )
    stubborn = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, cwd=ROOT)
    assert stubborn.stdout is not None and stubborn.stdout.readline()  # its handler is set
    stop_process(stubborn, signal.SIGTERM, timeout=0.5)
    assert stubborn.returncode == -signal.SIGKILL
    stop_process(stubborn)  # already gone: nothing to do
