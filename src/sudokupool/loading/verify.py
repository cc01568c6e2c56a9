"""Verifying an export and its pack beyond what the loader checks: what ``sudokupool check`` and ``publish`` run.

Every record's ids against its grid, its one solution and a solve path that replays (unless ``fast``), with
``canonical`` its ids worked out in full; the pack beside an export must be whole and hold exactly what parsing
the export gives.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from sudokupool.loading.loader import LoadError, LoadLimits, LoadReport, export_time, parse_export
from sudokupool.pool.export import LineError, Record
from sudokupool.pool.pack import FILTER_SECTIONS, MAGIC, PackError, map_file
from sudokupool.pool.pool import DamagedRecord, Pool, PoolInfo
from sudokupool.storage.base import ExportObject, StorageError
from sudokupool.storage.local import LocalStore
from sudokupool.sudoku import DIFFICULTIES


def verifier(*, canonical: bool, replay: bool = True, time_limit: float | None = None, share_codes: bool = True) -> Any:
    """The extra per-record checks of ``check``: the ids against the grid as far as that is cheap (always;
    without ``share_codes``, not that ``canonical_id`` is the share code of ``canonical``: a synthetic
    benchmark pool gives its copies of one puzzle ids of their own), one solution and a sound solve path
    (``replay``), and with ``canonical`` the ids worked out in full; a record whose checks take more than
    ``time_limit`` seconds is a bad line (``timed-out``)."""
    from sudokupool.sudoku.canonical import canonical_form, invariants
    from sudokupool.sudoku.ids import canonical_id, puzzle_id
    from sudokupool.sudoku.replay import replay as replayed
    from sudokupool.sudoku.solver import TimeLimitExceeded, solutions
    from sudokupool.sudoku.symmetry import symmetry_class

    seen: set[str] = set()

    def verify(record: Record) -> None:
        # A repeat is not verified again (an export of one record repeated would take hours).
        if record.canonical_id in seen:
            raise LineError("duplicate-id", f"{record.canonical_id} appeared before")
        seen.add(record.canonical_id)
        puzzle, solution = record.puzzle, record.solution
        # The ids dedupe the pool and share a puzzle: a few microseconds catch an id that is not its grid's
        # (``canonical`` below works out the form itself, about 16 ms).
        if share_codes and canonical_id(record.canonical) != record.canonical_id:
            raise LineError("wrong-canonical-id", "canonical_id is not the share code of canonical")
        if puzzle_id(puzzle) != record.puzzle_id:
            raise LineError("wrong-puzzle-id", "puzzle_id is not the id of puzzle")
        if invariants(record.canonical) != invariants(puzzle):
            raise LineError("wrong-canonical", "canonical is not a form of puzzle (the clues differ)")
        deadline = None if time_limit is None else time.monotonic() + time_limit
        try:
            count = solutions(puzzle, 2, deadline=deadline)[0] if replay else 1
        except TimeLimitExceeded:
            raise LineError("timed-out", f"uniqueness not settled within the time limit of {time_limit:g} s") from None
        if count != 1:
            raise LineError("not-unique", "the puzzle has more than one solution")
        if replay and record.solve_path is not None:
            errors = replayed(puzzle, solution, msgspec.to_builtins(record.solve_path))
            if errors:
                raise LineError("bad-solve-path", "; ".join(errors[:3]))
        if canonical:
            form = canonical_form(puzzle)
            expected = {
                "canonical": form,
                "canonical_id": canonical_id(form),
                "puzzle_id": puzzle_id(puzzle),
                "symmetry": symmetry_class(puzzle),
            }
            for name, value in expected.items():
                if getattr(record, name) != value:
                    raise LineError(f"wrong-{name.replace('_', '-')}", f"{name} should be {value}")

    return verify


async def check_file(
    path: Path,
    *,
    canonical: bool = False,
    limits: LoadLimits | None = None,
    keep: Path | None = None,
    fast: bool = False,
    time_limit: float | None = None,
    share_codes: bool = True,
) -> LoadReport:
    """Validate ``path`` within ``limits``; raise :class:`LoadError` when the service would refuse it.
    With ``keep``, the pack of the records checked is written there (``publish`` uploads it). ``fast``:
    the service's checks and the cheap ones of the ids (no replay, no uniqueness). ``time_limit``: the
    seconds a record's checks may take; ``share_codes``: see :func:`verifier`."""
    report, _ = await check_export(
        path,
        canonical=canonical,
        limits=limits,
        pack=False,
        keep=keep,
        fast=fast,
        time_limit=time_limit,
        share_codes=share_codes,
    )
    return report


@dataclass(frozen=True)
class PackCheck:
    """The pack found beside a checked export, and what is wrong with it (None when it matches)."""

    name: str
    problem: str | None


