"""The JSON schemas of the API's bodies, as the OpenAPI document (``openapi.py``) lists them.

Every object has typed properties and every object an array holds is a named schema, so generated
clients get a class or type for each; fields that are always present are ``required`` (a
nullable one may be null).
"""

from __future__ import annotations

from typing import Any, Final

from sudokupool.activity.counters import DOWNLOADS, PLAYS
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.symmetry import SYMMETRIES
from sudokupool.sudoku.technique_table import NAMES

CODE_PATTERN: Final = "^[0-9A-HJKMNP-TV-Z]{13}$"
#: What ``puzzle_id`` is and why paths take ``canonical_id``; docs/api.md says the same (a test keeps them so).
PUZZLE_ID_DESCRIPTION: Final = (
    "The code of the exact grid in `puzzle`: 13 Crockford base32 characters of SHA-256 over "
    "`sudokupool-puzzle-v1:` and `puzzle`. It changes when the grid is rotated, mirrored or transposed, when "
    "rows or columns are swapped within a band or stack or bands and stacks are reordered, and when its digits "
    "are relabelled; `canonical_id`, the same kind of code over the minlex canonical form, does not. Paths take "
    "`canonical_id`, and a `puzzle_id` in a path is answered 404: an export holds each `canonical_id` once (a "
    "repeat is a bad line), so it names one record whichever layout the pool holds, and a shared link finds the "
    "puzzle on any pool that holds it in any layout. `puzzle_id` tells layouts of one puzzle apart."
)


def ref(name: str) -> dict[str, str]:
    """A reference to the schema called ``name``."""
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "nullable": True, **extra}


def _object(properties: dict[str, Any], description: str | None = None, **extra: Any) -> dict[str, Any]:
    """An object schema whose properties are all required (every response field is always present)."""
    head = {"description": description} if description else {}
    return {**head, "type": "object", "required": list(properties), "properties": properties, **extra}


_EPOCH = "Seconds since the Unix epoch, UTC."
_SYNCED_AT = (
    "The export's time, epoch seconds UTC: the time in its name (health's export.exported_at). The same on every "
    "instance and worker serving that export, whenever each loaded it, so one export gives the same body and ETag "
    "everywhere."
)

_RECORD_FIELDS: Final[dict[str, Any]] = {
    "canonical_id": {"type": "string", "pattern": CODE_PATTERN, "example": "7XQ2M9KD4HB1C"},
    "puzzle_id": {"type": "string", "pattern": CODE_PATTERN, "description": PUZZLE_ID_DESCRIPTION},
    "puzzle": {"type": "string", "pattern": "^[.1-9]{81}$", "description": "Row-major, '.' for empty."},
    "canonical": {"type": "string", "pattern": "^[.1-9]{81}$", "description": "Minlex canonical form."},
    "difficulty": ref("Difficulty"),
    "difficulty_level": {"type": "integer", "minimum": 1, "maximum": 4},
    "clue_count": {"type": "integer", "minimum": 17, "maximum": 81},
    "symmetric": {"type": "boolean"},
    "symmetry": {"type": "string", "enum": list(SYMMETRIES)},
    "seed": _nullable("integer"),
    "created_at": {"type": "integer", "description": _EPOCH},
    "tags": {"type": "array", "items": {"type": "string"}},
    "score": _nullable("number"),
    "tier": _nullable("string"),
    "stars": _nullable("integer", minimum=1, maximum=5),
    "hardest_technique": _nullable("string"),
    "techniques": {"type": "array", "items": {"type": "string"}},
    "solve_path": {"type": "array", "nullable": True, "items": ref("SolveStep")},
    "source": {"type": "string"},
    "volume": _nullable("string"),
    "used_at": _nullable("integer", description=_EPOCH),
    "synced_at": {"type": "integer", "description": _SYNCED_AT},
}

