"""``sudokupool build``: generate, grade and deduplicate puzzles, and write a pool export.

The command checks its arguments and the output before any work, then runs
:func:`sudokupool.exporting.build.build`: a seed always yields the same puzzles in the same order whatever
``--jobs``. A ``--difficulty`` of one level steers generation toward it (``Order.steer``).
"""

from __future__ import annotations

import argparse
import math
import os
import secrets
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from sudokupool.commands import CommandError
from sudokupool.commands.output import Progress
from sudokupool.exporting.build import PARTIAL, Plan, build
from sudokupool.exporting.orders import Order, Shard, technique_name
from sudokupool.exporting.suggest import closest
from sudokupool.exporting.writer import export_limit_problem, prepare_output
from sudokupool.logs import counted
from sudokupool.pool.export import TAG_RULE, is_tag
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.generator import DEFAULT_SYMMETRY
from sudokupool.sudoku.symmetry import SYMMETRIES
from sudokupool.sudoku.technique_table import LEVEL

#: The variable a Kubernetes Indexed Job sets in each pod to its index: ``--shards`` takes the shard from it.
SHARD_VARIABLE = "JOB_COMPLETION_INDEX"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``build`` subcommand."""
    parser = subparsers.add_parser(
        "build",
        help="generate, grade and write a pool export",
        description=(
            "Generate unique-solution puzzles, grade them with the human-style grader, keep those it solves "
            "completely, drop duplicates by canonical form and write a pool export (docs/export-format.md)."
        ),
    )
    parser.add_argument("--count", type=int, default=100, help="puzzles to keep in total (default 100)")
    parser.add_argument(
        "--per-difficulty",
        type=int,
        metavar="N",
        help="quota mode: keep exactly N puzzles of each wanted difficulty (overrides --count)",
    )
    parser.add_argument(
        "--out",
        required=True,
        help="output file (.ndjson or .ndjson.gz), or a directory to write pool-<UTC time>.ndjson.gz in "
        "(a path ending in / is always a directory; missing directories are made); an existing path must be a "
        "regular file, "
        "replaced (through a symbolic link: the link's target is replaced), or a directory",
    )
    parser.add_argument(
        "--difficulty",
        metavar="LEVELS",
        help=f"comma-separated difficulties to keep, of {', '.join(DIFFICULTIES)} (any case; default: every "
        "level); one level steers generation toward "
        "it: clues are removed so as to reach that level and not pass it (docs/grading.md). Several are not "
        "steered: the work on a puzzle stops as soon as it cannot be one of them",
    )
    parser.add_argument(
        "--symmetry",
        default=DEFAULT_SYMMETRY,
        choices=SYMMETRIES,
        metavar="SYMMETRY",
        help=f"clue symmetry, one of {', '.join(SYMMETRIES)} (default {DEFAULT_SYMMETRY})",
    )
    parser.add_argument(
        "--technique",
        action="append",
        default=[],
        metavar="NAME",
        help="keep only puzzles whose solve path uses technique NAME, e.g. 'X-Wing' (repeatable: all of them; "
        "names as in docs/grading.md, any case)",
    )
    parser.add_argument(
        "--minimal",
        action="store_true",
        help="keep only minimal puzzles: no clue can be removed without losing uniqueness. With --symmetry none "
        "every generated puzzle is minimal; with a symmetry the clues are removed in symmetric groups, so only "
        "the puzzles that are also minimal clue by clue are kept (2.7 %%, about 1 in 37, with rotational-180: "
        "slower, see docs/grading.md)",
    )
    parser.add_argument("--seed", type=int, help="build seed (default: random, printed so the build can be repeated)")
    parser.add_argument(
        "--shards",
        type=int,
        metavar="N",
        help="build one of N shards of the build of --seed: shard I takes the build's puzzles I, I+N, I+2N..., so "
        "shards never share a seed and each is the same wherever it runs; merge them (docs/grading.md). "
        "--count or --per-difficulty is each shard's",
    )
    parser.add_argument(
        "--shard",
        type=int,
        metavar="I",
        help=f"which shard, 0 to N-1 (default: ${SHARD_VARIABLE}, set in each pod of a Kubernetes Indexed Job)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: all CPUs)")
    parser.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help=f"stop after this long (above 0) and fail: what was made is written under the output's name plus "
        f"{PARTIAL}, which no service loads as an export, and no pack is made",
    )
    parser.add_argument("--volume", help="volume name for every record (default: null)")
    parser.add_argument(
        "--tag",
        action="append",
        dest="tags",
        default=[],
        help=f"a tag for every record, {TAG_RULE} (repeatable; default: none)",
    )
    parser.set_defaults(func=run)


def _quota_eta(quotas: dict[str, int] | None, kept_by: Counter[str], started: float) -> float | None:
    """Seconds until the slowest quota fills at its own rate so far (None without quotas or any data)."""
    if quotas is None:
        return None
    elapsed = time.monotonic() - started
    eta = 0.0
    for name, quota in quotas.items():
        if kept_by[name] < quota:
            if kept_by[name] == 0:
                return None
            eta = max(eta, (quota - kept_by[name]) * elapsed / kept_by[name])
    return eta


def shard_of(args: argparse.Namespace, environ: Mapping[str, str]) -> Shard:
    """The shard ``--shards`` and ``--shard`` (else ``$JOB_COMPLETION_INDEX``) ask for; ValueError saying what
    is wrong."""
    if args.shards is None:
        if args.shard is not None:
            raise ValueError("--shard needs --shards")
        return Shard()
    if args.shards < 1:
        raise ValueError("--shards must be at least 1")
    if args.seed is None:
        raise ValueError("--shards needs --seed: the shards of one build share its seed")
    index = args.shard
    if index is None:
        raw = environ.get(SHARD_VARIABLE, "").strip()
        if not raw:
            raise ValueError(f"--shards needs --shard or {SHARD_VARIABLE}")
        try:
            index = int(raw)
        except ValueError:
            raise ValueError(f"{SHARD_VARIABLE}={raw!r} is not a shard number") from None
    if not 0 <= index < args.shards:
        raise ValueError(f"shard {index} is not between 0 and {args.shards - 1}")
    return Shard(index, args.shards)


def parse_difficulties(text: str) -> tuple[str, ...]:
    """``easy,Hard`` -> ``("Easy", "Hard")``; raises ValueError naming an unknown difficulty."""
    by_name = {d.lower(): d for d in DIFFICULTIES}
    wanted = []
    for part in text.split(","):
        name = by_name.get(part.strip().lower())
        if name is None:
            close = closest(part, DIFFICULTIES)
            hint = f"did you mean {close!r}?" if close else f"choose from {', '.join(by_name)}"
            raise ValueError(f"unknown difficulty {part.strip()!r} ({hint})")
        if name not in wanted:
            wanted.append(name)
    return tuple(wanted)


def run(args: argparse.Namespace) -> int:
    """Build the export; exit 0 on success, 1 when the time limit stopped it short or the export could not be
    written, 2 on bad arguments (checked, with the output, before any work)."""
    plan, out = _plan(args)
    quotas, wanted, target = plan.quotas, plan.wanted, plan.target
    techniques = plan.order.techniques
    extra = "".join(f", using {t}" for t in techniques) + (", minimal" if args.minimal else "")
    shard = plan.shard
    print(
        f"sudokupool build: seed {plan.seed}{f', shard {shard.index} of {shard.count}' if shard.count > 1 else ''}, "
        f"{counted(target, 'puzzle')} "
        f"({', '.join(wanted)}{f', {args.per_difficulty} each' if quotas else ''}{extra}), "
        f"symmetry {args.symmetry}, {counted(args.jobs, 'job')}",
        file=sys.stderr,
    )
    started = time.monotonic()
    progress = Progress(target, sys.stderr)

    def made(kept: int, kept_by: Counter[str]) -> None:
        progress.update(
            kept, " ".join(f"{d.lower()}:{kept_by[d]}" for d in wanted), _quota_eta(quotas, kept_by, started)
        )

    directory = out if out.is_dir() else out.parent
    try:
        built = build(plan, out, made)
    except OSError as exc:
        progress.close()
        print(f"sudokupool build: cannot write the export in {directory}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    progress.close()
    path, kept_by = built.path, built.kept_by
    for line in built.stats.lines():
        print(line, file=sys.stderr)
    print(
        f"wrote {counted(built.count, 'puzzle')} ({', '.join(f'{d} {kept_by[d]}' for d in wanted)}) to {path} "
        f"in {built.seconds:.1f} s ({path.stat().st_size / 1e6:.2f} MB)",
        file=sys.stderr,
    )
    if built.timed_out:
        short = (
            ", ".join(f"{d} {kept_by[d]}/{quotas[d]}" for d in wanted if kept_by[d] < quotas[d])
            if quotas
            else f"{built.count}/{target} puzzles"
        )
        print(
            f"sudokupool build: time limit of {args.time_limit:g} s reached before the target: {short}; "
            f"no export or pack written, what was made is in {path.name}",
            file=sys.stderr,
        )
        return 1
    if built.packed is not None:
        print(f"wrote its pack {built.packed} ({built.packed.stat().st_size / 1e6:.2f} MB)", file=sys.stderr)
    if problem := export_limit_problem(built.inflated):
        print(f"sudokupool build: {problem}", file=sys.stderr)
    return 0


def _plan(args: argparse.Namespace) -> tuple[Plan, Path]:
    """The build the arguments ask for and its checked output; :class:`CommandError` saying what is wrong."""
    try:
        wanted = parse_difficulties(args.difficulty or ",".join(DIFFICULTIES))
        techniques = tuple(dict.fromkeys(technique_name(t) for t in args.technique))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    # A path is at least as hard as its hardest technique: easier levels cannot have it, and need not be graded.
    need = max((LEVEL[t] for t in techniques), default=1)
    levels = frozenset(DIFFICULTIES.index(d) + 1 for d in wanted if DIFFICULTIES.index(d) + 1 >= need)
    if not levels:
        hardest = max(techniques, key=LEVEL.__getitem__)
        raise CommandError(
            f"a path with {hardest} is {DIFFICULTIES[need - 1]} or harder, "
            f"but --difficulty keeps only {', '.join(wanted)}"
        )
    if (
        args.jobs < 1
        or (args.per_difficulty is None and args.count < 1)
        or (args.per_difficulty is not None and args.per_difficulty < 1)
    ):
        raise CommandError("--count, --per-difficulty and --jobs must be at least 1")
    if args.time_limit is not None and not (math.isfinite(args.time_limit) and args.time_limit > 0):
        raise CommandError("--time-limit must be a number of seconds above 0")
    for tag in args.tags:
        if not is_tag(tag):
            hint = f" (such as {tag.lower()!r})" if is_tag(tag.lower()) else ""
            raise CommandError(f"--tag {tag!r}: a tag must be {TAG_RULE}{hint}")
    try:
        shard = shard_of(args, os.environ)
        out = prepare_output(args.out)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    quotas = {d: args.per_difficulty for d in wanted} if args.per_difficulty else None
    # Steered only toward one level: a build of several gets their puzzles from the plain dig at less CPU than
    # from a dig steered toward each (docs/grading.md); without --difficulty a seed makes the puzzles it always has.
    steer = min(levels) if args.difficulty is not None and len(levels) == 1 else None
    plan = Plan(
        order=Order(args.symmetry, levels, techniques, args.minimal, steer),
        seed=args.seed if args.seed is not None else secrets.randbits(32),
        wanted=wanted,
        target=sum(quotas.values()) if quotas else args.count,
        quotas=quotas,
        shard=shard,
        jobs=args.jobs,
        time_limit=args.time_limit,
        tags=tuple(args.tags),
        volume=args.volume or None,
    )
    return plan, out
