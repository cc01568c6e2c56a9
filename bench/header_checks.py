"""What uvicorn's per-header checks cost the limiter's headers: the service as it runs, against the same
service with uvicorn's two regular-expression checks of every response header name and value turned
off, side by side in one run.

    python bench/header_checks.py [--pool 100k] [--rounds 5] [--seconds 5]

An experiment for issue 4's item 12, never a way to serve: the checks stop a header with a line break
from reaching the wire. The second service gets a ``sitecustomize`` (in a temporary directory on its
``PYTHONPATH``) that replaces ``HEADER_RE`` and ``HEADER_VALUE_RE`` in uvicorn's httptools protocol by
an object whose ``search`` finds nothing. wrk alternates between v1 random (four response headers)
and v2 random with a key (seven) on both; the script prints the medians and the v2/v1 ratio of each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

from harness import KEY, OUT, pool_dir, service  # noqa: E402
from load import Target, wrk  # noqa: E402

SITECUSTOMIZE = """\
import types
import uvicorn.protocols.http.httptools_impl as httptools_impl
httptools_impl.HEADER_RE = httptools_impl.HEADER_VALUE_RE = types.SimpleNamespace(search={}.get)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default="100k")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    with tempfile.TemporaryDirectory(prefix="sudokupool-header-checks-") as tmp:
        Path(tmp, "sitecustomize.py").write_text(SITECUSTOMIZE)
        checked = service(directory, OUT / "header-checks-on.log")
        unchecked = service(directory, OUT / "header-checks-off.log")
        unchecked.env["PYTHONPATH"] = os.pathsep.join(filter(None, [tmp, os.environ.get("PYTHONPATH")]))
        checked.start()
        unchecked.start()
        key = {"X-API-Key": KEY}
        targets = [
            Target("checks on: v1 random", checked.base, "/api/v1/puzzles/random"),
            Target("checks on: v2 random", checked.base, "/api/v2/puzzles/random", key),
            Target("checks off: v1 random", unchecked.base, "/api/v1/puzzles/random"),
            Target("checks off: v2 random", unchecked.base, "/api/v2/puzzles/random", key),
        ]
        found: dict[str, list[float]] = {t.name: [] for t in targets}
        try:
            for target in targets:
                wrk(target, seconds=1, connections=32)
            for n in range(args.rounds):
                for target in targets[n % len(targets) :] + targets[: n % len(targets)]:
                    run = wrk(target, seconds=args.seconds, connections=32)
                    if run.errors or run.status_errors:
                        raise RuntimeError(f"{target.name}: {run.status_errors} non-2xx, {run.errors} errors")
                    found[target.name].append(run.rps)
        finally:
            checked.stop()
            unchecked.stop()
    medians = {name: statistics.median(runs) for name, runs in found.items()}
    print(f"pool {directory.name}, {args.rounds} rounds x {args.seconds:g} s, median req/s")
    for name, rps in medians.items():
        print(f"  {name:22s} {rps:9,.0f}")
    for state in ("on", "off"):
        ratio = medians[f"checks {state}: v2 random"] / medians[f"checks {state}: v1 random"]
        print(f"  checks {state}: v2/v1 {ratio:.3f}")
    for path in ("v1 random", "v2 random"):
        print(f"  {path}: off/on {medians[f'checks off: {path}'] / medians[f'checks on: {path}']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
