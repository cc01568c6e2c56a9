"""Load generation: wrk (Debian's package) with bench/random_ids.lua, from a separate process."""

from __future__ import annotations

import gzip
import json
import random
import shutil
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
LUA = BENCH / "random_ids.lua"


@dataclass(frozen=True)
class Target:
    """One thing to load: a server's base URL, a path (``{id}`` is replaced by a random id), headers."""

    name: str
    base: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    ids: Path | None = None
    group: str = ""


@dataclass
class Run:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int
    status_errors: int

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


def wrk(target: Target, *, seconds: float, connections: int, threads: int = 1, pause_ms: int = 0) -> Run:
    """One wrk run against ``target``; raise when wrk is missing or fails.

    ``pause_ms`` above 0 paces the load: each connection waits that long after an answer before its next
    request (wrk's ``delay()``), so the server runs below saturation."""
    exe = shutil.which("wrk")
    if exe is None:
        raise RuntimeError("wrk is not installed: apt-get install -y wrk")
    argv = [exe, f"-t{threads}", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "10s", "-s", str(LUA)]
    for name, value in target.headers.items():
        argv += ["-H", f"{name}: {value}"]
    argv += [target.base, "--", str(target.ids) if target.ids else "-", target.path, str(pause_ms)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    errors = sum(summary[k] for k in ("connect_errors", "read_errors", "write_errors", "timeouts"))
    return Run(
        requests=summary["requests"],
        seconds=summary["duration_us"] / 1e6,
        p50_ms=summary["p50_us"] / 1000,
        p99_ms=summary["p99_us"] / 1000,
        errors=errors,
        status_errors=summary["status_errors"],
    )


def summarize(runs: list[Run]) -> dict[str, float]:
    """Median req/s, p50 and p99 over rounds, with the spread of req/s."""
    rates = [r.rps for r in runs]
    return {
        "rps": round(statistics.median(rates)),
        "rps_min": round(min(rates)),
        "rps_max": round(max(rates)),
        "p50_ms": round(statistics.median(r.p50_ms for r in runs), 2),
        "p99_ms": round(statistics.median(r.p99_ms for r in runs), 2),
        "errors": sum(r.errors for r in runs),
        "status_errors": sum(r.status_errors for r in runs),
        "rounds": len(runs),
    }


def sample_ids(export: Path, out: Path, *, count: int = 20000, seed: int = 7) -> Path:
    """Write ``count`` ids drawn uniformly (reservoir sampling) from ``export`` to ``out``, one a line."""
    rng = random.Random(seed)
    chosen: list[str] = []
    prefix = b'{"canonical_id":"'
    with gzip.open(export, "rb") as handle:
        for n, line in enumerate(handle):
            if not line.startswith(prefix):
                continue
            cid = line[len(prefix) : len(prefix) + 13].decode()
            if len(chosen) < count:
                chosen.append(cid)
            else:
                k = rng.randrange(n + 1)
                if k < count:
                    chosen[k] = cid
    out.write_text("\n".join(chosen) + "\n")
    return out
