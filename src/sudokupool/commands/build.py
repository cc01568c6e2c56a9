"""``sudokupool build``: generate, grade and deduplicate puzzles, and write a pool export.

Puzzle ``i`` of a build is generated from a seed derived from ``(--seed, i)`` alone, the work is spread
over ``--jobs`` processes, and results are consumed strictly in index order, so a seed always yields the
same puzzles in the same order whatever the number of processes (only the timestamps differ).
A puzzle is kept when the grader solves it completely, its difficulty is wanted (and its quota not yet
full, with ``--per-difficulty``), its path uses every ``--technique``, it is minimal with ``--minimal``, and
its canonical form is new. A ``--difficulty`` of one level steers generation toward it (``Order.steer``).
Kept records go to disk as they are kept (:mod:`~sudokupool.commands.writer`).
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sudokupool import __version__
from sudokupool.commands.orders import Made, Order, Shard, Stats, ordered_results, technique_name
from sudokupool.commands.progress import Progress
from sudokupool.commands.suggest import closest
from sudokupool.commands.writer import ExportWriter, prepare_output
from sudokupool.config import Settings, SettingsError
from sudokupool.loading.export import TAG_RULE, is_tag
from sudokupool.naming import export_filename, is_export_name
from sudokupool.plural import counted
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.generator import DEFAULT_SYMMETRY
from sudokupool.sudoku.grid import clue_count
from sudokupool.sudoku.ids import canonical_id, puzzle_id
from sudokupool.sudoku.symmetry import SYMMETRIES, symmetry_class
from sudokupool.sudoku.technique_table import LEVEL

#: What made a record: the builder at the package's version, raised when the grading changes.
SOURCE = f"sudokupool-build/{__version__}"
#: The variable a Kubernetes Indexed Job sets in each pod to its index: ``--shards`` takes the shard from it.
SHARD_VARIABLE = "JOB_COMPLETION_INDEX"
#: Appended to the output's name when a build misses its target: not an export name, so a service pointed at
#: the directory does not load a short build as the newest export.
PARTIAL = ".partial"


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


def make_record(made: Made, symmetry: str, tags: list[str], volume: str | None) -> dict[str, Any]:
    """The export record for a kept puzzle (field order is applied by ``record_line``)."""
    g, form = made.grade, made.form
    assert g is not None  # only graded puzzles are kept
    now = int(time.time())
    return {
        "canonical_id": canonical_id(form),
        "puzzle_id": puzzle_id(made.puzzle),
        "puzzle": made.puzzle,
        "solution": made.solution,
        "canonical": form,
        "difficulty": g.difficulty,
        "difficulty_level": g.difficulty_level,
        "clue_count": clue_count(made.puzzle),
        "symmetric": symmetry != "none",
        "symmetry": symmetry,
        "seed": made.seed,
        "created_at": now,
        "tags": tags,
        "score": g.score,
        "tier": g.tier,
        "stars": g.stars,
        "hardest_technique": g.hardest_technique,
        "techniques": list(g.techniques),
        "solve_path": g.solve_path,
        "source": SOURCE,
        "volume": volume,
        "used_at": None,
        "synced_at": now,
    }


def output_path(out: Path, when: datetime) -> Path:
    """The file to write: ``out`` itself, or ``pool-<UTC time>.ndjson.gz`` inside it when it is a directory."""
    if out.is_dir():
        return out / export_filename(when)
    return out


def warn_export_limit(inflated: int, command: str = "build") -> None:
    """Say what to set when the export inflates past ``SUDOKUPOOL_MAX_EXPORT_BYTES`` (the value in this
    environment): the service, ``check`` and ``pack`` would refuse it."""
    try:
        limit = Settings.from_environ(os.environ).max_export_bytes
    except SettingsError:
        limit = Settings.max_export_bytes  # the service reports a bad value itself
    if inflated > limit:
        wanted = -(-inflated // (1 << 30)) << 30
        print(
            f"sudokupool {command}: the export inflates to {inflated} bytes, more than SUDOKUPOOL_MAX_EXPORT_BYTES="
            f"{limit}: set SUDOKUPOOL_MAX_EXPORT_BYTES={wanted} (or more) wherever it is served, checked or packed",
            file=sys.stderr,
        )


def run(args: argparse.Namespace) -> int:
    """Build the export; exit 0 on success, 1 when the time limit stopped it short or the export could not be
    written, 2 on bad arguments (checked, with the output, before any work)."""
    try:
        wanted = parse_difficulties(args.difficulty or ",".join(DIFFICULTIES))
    except ValueError as exc:
        print(f"sudokupool build: {exc}", file=sys.stderr)
        return 2
    try:
        techniques = tuple(dict.fromkeys(technique_name(t) for t in args.technique))
    except ValueError as exc:
        print(f"sudokupool build: {exc}", file=sys.stderr)
        return 2
    # A path is at least as hard as its hardest technique: easier levels cannot have it, and need not be graded.
    need = max((LEVEL[t] for t in techniques), default=1)
    levels = frozenset(DIFFICULTIES.index(d) + 1 for d in wanted if DIFFICULTIES.index(d) + 1 >= need)
    if not levels:
        hardest = max(techniques, key=LEVEL.__getitem__)
        print(
            f"sudokupool build: a path with {hardest} is {DIFFICULTIES[need - 1]} or harder, "
            f"but --difficulty keeps only {', '.join(wanted)}",
            file=sys.stderr,
        )
        return 2
    if (
        args.jobs < 1
        or (args.per_difficulty is None and args.count < 1)
        or (args.per_difficulty is not None and args.per_difficulty < 1)
    ):
        print("sudokupool build: --count, --per-difficulty and --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.time_limit is not None and not (math.isfinite(args.time_limit) and args.time_limit > 0):
        print("sudokupool build: --time-limit must be a number of seconds above 0", file=sys.stderr)
        return 2
    for tag in args.tags:
        if not is_tag(tag):
            hint = f" (such as {tag.lower()!r})" if is_tag(tag.lower()) else ""
            print(f"sudokupool build: --tag {tag!r}: a tag must be {TAG_RULE}{hint}", file=sys.stderr)
            return 2
    try:
        shard = shard_of(args, os.environ)
    except ValueError as exc:
        print(f"sudokupool build: {exc}", file=sys.stderr)
        return 2
    try:
        out = prepare_output(args.out)
    except ValueError as exc:
        print(f"sudokupool build: {exc}", file=sys.stderr)
        return 2
    build_seed = args.seed if args.seed is not None else secrets.randbits(32)
    tags = args.tags
    volume = args.volume or None
    quotas = {d: args.per_difficulty for d in wanted} if args.per_difficulty else None
    target = sum(quotas.values()) if quotas else args.count
    # Steered only toward one level: a build of several gets their puzzles from the plain dig at less CPU than
    # from a dig steered toward each (docs/grading.md); without --difficulty a seed makes the puzzles it always has.
    steer = min(levels) if args.difficulty is not None and len(levels) == 1 else None
    order = Order(args.symmetry, levels, techniques, args.minimal, steer)
    extra = "".join(f", using {t}" for t in techniques) + (", minimal" if args.minimal else "")
    print(
        f"sudokupool build: seed {build_seed}{f', shard {shard.index} of {shard.count}' if shard.count > 1 else ''}, "
        f"{counted(target, 'puzzle')} "
        f"({', '.join(wanted)}{f', {args.per_difficulty} each' if quotas else ''}{extra}), "
        f"symmetry {args.symmetry}, {counted(args.jobs, 'job')}",
        file=sys.stderr,
    )

    started = time.monotonic()
    stats = Stats()
    kept_by: Counter[str] = Counter()
    seen_ids: set[str] = set()
    progress = Progress(target, sys.stderr)
    timed_out = False
    directory = out if out.is_dir() else out.parent
    gzipped = out.is_dir() or out.name.endswith(".gz")
    packs = out.is_dir() or is_export_name(out.name)
    try:
        with ExportWriter(directory, gzipped=gzipped, pack=packs) as writer:
            # Read when each chunk is sent: the order narrows as quotas fill.
            current = [order]
            for made in ordered_results(build_seed, lambda: current[0], args.jobs, shard):
                stats.add(made)
                difficulty = made.outcome
                if made.grade is not None and (quotas is None or kept_by[difficulty] < quotas[difficulty]):
                    # A share code is the canonical form's digest: one seen before is the same puzzle.
                    code = canonical_id(made.form)
                    if code in seen_ids:
                        stats.duplicates += 1
                    else:
                        seen_ids.add(code)
                        writer.add(make_record(made, symmetry_class(made.puzzle), tags, volume))
                        kept_by[difficulty] += 1
                        if quotas is not None and kept_by[difficulty] == quotas[difficulty]:
                            # Puzzles sent from now on stop as soon as they show this level: it is full.
                            current[0] = current[0].without(DIFFICULTIES.index(difficulty) + 1)
                progress.update(
                    writer.count,
                    " ".join(f"{d.lower()}:{kept_by[d]}" for d in wanted),
                    _quota_eta(quotas, kept_by, started),
                )
                if writer.count >= target:
                    break
                if args.time_limit is not None and time.monotonic() - started > args.time_limit:
                    timed_out = True
                    break
            progress.close()
            path = output_path(out, datetime.now(UTC))
            if timed_out:
                path = path.with_name(path.name + PARTIAL)
            packed = writer.commit(path, pack=not timed_out)
    except OSError as exc:
        progress.close()
        print(f"sudokupool build: cannot write the export in {directory}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    elapsed = time.monotonic() - started
    for line in stats.lines():
        print(line, file=sys.stderr)
    print(
        f"wrote {counted(writer.count, 'puzzle')} ({', '.join(f'{d} {kept_by[d]}' for d in wanted)}) to {path} "
        f"in {elapsed:.1f} s ({path.stat().st_size / 1e6:.2f} MB)",
        file=sys.stderr,
    )
    if timed_out:
        short = (
            ", ".join(f"{d} {kept_by[d]}/{quotas[d]}" for d in wanted if kept_by[d] < quotas[d])
            if quotas
            else f"{writer.count}/{target} puzzles"
        )
        print(
            f"sudokupool build: time limit of {args.time_limit:g} s reached before the target: {short}; "
            f"no export or pack written, what was made is in {path.name}",
            file=sys.stderr,
        )
        return 1
    if packed is not None:
        print(f"wrote its pack {packed} ({packed.stat().st_size / 1e6:.2f} MB)", file=sys.stderr)
    warn_export_limit(writer.inflated)
    return 0
