"""``python -m bench COMMAND [ARGS]``: the benchmark commands, each a function of a bench module.

``python -m bench ab TARGET BASELINE ...`` is the one side-by-side runner (``python -m bench ab --help`` lists
its targets). Run from the repository root; figures go to bench/out/.
"""

from __future__ import annotations

import importlib
import sys

#: command -> (module, entry function, one line of help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "ab": ("ab", "main", "this checkout against BASELINE side by side: python -m bench ab TARGET BASELINE"),
    "harness": ("overview", "harness_main", "the service against the bare app and its peers, with its pools"),
    "make-pool": ("pools", "make_pool_main", "make a synthetic benchmark pool under bench/pools/"),
    "boot": ("service", "boot_main", "boot time and memory of the service on a pool, local or S3"),
    "connections": ("service", "connections_main", "the service under many idle and slow connections"),
    "cpu-per-request": ("service", "cpu_per_request_main", "server CPU per request, by path"),
    "server-choice": ("service", "server_choice_main", "uvicorn against other ASGI servers"),
    "redis-capacity": ("service", "redis_capacity_main", "the Redis limiter store's capacity"),
    "swap-pack": ("service", "swap_pack_main", "p99 while the service swaps packs back to back"),
    "filters": ("service", "filters_main", "filtered random against plain random on one service"),
    "sets": ("service", "sets_main", "a set of 10 or 50 with a seed against 10 random calls, beside a baseline"),
    "images": ("service", "images_main", "image answers through the service, and the render cache under a flood"),
    "flood-parts": ("work", "flood_parts_main", "v2 random beside the image flood's renders, its lookups, and both"),
    "scrape-cost": ("work", "scrape_cost_main", "a metrics scrape's CPU, and v2 random while scrapes run back to back"),
    "engine": ("engine", "engine_main", "grid lookups and live grades through the service; the canonical form"),
    "app-cost": ("inprocess", "app_cost_main", "the app's CPU per request in process"),
    "collector": ("inprocess", "collector_main", "a full garbage collection's pause in a started worker"),
    "limiter": ("inprocess", "limiter_main", "the rate limiter's memory and per-request cost"),
    "protocol-cost": ("inprocess", "protocol_cost_main", "the uvicorn protocol's CPU per request in process"),
    "grader": ("grading", "bench_grader_main", "the grader on puzzle files: levels, scores, HoDoKu agreement"),
    "grade-dump": ("grading", "grade_dump_main", "grade a puzzle file to JSON lines"),
    "scale-figures": ("grading", "scale_figures_main", "the score scale's figures against a reference rating"),
    "se-like": ("se_rating", "se_like_main", "a Sudoku-Explainer-like rating by a second solve against SE ratings"),
    "build-yield": ("build", "build_yield_main", "how many generated puzzles a build keeps, by level"),
    "build-memory": ("build", "build_memory_main", "peak RSS of sudokupool build"),
    "parse-steps": ("parsing", "parse_steps_main", "the CPU of each step of parsing an export"),
    "image": (
        "image",
        "image_main",
        "the container image: size, start to healthy, memory and req/s per worker count",
    ),
    "hostile-exports": ("hostile", "hostile_exports_main", "hostile exports against check and serve"),
}


def usage() -> str:
    lines = ["usage: python -m bench COMMAND [ARGS] (COMMAND --help for its own)", "", "commands:"]
    lines += [f"  {name:16} {text}" for name, (_, _, text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(usage(), file=sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    module, entry, _ = COMMANDS[argv[0]]
    # Each command parses sys.argv as its own script did, under its new name.
    sys.argv = [f"python -m bench {argv[0]}", *argv[1:]]
    result = getattr(importlib.import_module(f"bench.{module}"), entry)()
    return int(result or 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