async def check_export(
    path: Path,
    *,
    canonical: bool = False,
    limits: LoadLimits | None = None,
    pack: bool = True,
    keep: Path | None = None,
    fast: bool = False,
    time_limit: float | None = None,
    share_codes: bool = True,
) -> tuple[LoadReport, PackCheck | None]:
    """:func:`check_file`, and with ``pack`` the export's pack if it has one: the report, and the pack's
    check (None when there is no pack)."""
    if await asyncio.to_thread(_is_pack, path):
        raise LoadError(
            f"{path} is a pool pack, not an export: check the export it was made from "
            "(pool-<timestamp>.ndjson[.gz]), and the pack beside it is checked against it"
        )
    # The records of a file of any name: `publish` names the upload, and `run` says when the service would
    # not take the file as it is named.
    store = LocalStore(path, any_name=True)
    try:
        listing = await store.list_exports(limit=1)
    except StorageError as exc:
        raise LoadError(str(exc)) from None
    export = listing.latest
    if export is None:
        raise LoadError(f"{path}: not an export")
    verify = verifier(canonical=canonical, replay=not fast, time_limit=time_limit, share_codes=share_codes)
    _, report = await parse_export(store, export, log_lines=False, verify=verify, limits=limits, keep=keep)
    if not pack or export.pack is None:
        return report, None
    return report, PackCheck(export.pack.key, await check_pack(store, export, limits))


def _is_pack(path: Path) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(len(MAGIC)) == MAGIC
    except OSError:  # a directory, or missing: the listing says why
        return False


async def check_pack(store: LocalStore, export: ExportObject, limits: LoadLimits | None = None) -> str | None:
    """What is wrong with ``export``'s pack: damaged, made from another export, or holding other records
    than parsing the export gives. None when it matches."""
    assert export.pack is not None
    return await compare_pack(store.path_of(export.pack.key), store, export, limits)


async def compare_pack(
    path: Path, store: LocalStore, export: ExportObject, limits: LoadLimits | None = None, *, contents: bool = True
) -> str | None:
    """What is wrong with the pack at ``path`` as the pack of ``export``: its header, checksum and structure
    as the service checks them, every body inflated and checked against what the pack records for it, then
    (with ``contents``) every body, solution, grid, ETag, difficulty list and id-index entry against what
    parsing the export prepares. None when all are equal."""
    limits = limits or LoadLimits()
    try:
        info = PoolInfo("", export.key, export.size, 0, exported=export_time(export))
        packed = Pool.from_pack(map_file(path), info, max_record_bytes=limits.max_record_bytes)
    except PackError as exc:
        return str(exc)
    if not contents:
        # Without the export's parse to compare with, every body is still inflated and checked against what
        # the pack records for it (length, CRC-32, its own id and grid), as the service does before sending it.
        damaged = await asyncio.to_thread(packed.verify)
        return None if damaged is None else f"puzzle {damaged}'s body is not the record the pack says it is"
    parsed, _ = await parse_export(store, export, loaded_at=0, log_lines=False, limits=limits)
    return await asyncio.to_thread(_difference, packed, parsed)


async def pack_problem(
    pack: Path, export_file: Path, limits: LoadLimits | None = None, *, contents: bool = True
) -> str | None:
    """:func:`compare_pack` for the pack file ``pack`` and the export file ``export_file``: ``publish``
    checks what it uploads with it, without ``contents`` when the pack is its own parse of that export."""
    store = LocalStore(export_file)
    export = (await store.list_exports(limit=1)).latest
    assert export is not None
    return await compare_pack(pack, store, export, limits, contents=contents)


def _difference(packed: Pool, parsed: Pool) -> str | None:
    if len(packed) != len(parsed):
        return f"holds {len(packed)} puzzles, the export {len(parsed)}"
    for i in range(len(parsed)):
        try:
            body = packed.body(i)
        except DamagedRecord:
            return f"puzzle {i}'s body is not the record the pack says it is"
        same = (
            body == parsed.body(i)
            and packed.solution_body(i) == parsed.solution_body(i)
            and packed.etag(i) == parsed.etag(i)
            and packed.etag(i, solution=True) == parsed.etag(i, solution=True)
            and packed.puzzle(i) == parsed.puzzle(i)
        )
        if not same:
            return f"puzzle {i} differs from the export's"
        canonical_id = parsed.body(i)[17:30].decode()
        if packed.find(canonical_id) != i:
            return f"the id index does not find {canonical_id}"
    if packed.filled_slots() != len(parsed):
        return f"the id index has {packed.filled_slots()} entries for {len(parsed)} puzzles"
    for difficulty in DIFFICULTIES:
        if packed.listed(difficulty) != parsed.listed(difficulty):
            return f"its list of {difficulty} puzzles differs from the export's"
    if packed.stats_body != parsed.stats_body:
        return "its counts differ from the export's"
    for section in FILTER_SECTIONS:
        if packed.section(section) != parsed.section(section):
            return f"its {section} differ from the export's"
    return None
