"""Query strings and request headers: read from the raw ASGI scope and checked, a :class:`BadRequest` naming
the first bad value. The handlers (``endpoints.py``) and the routes beside them read their parameters here."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final, NamedTuple, TypeVar
from urllib.parse import unquote_plus

from starlette.types import Scope

from sudokupool.api.errors import BadRequest
from sudokupool.images.render import DEFAULT_SIZE, FORMATS, MAX_SIZE, MIN_SIZE
from sudokupool.pool.choose import Filters
from sudokupool.sudoku import DIFFICULTIES
from sudokupool.sudoku.symmetry import SYMMETRIES

Header = tuple[bytes, bytes]
Choice = TypeVar("Choice", bound=str)
DIFFICULTY_BY_FILTER: Final = {name.lower(): name for name in DIFFICULTIES}
DIFFICULTY_ERROR: Final = "difficulty must be one of easy, medium, hard, expert"
VARIANT_ERROR: Final = "variant must be one of puzzle, solution"
FORMAT_ERROR: Final = f"format must be one of {', '.join(FORMATS)}"
SIZE_ERROR: Final = f"size must be a whole number of pixels from {MIN_SIZE} to {MAX_SIZE}"
DIFFICULTY_LEVEL_BY_FILTER: Final = {name.lower(): level for level, name in enumerate(DIFFICULTIES, 1)}
#: The query parameters of ``random``; any other (``api_key`` among them) is not a filter.
RANDOM_FILTERS: Final = (
    "difficulty",
    "technique",
    "stars",
    "min_score",
    "max_score",
    "min_clues",
    "max_clues",
    "symmetry",
)
#: What the puzzle of the day reads of its query string.
DAILY_PARAMS: Final = ("difficulty", "min_clues", "max_clues", "symmetry", "date", "tz")
#: What ``random`` reads of its query string: the filters and ``seed``.
_RANDOM_PARAMS: Final = (*RANDOM_FILTERS, "seed")
SYMMETRY_BY_FILTER: Final = {name: code for code, name in enumerate(SYMMETRIES)}
SYMMETRY_ERROR: Final = f"symmetry must be one of {', '.join(SYMMETRIES)}"
CLUES_ERROR: Final = "{} must be a whole number from 0 to 81"
#: The largest seed: every seed a JavaScript number holds exactly.
MAX_SEED: Final = 2**53 - 1
SEED_ERROR: Final = f"seed must be a whole number from 0 to {MAX_SEED}"
STARS_ERROR: Final = "stars must be an integer from 1 to 5"
_INTEGER: Final = re.compile(r"-?[0-9]{1,15}")


def header(scope: Scope, name: bytes) -> str | None:
    """Every request header line called ``name`` (lower case) as one list (joined with ", "), as latin-1.

    A list-valued field (``If-None-Match``, ``Accept-Encoding``) may come as several lines; RFC 9110
    (5.3) makes them one value joined by commas. None when there is no such line.
    """
    found: str | None = None
    for key, value in scope["headers"]:
        if key == name:
            text = bytes(value).decode("latin-1")
            found = text if found is None else f"{found}, {text}"
    return found


def query(scope: Scope, name: str) -> str | None:
    """The first query parameter called ``name`` (what ``parse_qsl(..., keep_blank_values=True)`` gives).

    Split by hand: ``parse_qsl`` cost 1.1 us of a 7 us filtered pick; only parts with ``%`` or ``+``
    go through ``unquote_plus``.
    """
    raw: bytes = scope["query_string"]
    if not raw or name.encode() not in raw:
        return None
    return queries(raw, (name,)).get(name)


def queries(raw: bytes, names: tuple[str, ...]) -> dict[str, str]:
    """The first value of each query parameter in ``names`` that the query string ``raw`` has, in one pass
    (see :func:`query`)."""
    found: dict[str, str] = {}
    for part in raw.decode("latin-1").split("&"):
        key, _, value = part.partition("=")
        if "%" in key or "+" in key:
            key = unquote_plus(key)
        if key in names and key not in found:
            found[key] = unquote_plus(value) if "%" in value or "+" in value else value
    return found


def _integer(params: dict[str, str], name: str) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    if not _INTEGER.fullmatch(value):
        raise BadRequest(f"{name} must be an integer of at most 15 digits")
    return int(value)


def _clues(params: dict[str, str], name: str) -> int | None:
    value = params.get(name)
    if value is None:
        return None
    if not (0 < len(value) <= 2 and value.isascii() and value.isdigit()) or int(value) > 81:
        raise BadRequest(CLUES_ERROR.format(name))
    return int(value)


def clue_filters(params: dict[str, str]) -> tuple[int | None, int | None, int | None]:
    """``min_clues``, ``max_clues`` and ``symmetry`` (its position in ``SYMMETRIES``) of ``params``, checked."""
    fewest, most = _clues(params, "min_clues"), _clues(params, "max_clues")
    if fewest is not None and most is not None and fewest > most:
        raise BadRequest("min_clues must not be above max_clues")
    symmetry = None
    named = params.get("symmetry")
    if named is not None:
        symmetry = SYMMETRY_BY_FILTER.get(named.lower())
        if symmetry is None:
            raise BadRequest(SYMMETRY_ERROR)
    return fewest, most, symmetry


def seed_of(value: str | None) -> int | None:
    """The ``seed`` parameter: ASCII digits, 0 to :data:`MAX_SEED`; None when absent. Else :class:`BadRequest`."""
    if value is None:
        return None
    if not (0 < len(value) <= 16 and value.isascii() and value.isdigit()) or int(value) > MAX_SEED:
        raise BadRequest(SEED_ERROR)
    return int(value)


class RandomQuery(NamedTuple):
    """``random``'s query string, checked: the difficulty's name, the filters (None when only a difficulty
    or nothing is asked for), the filters as asked, for the messages, the difficulty's level and the seed."""

    difficulty: str | None
    filters: Filters | None
    asked: tuple[tuple[str, str], ...]
    level: int | None = None
    seed: int | None = None

    def every_filter(self) -> Filters:
        """The filters, the difficulty alone included, as :class:`Filters`."""
        return self.filters if self.filters is not None else Filters(self.level)


