"""``sudokupool`` as a process: output errors, closed streams and signals end in one line, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sudokupool.cli import main
from sudokupool.commands import settings

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
EASY = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
HARD = "6.45....2...4...9.....71.4...716..83.51...96.36..497...8.61.....4...8...9....46.8"
SUDOKUPOOL = [sys.executable, "-m", "sudokupool"]


def _shell(line: str) -> subprocess.CompletedProcess[str]:
    """``line`` run by sh, with ``$SUDOKUPOOL`` the command: for redirections that close a descriptor."""
    command = " ".join(SUDOKUPOOL)
    return subprocess.run(
        ["sh", "-c", line.replace("$SUDOKUPOOL", command)], env=ENV, capture_output=True, text=True, timeout=60
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["settings"], id="settings"),
        pytest.param(["grade", EASY], id="grade"),
        pytest.param(["canonical", EASY], id="canonical"),
        pytest.param(["keys", "new"], id="keys-new"),
    ],
)
def test_a_full_disk_on_stdout_is_one_line(args: list[str]) -> None:
    # Standard output buffered, as a shell leaves it (a PYTHONUNBUFFERED in the caller's environment would hide
    # whatever is written to standard error before the buffer's write fails).
    env = {name: value for name, value in ENV.items() if name != "PYTHONUNBUFFERED"}
    with open("/dev/full", "w") as full:
        done = subprocess.run([*SUDOKUPOOL, *args], env=env, stdout=full, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 1
    assert done.stderr == "sudokupool: cannot write output: No space left on device\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["settings"], id="settings"),
        pytest.param(["grade", EASY, EASY], id="grade"),
        pytest.param(["grade", "--json", "--jobs", "2", EASY, HARD], id="grade-jobs"),
    ],
)
def test_a_broken_pipe_exits_quietly_with_141(args: list[str]) -> None:
    # A pipe whose reader has already gone: the first write fails, as under `| head` once head is done.
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([*SUDOKUPOOL, *args], env=ENV, stdout=write, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert done.returncode == 141
    assert done.stderr == ""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param(f"$SUDOKUPOOL grade {EASY} >&-", "standard output is closed", id="stdout"),
        pytest.param("$SUDOKUPOOL settings >&-", "standard output is closed", id="stdout-print"),
        pytest.param("$SUDOKUPOOL grade --file - <&-", "standard input is closed", id="stdin"),
    ],
)
def test_a_closed_standard_stream_is_one_line(line: str, message: str) -> None:
    done = _shell(line)
    assert done.returncode == 2
    assert done.stderr == f"sudokupool: {message}\n"


def _processes() -> dict[int, tuple[int, int]]:
    """Every process: pid -> (parent pid, process group)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            out[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return out


#: Commands that run for minutes (in two worker processes).
LONG = {
    "grade": ["grade", "--file", "big.txt"],
    "build": ["build", "--out", "d", "--count", "1000000000"],
}


@pytest.mark.slow
@pytest.mark.parametrize("command", ["grade", "build"])
@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [
        pytest.param(signal.SIGINT, 130, "interrupted", id="ctrl-c"),
        pytest.param(signal.SIGTERM, 143, "stopped by SIGTERM", id="sigterm"),
    ],
)
def test_a_signal_stops_the_command_and_its_workers(
    tmp_path: Path, command: str, signum: signal.Signals, code: int, said: str
) -> None:
    (tmp_path / "big.txt").write_text(f"{HARD}\n" * 50_000)  # a minute of work: the signal always comes first
    (tmp_path / "d").mkdir()
    proc = subprocess.Popen(
        [*SUDOKUPOOL, *LONG[command], "--jobs", "2"],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a shell gives a job
        # A job started in the background (as CI may run this suite) inherits SIGINT ignored, and Python then
        # leaves it so; a terminal's foreground job, which Ctrl-C reaches, has the default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        # Signal once both workers exist, the moment that used to print a traceback from every process.
        deadline = time.monotonic() + 30
        while sum(parent == proc.pid for parent, _ in _processes().values()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)  # Ctrl-C reaches every process of the foreground job
        else:
            proc.send_signal(signum)  # as `kill PID` does
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == code
    assert err.splitlines()[-1] == f"sudokupool {command}: {said}"
    assert "Traceback" not in err
    assert [pid for pid, (_, group) in _processes().items() if group == proc.pid] == []  # no orphaned worker
    assert list((tmp_path / "d").iterdir()) == []


def test_an_oserror_the_command_left_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refused(args: object) -> int:
        raise PermissionError(13, "Permission denied", "x")

    monkeypatch.setattr(settings, "run", refused)
    assert main(["settings"]) == 1
    assert capsys.readouterr().err == "sudokupool settings: [Errno 13] Permission denied: 'x'\n"


def test_one_version_the_packages_in_version_and_in_what_builds_make(capsys: pytest.CaptureFixture[str]) -> None:
    import gzip
    import importlib.metadata

    import orjson

    from sudokupool import __version__
    from sudokupool.config import BUNDLED_SNAPSHOTS
    from sudokupool.exporting.build import SOURCE

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"sudokupool {__version__}\n"
    assert importlib.metadata.version("sudokupool") == __version__
    assert f"sudokupool-build/{__version__}" == SOURCE
    # The demo pool was built by this version: its records say so truthfully.
    [demo] = BUNDLED_SNAPSHOTS.glob("pool-*.ndjson.gz")
    with gzip.open(demo) as lines:
        assert {orjson.loads(line)["source"] for line in lines} == {SOURCE}


@pytest.mark.parametrize(
    ("count", "noun", "words"),
    [
        pytest.param(0, "bad line", "0 bad lines", id="none"),
        pytest.param(1, "bad line", "1 bad line", id="one"),
        pytest.param(2, "duplicate", "2 duplicates", id="two"),
        pytest.param(12_345, "puzzle", "12,345 puzzles", id="thousands"),
    ],
)
def test_counts_take_the_noun_in_their_number(count: int, noun: str, words: str) -> None:
    from sudokupool.logs import counted

    assert counted(count, noun) == words


def test_one_bad_line_is_said_in_the_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.factories import make_records, write_export

    path = write_export(tmp_path / "pool-20260101T000000Z.ndjson", make_records(1), extra_lines=(b"garbage",))
    assert main(["check", str(path), "--fast"]) == 1
    out, err = capsys.readouterr()
    assert "line 2: invalid-json" in out
    assert ": 1 bad line of 2 read, more than SUDOKUPOOL_MAX_BAD_LINES=0.1% allows" in err
    assert main(["check", str(path), "--fast", "--max-bad-lines", "1"]) == 0
    assert "loaded 1 puzzle, skipped 1 (invalid-json 1)" in capsys.readouterr().out


def _subcommands(parser: object, path: tuple[str, ...] = ()) -> list[tuple[str, object]]:
    import argparse

    found = []
    for action in getattr(parser, "_actions", []):
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((" ".join((*path, name)), sub))
                found += _subcommands(sub, (*path, name))
    return found


def test_every_subcommands_own_help_opens_with_a_description(capsys: pytest.CaptureFixture[str]) -> None:
    from sudokupool.cli import build_parser

    found = _subcommands(build_parser())
    assert {name for name, _ in found} >= {"serve", "check", "pack", "publish", "settings", "keys new", "keys check"}
    for name, sub in found:
        with pytest.raises(SystemExit):
            main([*name.split(), "--help"])
        usage, _, rest = capsys.readouterr().out.partition("\n\n")
        assert usage.startswith(f"usage: sudokupool {name}"), name
        first = rest.splitlines()[0]
        assert first not in ("options:", "positional arguments:"), f"sudokupool {name} --help has no description"
        assert getattr(sub, "description", None), name
