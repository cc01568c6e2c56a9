"""Boot time and private memory of the service on a pool with its pack, from a local directory or from S3.

    python bench/boot.py [--pool 1m] [--workers 2] [--rounds 3] [--source local|s3|both]

Each round starts the service as the Procfile does (``sudokupool serve``, ``WEB_CONCURRENCY=N``, the
server ``SUDOKUPOOL_SERVER`` names) and times it from process start until every worker has logged its
load and ``/api/v1/health`` answers 200 (the first worker to answer would flatter a multi-worker boot).
Then it sends a few seconds of v2 random and by-id requests (wrk) so every worker touches its pool, and
reads each child process's ``/proc/PID/smaps_rollup``: USS (the ``Private_*`` lines: what stopping that
worker alone would give back), PSS and RSS.

``--baseline REV`` compares with an earlier commit side by side (local source only): the export is linked
into two temporary directories, one gets this checkout's pack and the other the baseline's
(``sudokupool pack`` run from a temporary worktree of REV: packs of another format version are
refused), and the rounds alternate between this checkout and the baseline, each served from its own
pack. This checkout also takes a second each of :data:`CHOOSING` (the technique catalogue, filtered
random, the daily) before its memory is read.

``s3`` starts a real SeaweedFS (``tests/seaweed.py``), uploads the export and its pack, and points the
service at it with a fresh ``SUDOKUPOOL_CACHE_DIR`` per round, so every round downloads the pack
(the workers share one download: the first takes the cache's lock, the others map its file). The
pool needs its pack first: ``sudokupool pack bench/pools/<pool>/pool-*.ndjson.gz``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Final

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent)]

from harness import KEY, OUT, digest, latest_export, pool_dir  # noqa: E402
from load import sample_ids  # noqa: E402
from servers import free_port  # noqa: E402


def smaps(pid: int) -> dict[str, int]:
    """USS, PSS and RSS of ``pid`` in MB, from /proc/PID/smaps_rollup."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        values[name] = int(rest.split()[0])
    uss = sum(v for k, v in values.items() if k.startswith("Private_"))
    return {"uss_mb": uss // 1024, "pss_mb": values["Pss"] // 1024, "rss_mb": values["Rss"] // 1024}


def children(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(p) for p in found]


#: Paths only this checkout has, loaded after the others in a ``--baseline`` run: its private memory is
#: then read with the filters' plans and the technique catalogue made.
CHOOSING: Final = (
    "/api/v2/techniques",
    "/api/v2/puzzles/random?stars=3",
    "/api/v2/puzzles/random?technique=X-Wing&min_score=1000&max_score=1500",
    "/api/v2/puzzles/daily",
)


def boot(
    env: dict[str, str], workers: int, log: Path, ids: Path, seconds: float, extra: tuple[str, ...] = ()
) -> dict[str, Any]:
    port = free_port()
    # The Procfile's line, on a loopback port: the configured server (SUDOKUPOOL_SERVER) and its settings.
    argv = [sys.executable, "-m", "sudokupool", "serve", "--host", "127.0.0.1", "--port", str(port)]
    started = time.perf_counter()
    with log.open("wb") as out:
        env = {**os.environ, **env, "WEB_CONCURRENCY": str(workers)}
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        ready = None
        while time.perf_counter() - started < 600:
            if process.poll() is not None:
                raise RuntimeError(f"the service exited with {process.returncode}; see {log}")
            loads = len(re.findall(r"loaded \d+ puzzles", log.read_text(errors="replace")))
            if loads >= workers:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health", timeout=2) as response:
                        if response.status == 200:
                            ready = time.perf_counter() - started
                            break
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass
            time.sleep(0.02)
        if ready is None:
            raise RuntimeError(f"not ready in 600 s; see {log}")
        text = log.read_text(errors="replace")
        load_seconds = [float(s) for s in re.findall(r"loaded \d+ puzzles.* in ([0-9.]+) s", text)]
        base = f"http://127.0.0.1:{port}"
        for path in ("/api/v2/puzzles/random", "/api/v2/puzzles/{id}", *extra):
            script = BENCH / "random_ids.lua"
            length = seconds if path in ("/api/v2/puzzles/random", "/api/v2/puzzles/{id}") else 1
            wrk = ["wrk", "-t1", "-c16", f"-d{length:g}s", "-H", f"X-API-Key: {KEY}"]
            wrk += ["-s", str(script), base, "--", str(ids) if "{id}" in path else "-", path]
            subprocess.run(wrk, check=True, capture_output=True)
        memory = [smaps(pid) for pid in children(process.pid)]
        return {
            "ready_s": round(ready, 2),
            "load_s": load_seconds,
            "workers": memory,
            "packed": "from its pack" in text,
        }
    finally:
        process.terminate()
        process.wait(30)


def pack_of(export: Path) -> Path:
    """The pack beside ``export``; exit with the command that makes it when there is none."""
    pack = export.with_name(export.name.removesuffix(".gz").removesuffix(".ndjson") + ".pack")
    if not pack.exists():
        raise SystemExit(f"no pack beside {export}: run sudokupool pack {export}")
    return pack


def seaweed(export: Path, pack: Path, workdir: Path) -> tuple[Any, str]:
    from tests.seaweed import SeaweedS3

    server = SeaweedS3(workdir)
    server.start()
    try:
        bucket = server.new_bucket()
        client = server.client()
        for path in (pack, export):  # the pack first, as publish uploads them
            with path.open("rb") as body:
                client.put_object(Bucket=bucket, Key=f"exports/{path.name}", Body=body)
    except BaseException:
        server.stop()
        raise
    return server, f"s3://{bucket}/exports/"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", default="1m")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0, help="of requests before memory is read")
    parser.add_argument("--source", choices=("local", "s3", "both"), default="both")
    parser.add_argument("--baseline", help="git revision to compare with, side by side (local source only)")
    args = parser.parse_args(argv)
    if args.baseline:
        return compare(args)
    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    export = latest_export(directory)
    pack = pack_of(export)
    ids = sample_ids(export, OUT / f"ids-{directory.name}.txt")
    base_env = {"SUDOKUPOOL_API_KEYS": digest(KEY), "SUDOKUPOOL_LIMIT_KEYED": "1000000000",
                "SUDOKUPOOL_SYNC_INTERVAL": "0"}  # fmt: skip
    sources = ["local", "s3"] if args.source == "both" else [args.source]
    results: dict[str, list[dict[str, Any]]] = {source: [] for source in sources}
    with tempfile.TemporaryDirectory(prefix="sudokupool-boot-") as tmp:
        server = None
        try:
            url = ""
            if "s3" in sources:
                server, url = seaweed(export, pack, Path(tmp) / "seaweed")
            for n in range(args.rounds):
                for source in sources:  # interleaved, so drift on the shared machine hits both
                    env = dict(base_env)
                    if source == "local":
                        env["SUDOKUPOOL_EXPORTS"] = str(directory)
                    else:
                        assert server is not None
                        cache = Path(tmp) / f"cache-{n}"
                        env |= server.environ() | {"SUDOKUPOOL_EXPORTS": url, "SUDOKUPOOL_CACHE_DIR": str(cache),
                                                   "SUDOKUPOOL_S3_ENDPOINT_URL": server.endpoint_url}  # fmt: skip
                    found = boot(env, args.workers, OUT / f"boot-{source}.log", ids, args.seconds)
                    results[source].append(found)
                    print(source, n + 1, json.dumps(found), flush=True)
        finally:
            if server is not None:
                server.stop()
    print(f"pool {directory.name}, {args.workers} workers, {args.rounds} rounds (medians)")
    for source, runs in results.items():
        ready = statistics.median(r["ready_s"] for r in runs)
        uss = statistics.median(max(w["uss_mb"] for w in r["workers"]) for r in runs)
        pss = statistics.median(max(w["pss_mb"] for w in r["workers"]) for r in runs)
        print(f"  {source:6s} ready {ready:6.2f} s  worst worker USS {uss} MB  PSS {pss} MB  "
              f"packed {all(r['packed'] for r in runs)}")  # fmt: skip
    return 0


def compare(args: argparse.Namespace) -> int:
    """Boot and memory of this checkout and of ``args.baseline``, each from its own pack, rounds alternating."""
    from harness import baseline_tree

    OUT.mkdir(exist_ok=True)
    directory = pool_dir(args.pool)
    export = latest_export(directory)
    pack_of(export)
    ids = sample_ids(export, OUT / f"ids-{directory.name}.txt")
    env = {"SUDOKUPOOL_API_KEYS": digest(KEY), "SUDOKUPOOL_LIMIT_KEYED": "1000000000", "SUDOKUPOOL_SYNC_INTERVAL": "0"}
    results: dict[str, list[dict[str, Any]]] = {"this": [], "baseline": []}
    with baseline_tree(args.baseline) as tree, tempfile.TemporaryDirectory(prefix="sudokupool-boot-") as tmp:
        # Both packs made here, one after the other, the same way: a pack written an hour ago and read by
        # other jobs since can sit in the page cache in a state that takes half as long again to check
        # (0.073 against 0.052 s of CPU for one 745 MB pack and its fresh copy, same code).
        places = {}
        for name, source in (("this", None), ("baseline", tree / "src")):
            place = places[name] = Path(tmp) / name
            place.mkdir()
            os.link(export, place / export.name)
            made = {**os.environ, "SUDOKUPOOL_MAX_EXPORT_BYTES": str(1 << 40)}
            if source is not None:
                made["PYTHONPATH"] = str(source)
            subprocess.run([sys.executable, "-m", "sudokupool", "pack", str(place / export.name)], env=made,
                           check=True)  # fmt: skip
        setups = {
            "this": {**env, "SUDOKUPOOL_EXPORTS": str(places["this"])},
            "baseline": {**env, "SUDOKUPOOL_EXPORTS": str(places["baseline"]), "PYTHONPATH": str(tree / "src")},
        }
        # A boot of each first, not counted: the first boot after the packs are made is slower, whichever it is.
        for name in ("this", "baseline"):
            boot(setups[name], args.workers, OUT / f"boot-{name}.log", ids, 1.0)
        for n in range(args.rounds):
            for name in ["this", "baseline"] if n % 2 == 0 else ["baseline", "this"]:
                extra = CHOOSING if name == "this" else ()
                found = boot(setups[name], args.workers, OUT / f"boot-{name}.log", ids, args.seconds, extra)
                results[name].append(found)
                print(name, n + 1, json.dumps(found), flush=True)
    print(f"pool {directory.name}, {args.workers} workers, {args.rounds} rounds (medians), baseline {args.baseline}")
    medians: dict[str, tuple[float, float, float]] = {}
    for name, runs in results.items():
        ready = statistics.median(r["ready_s"] for r in runs)
        uss = statistics.median(max(w["uss_mb"] for w in r["workers"]) for r in runs)
        pss = statistics.median(max(w["pss_mb"] for w in r["workers"]) for r in runs)
        medians[name] = (ready, uss, pss)
        print(f"  {name:8s} ready {ready:6.2f} s  worst worker USS {uss} MB  PSS {pss} MB  "
              f"packed {all(r['packed'] for r in runs)}")  # fmt: skip
    (ready, uss, pss), (base_ready, base_uss, base_pss) = medians["this"], medians["baseline"]
    print(f"  ratio    ready {ready / base_ready:.3f}  USS {uss / base_uss:.3f}  PSS {pss / base_pss:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