def random_query(raw: bytes) -> RandomQuery:
    """Parse and check ``random``'s query string; raise :class:`BadRequest` naming the first bad value.

    Memoized by the raw bytes (:data:`KEPT_QUERY_BYTES` at most): a client asks the same query again and
    again, and unquoting and checking it took longer than the pick. A bad query is not kept (an exception is
    never cached), nor a longer one: a thousand long ones would hold megabytes."""
    return _kept_query(raw) if len(raw) <= KEPT_QUERY_BYTES else _random_query(raw)


#: The longest query string :func:`random_query` keeps: every filter at once, a long technique name escaped.
KEPT_QUERY_BYTES: Final = 256


def _random_query(raw: bytes) -> RandomQuery:
    params = queries(raw, _RANDOM_PARAMS)
    difficulty = level = None
    value = params.get("difficulty")
    if value is not None:
        difficulty = DIFFICULTY_BY_FILTER.get(value.lower())
        if difficulty is None:
            raise BadRequest(DIFFICULTY_ERROR)
        level = DIFFICULTY_LEVEL_BY_FILTER[value.lower()]
    stars = params.get("stars")
    if stars is not None and (len(stars) != 1 or stars not in "12345"):
        raise BadRequest(STARS_ERROR)
    low, high = _integer(params, "min_score"), _integer(params, "max_score")
    if low is not None and high is not None and low > high:
        raise BadRequest("min_score must not be above max_score")
    fewest, most, symmetry = clue_filters(params)
    seed = seed_of(params.get("seed"))
    technique = params.get("technique")
    asked = tuple((name, params[name]) for name in RANDOM_FILTERS if name in params)
    if all(value is None for value in (technique, stars, low, high, fewest, most, symmetry)):
        return RandomQuery(difficulty, None, asked, level, seed)
    filters = Filters(
        level, None if stars is None else int(stars), technique and technique.lower(), low, high, fewest, most, symmetry
    )
    return RandomQuery(difficulty, filters, asked, level, seed)


_kept_query: Final = lru_cache(maxsize=1024)(_random_query)


def image_choice(value: str | None, allowed: tuple[Choice, ...], error: str) -> Choice:
    """``value`` (any case) as one of ``allowed``, the first of them when absent; else :class:`BadRequest`."""
    if value is None:
        return allowed[0]
    lowered = value.lower()
    for choice in allowed:
        if choice == lowered:
            return choice
    raise BadRequest(error)


def image_size(value: str | None) -> int:
    """The ``size`` parameter: ASCII digits within ``MIN_SIZE``..``MAX_SIZE``, ``DEFAULT_SIZE`` when absent."""
    if value is None:
        return DEFAULT_SIZE
    # At most 4 digits before int(): no signs, spaces, underscores or other scripts' digits, and no huge numbers.
    if not (0 < len(value) <= 4 and value.isascii() and value.isdigit()):
        raise BadRequest(SIZE_ERROR)
    size = int(value)
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise BadRequest(SIZE_ERROR)
    return size


def difficulty_level(params: dict[str, str]) -> int | None:
    """The level of the query's ``difficulty`` (any case), None when it has none; a 400 for another name."""
    difficulty = params.get("difficulty")
    if difficulty is None:
        return None
    level = DIFFICULTY_LEVEL_BY_FILTER.get(difficulty.lower())
    if level is None:
        raise BadRequest(DIFFICULTY_ERROR)
    return level
