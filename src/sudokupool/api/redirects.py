"""Pictures at one address: ``/puzzles/random/image`` and ``/puzzles/daily/image`` redirect (302) to the
chosen puzzle's ``/puzzles/{id}/image`` with the image parameters asked, so ``<img src=...>`` of either URL
shows a puzzle while the image itself stays cacheable by its id.

The random one is ``no-store`` (the next request is another puzzle); the daily one may be cached until its
day ends (in the zone ``tz`` when given), as the daily's record is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from urllib.parse import quote

from starlette.types import Scope

from sudokupool.api.endpoints import NO_STORE, Reply
from sudokupool.api.query import FORMAT_ERROR, VARIANT_ERROR, Header, image_choice, image_size, queries, random_query
from sudokupool.images.render import DEFAULT_SIZE, FORMATS, VARIANTS

if TYPE_CHECKING:
    from sudokupool.api.endpoints import Endpoints

_IMAGE_PARAMS: Final = ("variant", "format", "size")


def _image_query(scope: Scope) -> str:
    """The image parameters of the request, checked and spelt as the image endpoint takes them (defaults
    left out, so the default picture has one URL): ``?variant=...&...`` or ``""``."""
    raw: bytes = scope["query_string"]
    params = queries(raw, _IMAGE_PARAMS) if raw else {}
    variant = image_choice(params.get("variant"), VARIANTS, VARIANT_ERROR)
    fmt = image_choice(params.get("format"), FORMATS, FORMAT_ERROR)
    size = image_size(params.get("size"))
    parts = []
    if variant != VARIANTS[0]:
        parts.append(f"variant={variant}")
    if fmt != FORMATS[0]:
        parts.append(f"format={fmt}")
    if size != DEFAULT_SIZE:
        parts.append(f"size={size}")
    return "?" + "&".join(parts) if parts else ""


def _redirect(scope: Scope, tail: str, code: str, cache: Header) -> Reply:
    # The same surface as the request (/api/v2, /api/v1 or /api): the path up to /puzzles/.
    path: str = scope["path"]
    base = path[: path.rindex("/puzzles/")]
    location = f"{base}/puzzles/{quote(code)}/image{tail}"
    return Reply(302, [(b"location", location.encode()), cache], b"")


def random_image(endpoints: Endpoints, scope: Scope, param: str | None) -> Reply:
    """A redirect to the image of a puzzle ``random`` would answer (its filters and ``seed`` too)."""
    tail = _image_query(scope)
    raw: bytes = scope["query_string"]
    pool = endpoints.runtime.current()
    index = endpoints.random_index(pool, random_query(raw) if raw else None)
    endpoints.runtime.activity.record("random")
    return _redirect(scope, tail, pool.canonical_id(index), NO_STORE)


def daily_image(endpoints: Endpoints, scope: Scope, param: str | None) -> Reply:
    """A redirect to the image of the puzzle of the day (``difficulty``, ``date``, ``tz`` as the daily takes
    them), cacheable as long as the daily's record."""
    tail = _image_query(scope)
    pool, index, max_age = endpoints.daily_choice(scope)
    endpoints.runtime.activity.record("daily")
    return _redirect(scope, tail, pool.canonical_id(index), (b"cache-control", b"public, max-age=%d" % max_age))
