"""``python -m bench harness``: the service against the bare app and its peers on one pool, with its memory,
boot, CPU per request and a pack swap under load; writes bench/out/<timestamp>.json and prints the tables of
docs/benchmarks.md."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import harness, peers
from bench import service as measures
from bench.child import KEY
from bench.harness import (
    OUT,
    ROOT,
    Target,
    bare,
    body_size,
    latest_export,
    machine,
    memory,
    options,
    pool_dir,
    pool_ids,
    wrk,
)
from support.servers import Server, get, proc_status, redis_outages

HEADERS_ONLY = "v2 random, limit headers only (nothing counted)"
REDIS_RANDOM = "v2 random (Redis limiter)"


def targets(svc: Server, baselines: dict[str, Server], ids: Path, images: Path, redis: Server | None) -> list[Target]:
    key = {"X-API-Key": KEY}
    gzip_key = {**key, "Accept-Encoding": "gzip"}
    # Clients that take gzip (browsers, requests, httpx, curl --compressed) get the member as held.
    found = [
        Target("bare ASGI app", baselines["bare"].base, "/"),
        Target("bare ASGI app, service's headers", baselines["bare+headers"].base, "/"),
        Target("v2 random", svc.base, "/api/v2/puzzles/random", key),
        Target("v2 random?difficulty=hard", svc.base, "/api/v2/puzzles/random?difficulty=hard", key),
        Target("v2 by id", svc.base, "/api/v2/puzzles/{id}", key, ids),
        Target("v2 random (gzip client)", svc.base, "/api/v2/puzzles/random", gzip_key),
        Target("v2 by id (gzip client)", svc.base, "/api/v2/puzzles/{id}", gzip_key, ids),
        Target("v2 solution", svc.base, "/api/v2/puzzles/{id}/solution", key, ids),
        Target("v2 404", svc.base, "/api/v2/puzzles/0000000000000", key),
        Target("v1 random", svc.base, "/api/v1/puzzles/random"),
        Target("v1 by id", svc.base, "/api/v1/puzzles/{id}", ids=ids),
        # The spec's limit headers on v2 with nothing counted: between v1 and v2.
        Target(HEADERS_ONLY, baselines["fixed headers"].base, "/api/v2/puzzles/random", key),
    ]
    if redis is not None:
        found.append(Target(REDIS_RANDOM, redis.base, "/api/v2/puzzles/random", key))
        found.append(Target("v2 by id (Redis limiter)", redis.base, "/api/v2/puzzles/{id}", key, ids))
    found.append(Target("v2 image (cached)", svc.base, "/api/v2/puzzles/{id}/image", key, images))
    if "datasette" in baselines:
        found.append(Target("datasette random", baselines["datasette"].base, peers.RANDOM))
        found.append(Target("datasette by id", baselines["datasette"].base, peers.BY_ID, ids=ids))
    return found


def profile(svc: Server, target: Target, *, seconds: int, connections: int, out: Path) -> dict[str, Any]:
    """py-spy on the service while wrk loads ``target``: the top functions by own and total samples."""
    spy = shutil.which("py-spy")
    if spy is None:
        return {"error": "py-spy not installed (pip install py-spy)"}
    raw = out.with_suffix(".txt")
    argv = [spy, "record", "-p", str(svc.pid), "-d", str(seconds), "-r", "250", "-f", "raw", "-o", str(raw)]
    recorder = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    wrk(target, seconds=seconds, connections=connections)
    recorder.wait()
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [re.sub(r" \(.*?/(site-packages|src)/", " (", f) for f in stack.split(";")]
        own[frames[-1]] += int(count)
        for frame in set(frames):
            total[frame] += int(count)
    samples = own.total()
    return {
        "target": target.name,
        "samples": samples,
        "own": [(f, round(100 * n / samples, 1)) for f, n in own.most_common(15)],
        "total": [(f, round(100 * n / samples, 1)) for f, n in total.most_common(25)],
        "raw": str(raw),
    }


def table(results: dict[str, Any]) -> str:
    found = results["throughput"]
    bare_rps = found.get("bare ASGI app", {}).get("rps")
    lines = ["| target | req/s (median) | min-max | p50 ms | p99 ms | × bare ASGI |", "|---|---:|---:|---:|---:|---:|"]
    for name, s in found.items():
        note = f" ({s['status_errors']} non-2xx)" if s["status_errors"] and "404" not in name else ""
        ratio = f"{s['rps'] / bare_rps:.2f}" if bare_rps else "-"
        lines.append(f"| {name}{note} | {s['rps']:,} | {s['rps_min']:,}-{s['rps_max']:,} | {s['p50_ms']} "
                     f"| {s['p99_ms']} | {ratio} |")  # fmt: skip
    if "v1 random" in found and HEADERS_ONLY in found:
        v1 = found["v1 random"]["rps"]
        lines.append(f"\nAgainst v1 random (no limiter): v2 random {found['v2 random']['rps'] / v1:.2f}x, "
                     f"the limit headers alone {found[HEADERS_ONLY]['rps'] / v1:.2f}x.")  # fmt: skip
    if REDIS_RANDOM in found and "v2 random" in found:
        ratio = found[REDIS_RANDOM]["rps"] / found["v2 random"]["rps"]
        lines.append(f"\nv2 random with the Redis limiter: {ratio:.2f}x the in-process limiter "
                     f"({results.get('redis_outages', 0)} Redis outages).")  # fmt: skip
    return "\n".join(lines)


def harness_main(argv: list[str] | None = None) -> int:
    """Throughput, startup, memory and swap of the service, against the stack's limit and a real peer.

    One run on loopback, every figure a ratio to a baseline of the same run. It makes the pools if missing, then:
    1. memory: each pool loaded in a fresh process: load time, RSS steady and peak, bytes served;
    2. starts the service as the Procfile does, its limiter counting every request but never tripping; the bare ASGI
       app (bench/peers.py) with the service's median body, and again with the service's headers; the service with
       the limit headers and no counting; Datasette over the pool; ``--redis``: the service with its limiter in a
       local valkey-server too;
    3. wrk on each target (``--targets``: those named) in rotated rounds: median req/s, p50/p99, the ratio to the
       bare app; ``--profile``: py-spy on v2 by id and random;
    4. server CPU per request on the demo pool (python -m bench cpu-per-request), unless ``--no-cpu``;
    5. python -m bench swap-pack's swap test, one round of ``--swap-seconds`` windows, unless ``--no-swap``;
    6. writes bench/out/<timestamp>.json and prints the markdown tables of docs/benchmarks.md.
    """
    parser = options(harness_main.__doc__, pool="100k", rounds=5, seconds=5.0, connections=True)
    parser.add_argument("--memory-pools", default="", help="comma-separated extra pools to measure memory of")
    parser.add_argument("--swap-seconds", type=float, default=30.0)
    parser.add_argument("--no-datasette", action="store_true")
    parser.add_argument("--no-swap", action="store_true")
    parser.add_argument("--no-cpu", action="store_true", help="skip server CPU per request")
    parser.add_argument("--profile", action="store_true", help="py-spy the service under v2 by id and random")
    parser.add_argument("--redis", action="store_true", help="also the service with its limiter in a local valkey")
    parser.add_argument("--targets", default="", help="comma-separated target names to load (default: all)")
    args = parser.parse_args(argv)

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    directory = pool_dir(args.pool)
    results: dict[str, Any] = {"machine": machine(), "pool": str(latest_export(directory)), "memory": {}}
    for name in [args.pool, *filter(None, args.memory_pools.split(","))]:
        results["memory"][name] = memory(pool_dir(name))
        print(f"memory of {name}, loaded in a fresh process: {results['memory'][name]}")
    ids = pool_ids(directory)
    with contextlib.ExitStack() as stack:
        redis = None
        if args.redis:
            url = stack.enter_context(harness.valkey()).url
            redis = stack.enter_context(harness.service(directory, OUT / "service-redis.log", redis_url=url))
        svc = stack.enter_context(harness.service(directory, OUT / "service.log"))
        loaded = measures.LOADED.findall((OUT / "service.log").read_text(errors="replace"))
        results["startup"] = {"ready_seconds": round(svc.ready_seconds, 2), "load_seconds": float(loaded[-1])}
        results["body_size"] = size = body_size(svc)
        print(f"service ready in {svc.ready_seconds:.1f} s; body {size} bytes")
        cid = ids.read_text().split()[0]
        # The headers of a v2 by-id answer but those the server adds itself or the bare app computes.
        own = {"content-length", "date", "server", "connection"}
        answer = get(svc.base + f"/api/v2/puzzles/{cid}", {"X-API-Key": KEY})[1]
        results["service_headers"] = [[k.lower(), v] for k, v in answer.items() if k.lower() not in own]
        baselines = {
            "bare": bare("bare", OUT / "bare.log", size),
            "bare+headers": bare(
                "bare+headers", OUT / "bare-headers.log", size, json.dumps(results["service_headers"])
            ),
            "fixed headers": harness.service(directory, OUT / "fixed-headers.log", app="bench.peers:fixed_headers_app"),
        }
        if not args.no_datasette:
            baselines["datasette"] = peers.datasette_server(latest_export(directory), OUT / "datasette.log")
        for server in baselines.values():
            stack.enter_context(server)
        # A small set, each fetched once, so the load hits the render cache (the "cached" image).
        images = OUT / "image-ids.txt"
        images.write_text("\n".join(ids.read_text().split()[:50]) + "\n")
        for cid in images.read_text().split():
            get(svc.base + f"/api/v2/puzzles/{cid}/image", {"X-API-Key": KEY})
        found = targets(svc, baselines, ids, images, redis)
        if args.targets:
            found = [t for t in found if t.name in args.targets.split(",")]
        results["throughput"] = harness.rounds(
            found, count=args.rounds, seconds=args.seconds, connections=args.connections, strict=False
        )
        results["service_rss"] = proc_status(svc.pid)
        if redis is not None:
            results["redis_outages"] = redis_outages(redis)  # requests answered without Redis: there should be none
        for target in (t for t in found if args.profile and t.name in ("v2 by id", "v2 random")):
            out = OUT / ("profile-" + re.sub(r"\W+", "-", target.name))
            found_profile = profile(svc, target, seconds=10, connections=args.connections, out=out)
            results.setdefault("profile", []).append(found_profile)
    if not args.no_cpu:
        print("server CPU per request (demo pool)")
        results["cpu_per_request"] = measures.cpu_per_request(str(ROOT / "snapshots"), count=3, seconds=5)
    if not args.no_swap:
        print(f"swap: reloading {directory.name} under load")
        results["swap"] = measures.swap_pack(directory, ids, rounds=1, seconds=args.swap_seconds)
    path = OUT / f"{stamp}.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"\n{table(results)}\n\nresults: {path}")
    return 0
