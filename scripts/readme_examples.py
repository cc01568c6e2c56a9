#!/usr/bin/env python3
"""Produce the README's "Try it" examples from a real server, or check that the README still matches.

    python scripts/readme_examples.py           # rewrite the block in README.md
    python scripts/readme_examples.py --check   # exit 1, with a diff, when README.md is out of date

Both start ``sudokupool serve`` on the demo pool (no ``SUDOKUPOOL_EXPORTS``), as the README's set-up
does, on a free loopback port, and run every command of :data:`COMMANDS` with ``curl`` in a fresh
server's order (the activity counters and the rate-limit headers depend on it). The README shows them
against ``localhost:8000``; the block lies between the ``try-it`` HTML comments.

The shortening rule (:func:`shorten`): in a JSON answer, an array of more than three items keeps its
first item, then ``...``. The volatile rule (:func:`mask`): values that change from run to run (the
times and ages in :data:`VOLATILE`, the ``date`` header and the rate-limit headers' remaining and reset) are
shown as the generating run saw them and compared as ``…``. The random picks (:data:`PICKS`) are random:
the README shows one each, and ``--check`` compares each with that puzzle fetched by its id (and checks
that a random pick now has the same fields, and the README's pick passes the filters); the commands
after the first use its id.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
START = "<!-- try-it:start (made by scripts/readme_examples.py; do not edit by hand) -->"
END = "<!-- try-it:end -->"
SHOWN = "localhost:8000"
ID = "{id}"

#: (command as the README shows it, with ``{id}`` for the random pick's share code; comment)
COMMANDS: list[tuple[str, str]] = [
    ("curl -s localhost:8000/api/v2/stats", ""),
    ("curl -s 'localhost:8000/api/v2/puzzles/random?difficulty=expert'", ""),
    ("curl -s localhost:8000/api/v2/puzzles/{id_lower}/solution", "codes are case-insensitive"),
    ("curl -s --compressed -o /dev/null -w '%{{size_download}} bytes\\n' localhost:8000/api/v2/puzzles/{id}", "gzip"),
    ("curl -s -o /dev/null -w '%{{size_download}} bytes\\n' localhost:8000/api/v2/puzzles/{id}", "inflated"),
    ("curl -s -i localhost:8000/api/v2/puzzles/NOPE", ""),
    ("curl -s 'localhost:8000/api/v2/puzzles/random?difficulty=x'", ""),
    ("curl -s 'localhost:8000/api/v2/puzzles/random?technique=x-wing&stars=3'", "practise a technique"),
    ("curl -s localhost:8000/api/v2/techniques", "the catalogue"),
    ("curl -s 'localhost:8000/api/v2/puzzles/daily?date=2026-11-25'", "the same for everyone"),
    ("curl -s localhost:8000/api/v2/pool-exports", ""),
    ("curl -s localhost:8000/api/v2/stats/activity", ""),
    ("curl -s localhost:8000/api/v2/health", ""),
    ("curl -s 'localhost:8000/api/v2/puzzles?count=5&seed=42&max_clues=26'", "a set, in seed 42's order"),
    ("curl -s 'localhost:8000/api/v2/puzzles/daily/archive?from=2026-11-23&to=2026-11-25'", "past dailies"),
    ("curl -s -i 'localhost:8000/api/v2/puzzles/daily/image?date=2026-11-25&tz=Asia/Tokyo&format=svg'", "for <img>"),
    ("curl -s -I localhost:8000/api/v2/pool-exports/pool-20261126T041007Z.ndjson.gz", "download an export"),
    ("curl -s -o puzzle.png 'localhost:8000/api/v2/puzzles/{id}/image?variant=solution'", ""),
    ("curl -s localhost:8000/api/v2/openapi.json | head -c 60", ""),
]
RANDOM = 1
#: The random picks (the first gives ``{id}``): shown as the generating run saw them (see :func:`produce`).
PICKS = (RANDOM, 7)
COMMENT_COLUMN = 64
VOLATILE = (
    "loaded_at",
    "age_seconds",
    "export_age_seconds",
    "since",
    "uploaded",
    "last_attempt_at",
    "last_success_at",
    "last_error_at",
)


def shorten(value: Any) -> str:
    """Compact JSON as the service writes it, each array of more than three items cut to its first and ``...``."""
    if isinstance(value, dict):
        return "{" + ",".join(orjson.dumps(k).decode() + ":" + shorten(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        items = value[:1] if len(value) > 3 else value
        return "[" + ",".join([shorten(v) for v in items] + (["..."] if len(value) > 3 else [])) + "]"
    return orjson.dumps(value).decode()


def shorten_output(text: str) -> str:
    """Every line that is a JSON document shortened; other lines (headers, truncated output) as they are."""
    lines = []
    for line in text.replace("\r\n", "\n").rstrip("\n").split("\n"):
        try:
            lines.append(shorten(orjson.loads(line)) if line[:1] in "{[" else line)
        except orjson.JSONDecodeError:
            lines.append(line)
    return "\n".join(lines)


def mask(block: str) -> str:
    """The block with the values that change from run to run replaced by ``…``."""
    keys = "|".join(VOLATILE)
    block = re.sub(rf'"({keys})":(-?\d+|null|"[^"]*")', r'"\1":…', block)
    return re.sub(r"(?im)^(date|x-ratelimit-remaining|x-ratelimit-reset): .+$", r"\1: …", block)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def demo_server() -> Iterator[int]:
    """``sudokupool serve`` on the demo pool on a free port, until the block ends."""
    port = free_port()
    # The set-up's defaults: no setting of this shell's (one worker, so one instance's counters).
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("SUDOKUPOOL_") and k not in ("PORT", "WEB_CONCURRENCY")
    }
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "sudokupool", "serve", "--port", str(port)], env=env, stdout=log, stderr=log
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=2):
                        break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        log.seek(0)
                        raise SystemExit("sudokupool serve did not start:\n" + log.read().decode()) from None
                    time.sleep(0.2)
            yield port
        finally:
            server.terminate()
            server.wait(30)


def run(command: str, port: int, cwd: Path) -> bytes:
    """``command`` as a shell runs it, against the server on ``port``; its standard output."""
    real = command.replace(SHOWN, f"127.0.0.1:{port}")
    return subprocess.run(["bash", "-c", real], cwd=cwd, capture_output=True, check=True).stdout


def fetch(port: int, path: str) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as answer:
        body: bytes = answer.read()
        return body


def matches(record: dict[str, Any], command: str) -> bool:
    """Whether ``record`` passes the filters in the query of ``command`` (a random pick's)."""
    query = dict(parse_qsl(urlsplit(command.split("'")[1]).query))
    techniques = {name.lower() for name in record["techniques"]}
    return (
        record["difficulty"].lower() == query.get("difficulty", record["difficulty"]).lower()
        and ("technique" not in query or query["technique"].lower() in techniques)
        and str(record["stars"]) == query.get("stars", str(record["stars"]))
    )


def produce(port: int, picked: dict[int, str] | None = None) -> str:
    """The block: each command and what a fresh server answers, in order.

    Without ``picked`` the commands after the first random pick use its share code. With it (the share code
    of each of the README's picks, when checking), they use the first one's, and each pick's place shows
    that puzzle fetched by its id after the last command (so the counters shown are a fresh server's),
    once the fresh pick is checked to have the same fields and the README's to pass the pick's filters.
    """
    shown: list[str] = []
    outputs: list[bytes] = []
    puzzle_id = picked[RANDOM] if picked else None
    with tempfile.TemporaryDirectory() as work:
        for number, (template, comment) in enumerate(COMMANDS):
            command = template.format(id=puzzle_id, id_lower=(puzzle_id or "").lower())
            shown.append(f"{f'$ {command}'.ljust(COMMENT_COLUMN)}  # {comment}" if comment else f"$ {command}")
            outputs.append(run(command, port, Path(work)))
            if number == RANDOM and puzzle_id is None:
                puzzle_id = str(orjson.loads(outputs[-1])["canonical_id"])
        if not (Path(work) / "puzzle.png").read_bytes().startswith(b"\x89PNG"):
            raise SystemExit("the image example did not write a PNG")
    for number, code in (picked or {}).items():
        if code == orjson.loads(outputs[number])["canonical_id"]:
            continue
        known = fetch(port, f"/api/v1/puzzles/{code}")
        fields, expected = list(orjson.loads(outputs[number])), list(orjson.loads(known))
        if fields != expected:
            raise SystemExit(f"a random pick answers the fields {fields}, a puzzle by id {expected}")
        if not matches(orjson.loads(known), COMMANDS[number][0]):
            raise SystemExit(f"the README's pick {code} does not pass the filters of {COMMANDS[number][0]}")
        outputs[number] = known
    return "\n\n".join(
        command + ("\n" + shorten_output(output.decode()) if output else "")
        for command, output in zip(shown, outputs, strict=True)
    )


def current_block(text: str) -> str:
    """The README's block between the markers, without its code fence."""
    start, end = text.index(START) + len(START), text.index(END)
    lines = text[start:end].strip().split("\n")
    if lines[0] != "```console" or lines[-1] != "```":
        raise SystemExit(f"{README.name}: the try-it block is not one ```console fence")
    return "\n".join(lines[1:-1])


def readme_ids(block: str) -> dict[int, str]:
    """The share code of each of the README's random picks, by the pick's place."""
    ids = {}
    for number in PICKS:
        found = re.search(r'^\{"canonical_id":"([0-9A-Z]+)"', block.split("\n$ ")[number].split("\n", 1)[1], re.M)
        if found is None:
            raise SystemExit(f"{README.name}: no canonical_id in the example of {COMMANDS[number][0]}")
        ids[number] = found.group(1)
    return ids


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="compare README.md with a fresh server; change nothing")
    parser.add_argument("--readme", type=Path, default=README, help="the README to rewrite or check")
    args = parser.parse_args(argv)
    readme: Path = args.readme
    text = readme.read_text(encoding="utf-8")
    block = current_block(text)
    with demo_server() as port:
        fresh = produce(port, readme_ids(block) if args.check else None)
    if args.check:
        if mask(block) == mask(fresh):
            print(f"{README.name}: the try-it examples match the demo pool's server")
            return 0
        diff = difflib.unified_diff(
            mask(block).split("\n"), mask(fresh).split("\n"), "README.md", "a fresh server", lineterm=""
        )
        print("\n".join(diff))
        print(f"{README.name}: the try-it examples are out of date: run python scripts/readme_examples.py")
        return 1
    start, end = text.index(START) + len(START), text.index(END)
    readme.write_text(text[:start] + "\n```console\n" + fresh + "\n```\n" + text[end:], encoding="utf-8")
    print(f"{README.name}: try-it examples rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