SCHEMAS: dict[str, Any] = {
    "Difficulty": {"type": "string", "enum": list(DIFFICULTIES), "description": "A puzzle's difficulty."},
    "DifficultyFilter": {
        "type": "string",
        "enum": [name.lower() for name in DIFFICULTIES],
        "description": "A difficulty in lower case (the filter ignores case; `Difficulty` values work too).",
    },
    "PuzzlePublicRecord": _object(
        _RECORD_FIELDS,
        "A puzzle without its answer. Formats: docs/export-format.md.",
        additionalProperties=False,
    ),
    "SolveStep": {
        "type": "object",
        "description": "One solving step (docs/export-format.md).",
        "required": ["technique", "placements", "eliminations", "explanation"],
        "properties": {
            "technique": {"type": "string"},
            "score": {"type": "integer"},
            "placements": {"type": "array", "items": ref("CellDigit")},
            "eliminations": {"type": "array", "items": ref("CellDigit")},
            "cells": {"type": "array", "items": {"type": "string"}},
            "houses": {"type": "array", "items": {"type": "string"}},
            "digits": {"type": "array", "items": {"type": "integer"}},
            "explanation": {"type": "string"},
        },
    },
    "CellDigit": _object(
        {
            "cell": {"type": "string", "pattern": "^r[1-9]c[1-9]$", "example": "r1c7"},
            "digit": {"type": "integer", "minimum": 1, "maximum": 9},
        },
        "A digit placed in, or eliminated from, a cell.",
    ),
    "TechniqueCatalogue": _object({"techniques": {"type": "array", "items": ref("Technique")}}),
    "TechniqueName": {
        "type": "string",
        "enum": list(NAMES),
        "description": "A technique the grader knows, as a record's `techniques` lists it.",
    },
    "Technique": _object(
        {
            "name": ref("TechniqueName"),
            "difficulty": ref("Difficulty"),
            "score": {"type": "integer", "minimum": 0, "description": "The score of one step of it."},
            "puzzles": {
                "type": "integer",
                "minimum": 0,
                "description": "Puzzles of the pool whose solve path uses it.",
            },
        },
        "A solving technique: the difficulty it implies, its step score, and how many puzzles use it.",
    ),
    "SolutionResponse": _object(
        {
            "canonical_id": {"type": "string", "pattern": CODE_PATTERN},
            "solution": {"type": "string", "pattern": "^[1-9]{81}$"},
        }
    ),
    "GlobalStats": _object(
        {
            "total": {"type": "integer", "minimum": 0},
            "by_difficulty": ref("DifficultyCounts"),
            "last_synced_at": _nullable("integer", description=_SYNCED_AT),
        }
    ),
    "DifficultyCounts": _object(
        {name: {"type": "integer", "minimum": 0} for name in DIFFICULTIES}, "Puzzles of each difficulty."
    ),
    "ActivityStats": _object(
        {
            "scope": {"type": "string", "enum": ["instance", "cluster"]},
            "covers": {"type": "string", "description": "What the counts cover, in words."},
            "since": _nullable("integer", description=_EPOCH),
            "plays": ref("PlayCounts"),
            "downloads": ref("DownloadCounts"),
        },
        "Aggregate counters, no personal data. `scope` says what they cover.",
    ),
    "PlayCounts": _object(
        {name: {"type": "integer", "minimum": 0} for name in (*PLAYS, "total")}, "Puzzles served to play."
    ),
    "DownloadCounts": _object(
        {name: {"type": "integer", "minimum": 0} for name in (*DOWNLOADS, "total")},
        "Solutions, images and export listings served.",
    ),
    "Health": _object(
        {
            "ok": {"type": "boolean"},
            "puzzles": {"type": "integer", "minimum": 0},
            "export": ref("LoadedExport"),
            "sync": ref("SyncStatus"),
        }
    ),
    "LoadedExport": _object(
        {
            "source": {
                "type": "string",
                "description": "Where exports are read from: the configured source, or `snapshots` (the demo pool).",
            },
            "key": {
                "type": "string",
                "description": "The loaded export's name.",
                "example": "pool-20261122T100000Z.ndjson.gz",
            },
            "size": {"type": "integer", "minimum": 0, "description": "Its size in bytes."},
            "loaded_at": {
                "type": "integer",
                "description": "When this instance (this worker) loaded or swapped in the export, epoch seconds.",
            },
            "age_seconds": {"type": "integer"},
            "exported_at": _nullable("integer", description="The time in the export's name; null without one."),
            "export_age_seconds": _nullable("integer"),
            "fallback": {"type": "boolean", "description": "Serving the fallback export (storage was unreachable)."},
        },
        "The export the pool was loaded from.",
    ),
    "SyncStatus": _object(
        {
            "interval_seconds": {"type": "number", "description": "0: live sync is off."},
            "last_attempt_at": _nullable("integer", description=_EPOCH),
            "last_success_at": _nullable("integer", description=_EPOCH),
            "last_error": _nullable("string", description="The most recent failure; it stays after later successes."),
            "last_error_at": _nullable("integer", description=_EPOCH),
        },
        "The last look for a newer export.",
    ),
    "PoolExportsResponse": _object(
        {
            "objects": {"type": "array", "items": ref("PoolExport")},
            "truncated": {"type": "boolean"},
            "license": _nullable(
                "string",
                description="The exports' licence as the operator states it (an SPDX expression); null: none stated.",
                example="CC0-1.0",
            ),
        }
    ),
    "PoolExport": _object(
        {
            "key": {"type": "string", "example": "pool-20261122T100000Z.ndjson.gz"},
            "size": {"type": "integer", "minimum": 0},
            "uploaded": {"type": "string", "format": "date-time"},
            "url": {
                "type": "string",
                "description": "Where to download it (`downloadPoolExport`), relative to this service.",
                "example": "/api/v2/pool-exports/pool-20261122T100000Z.ndjson.gz",
            },
            "sha256": _nullable(
                "string",
                description="The file's SHA-256 in hex, as the download's X-Checksum-SHA256 gives it; null when "
                "storage does not know it (an object uploaded other than by `sudokupool publish`).",
                pattern="^[0-9a-f]{64}$",
            ),
        },
        "One export snapshot in object storage.",
    ),
    "GridAnswer": {
        "type": "object",
        "description": (
            "A grid's answer. In the pool (`in_pool` true): the pool's record moved to the layout asked (its "
            "`puzzle` is the grid sent; `solution` and `solve_path` read in that layout; `puzzle_id` and `symmetry` "
            "are the grid's own), plus `solution`. Not in the pool: a live grade, the object `sudokupool grade "
            "--json` prints (with `status` solved and `reason` null) and the grid's `canonical_id`."
        ),
        "required": [
            "in_pool",
            "canonical_id",
            "puzzle",
            "solution",
            "difficulty",
            "difficulty_level",
            "score",
            "tier",
            "stars",
            "hardest_technique",
            "techniques",
            "solve_path",
        ],
        "properties": {
            "in_pool": {"type": "boolean"},
            "status": {"type": "string", "enum": ["solved"], "description": "Live grades only."},
            "reason": _nullable("string", description="Live grades only: always null here."),
            **_RECORD_FIELDS,
            "solution": {"type": "string", "pattern": "^[1-9]{81}$"},
        },
    },
    "Hint": {
        "type": "object",
        "description": "A hint for a player's board (docs/api.md, Grids and hints).",
        "required": ["status", "wrong", "conflicting"],
        "properties": {
            "status": {
                "type": "string",
                "enum": ["fix", "finished", "step"],
                "description": (
                    "fix: entries to fix first (`wrong`, `conflicting`); finished; step: the next step, in `step` "
                    "(present only then)."
                ),
            },
            "wrong": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Entries the solution differs from.",
            },
            "conflicting": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Entries whose digit repeats in a row, column or box.",
            },
            "step": ref("SolveStep"),
        },
    },
    "GridError": {
        "type": "object",
        "description": (
            "Why a grid or board has no answer: `error` in words; for a grid, `status` (invalid, no-solution, "
            "multiple-solutions) and `cells`, the cells of clashing givens or of pencil marks that erase a needed "
            "digit."
        ),
        "required": ["error"],
        "properties": {
            "error": {"type": "string"},
            "status": {"type": "string", "enum": ["invalid", "no-solution", "multiple-solutions"]},
            "cells": {"type": "array", "items": {"type": "string"}},
        },
    },
    "PuzzleSet": _object(
        {
            "seed": {
                "type": "integer",
                "minimum": 0,
                "maximum": 2**53 - 1,
                "description": "The seed of the order: the one asked for, or the one drawn when none was.",
            },
            "offset": {"type": "integer", "minimum": 0, "description": "The position of the first puzzle."},
            "next_offset": _nullable(
                "integer",
                minimum=0,
                description="The offset of the next page (with the same seed); null when this one reaches the end.",
            ),
            "total": {"type": "integer", "minimum": 1, "description": "How many puzzles match the filters."},
            "puzzles": {"type": "array", "items": ref("PuzzlePublicRecord"), "maxItems": 50},
        },
        "Distinct puzzles: positions offset to offset + count - 1 of the seed's order of the matching puzzles.",
    ),
    "DailyArchive": _object(
        {
            "from": {"type": "string", "format": "date"},
            "to": {"type": "string", "format": "date"},
            "days": {"type": "array", "items": ref("DailyArchiveDay"), "maxItems": 31},
        },
        "The puzzles of the days from `from` to `to`, newest first.",
    ),
    "DailyArchiveDay": _object(
        {
            "date": {"type": "string", "format": "date"},
            "canonical_id": {"type": "string", "pattern": CODE_PATTERN},
            "difficulty": ref("Difficulty"),
            "stars": _nullable("integer", minimum=1, maximum=5),
        },
        "One day's puzzle.",
    ),
    "Error": _object({"error": {"type": "string"}}),
    "RateLimitError": _object(
        {
            "error": {"type": "string", "example": "rate limit exceeded"},
            "retry_after_seconds": {"type": "integer", "minimum": 0},
        }
    ),
    "OpenApiDocument": {
        "type": "object",
        "description": "An OpenAPI 3.0.3 document (this one).",
        "required": ["openapi", "info", "paths"],
        "properties": {
            "openapi": {"type": "string", "example": "3.0.3"},
            "info": ref("OpenApiInfo"),
            "paths": {"type": "object", "additionalProperties": {"type": "object"}},
            "components": {"type": "object", "additionalProperties": {"type": "object"}},
        },
    },
    "OpenApiInfo": {
        "type": "object",
        "required": ["title", "version"],
        "properties": {"title": {"type": "string"}, "version": {"type": "string"}, "description": {"type": "string"}},
    },
}
