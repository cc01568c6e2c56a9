"""Pictures of a puzzle grid or its solved grid: PNG, WebP (the same raster) and SVG (a vector drawing).

The picture is a white square with a 9x9 grid (thin cell lines, heavier 3x3 box lines and border)
and the digits in DejaVu Sans, which ships inside the package (``fonts/``) so no system font is
needed. Givens are bold near-black; the digits a solution fills in are regular weight in a blue ink,
so the two read apart at a glance, in colour and in grey-scale print alike.

The output is a palette PNG: the anti-aliased edges are quantised to 7 coverage levels per ink, so
paper and both inks fit in 16 colours and both variants are 4-bit PNGs of a few kilobytes. (At 15
levels per ink the solution needs an 8-bit PNG, about 15% larger, with no difference to be seen
even at 3x zoom.) zlib level 7 takes a sixth to an eighth of the time of level 9 (Pillow's
``optimize``) for 2-5% more bytes; see python -m bench render.

Rendering is cheap because each digit is rasterised once per (size, style) into a cell-sized tile
of palette indices; a picture is then 81 tile pastes, a few rectangles and the PNG encoder. The
tiles of the :data:`LAYOUTS_KEPT` sizes used last are kept (at most 0.8 MB a size, at 2000 px): a client
asking for every size from 100 to 2000 px would otherwise leave half a gigabyte of tiles behind. Tiles
are only read once built, so :func:`render_png` is safe to call from several threads at once (FreeType
faces themselves are not thread-safe, and never shared here).

WebP is the same raster as the PNG, encoded losslessly (method 0, quality 100: 7.7 KB and 4 ms for a
480 px solution, where lossy quality 80 gave 30 KB of blurred lines). The SVG draws the same layout
in vector form: see :func:`render_svg`.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Final, Literal, get_args

from PIL import Image, ImageDraw, ImageFont

Variant = Literal["puzzle", "solution"]
VARIANTS: Final[tuple[Variant, ...]] = get_args(Variant)
Format = Literal["png", "svg", "webp"]
FORMATS: Final[tuple[Format, ...]] = get_args(Format)
MEDIA_TYPES: Final[dict[Format, str]] = {"png": "image/png", "svg": "image/svg+xml", "webp": "image/webp"}

DEFAULT_SIZE: Final = 480
MIN_SIZE: Final = 100
MAX_SIZE: Final = 2000
PNG_COMPRESS_LEVEL: Final = 7
WEBP_OPTIONS: Final = {"lossless": True, "method": 0, "quality": 100}

FONT_GIVEN: Final = "DejaVuSans-Bold-digits.ttf"
FONT_FILLED: Final = "DejaVuSans-digits.ttf"

# Palette: index 0 is the white paper; 1..7 are the given ink at coverage 1/7..7/7; 8..14 the
# filled-digit ink likewise. The puzzle variant only needs the first 8 entries.
LEVELS: Final = 7
PAPER: Final = (255, 255, 255)
INK_GIVEN: Final = (17, 17, 17)
INK_FILLED: Final = (37, 99, 191)
# Thin cell lines are the given ink at partial coverage, which gives a mid grey without another colour.
THIN_LINE_LEVEL: Final = 3
BOX_LINE_LEVEL: Final = LEVELS

# Digit height (baseline to top of the digits) as a share of the cell, and DejaVu's digit height per em.
_DIGIT_SHARE: Final = 0.54
_DIGIT_HEIGHT_PER_EM: Final = 1493 / 2048


def _ramp(ink: tuple[int, int, int]) -> list[int]:
    out: list[int] = []
    for level in range(1, LEVELS + 1):
        out.extend(round(p + (i - p) * level / LEVELS) for p, i in zip(PAPER, ink, strict=True))
    return out


_PALETTE_PUZZLE: Final = bytes([*PAPER, *_ramp(INK_GIVEN)])
_PALETTE_SOLUTION: Final = _PALETTE_PUZZLE + bytes(_ramp(INK_FILLED))


@dataclass(frozen=True, slots=True)
class _Layout:
    """Geometry for one picture size, with the digit tiles rasterised for it."""

    size: int
    origin: int  # x and y of the grid's outer top-left line centre
    cell: int  # cell pitch in pixels
    thin: int
    thick: int
    given: tuple[Image.Image, ...]  # index d-1 holds digit d, as a cell x cell tile of palette indices
    filled: tuple[Image.Image, ...]


#: Picture sizes whose layouts (digit tiles) are kept, the least recently used dropped first.
LAYOUTS_KEPT: Final = 8


def _font(name: str, px: int) -> ImageFont.FreeTypeFont:
    # A fresh face per call: FreeType faces must not be shared between threads.
    data = resources.files("sudokupool.images").joinpath("fonts", name).read_bytes()
    return ImageFont.truetype(io.BytesIO(data), px)


def _tiles(font_name: str, cell: int, px: int, first_index: int) -> tuple[Image.Image, ...]:
    font = _font(font_name, px)
    digits = "123456789"
    # One common vertical placement so all digits share a baseline; each centred horizontally on its ink.
    boxes = [font.getbbox(d, anchor="ls") for d in digits]
    top = min(b[1] for b in boxes)
    bottom = max(b[3] for b in boxes)
    baseline = round(cell / 2 - (top + bottom) / 2)
    lut = [0] + [first_index - 1 + max(1, round(v * LEVELS / 255)) for v in range(1, 256)]
    tiles = []
    for d, (left, _, right, _) in zip(digits, boxes, strict=True):
        coverage = Image.new("L", (cell, cell), 0)
        ImageDraw.Draw(coverage).text(
            (round(cell / 2 - (left + right) / 2), baseline), d, fill=255, font=font, anchor="ls"
        )
        indices = coverage.point(lut)
        tiles.append(Image.frombytes("P", indices.size, indices.tobytes()))
    return tuple(tiles)


@lru_cache(maxsize=LAYOUTS_KEPT)
def _layout(size: int) -> _Layout:
    thin = max(1, size // 400)
    thick = max(2, round(size / 160))
    margin = max(thick + 2, round(size * 0.025))
    cell = (size - 2 * margin) // 9
    origin = (size - 9 * cell) // 2
    px = round(cell * _DIGIT_SHARE / _DIGIT_HEIGHT_PER_EM)
    return _Layout(
        size=size,
        origin=origin,
        cell=cell,
        thin=thin,
        thick=thick,
        given=_tiles(FONT_GIVEN, cell, px, 1),
        filled=_tiles(FONT_FILLED, cell, px, 1 + LEVELS),
    )


def _check(puzzle: str, solution: str, variant: str, size: int, compress_level: int) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"size must be between {MIN_SIZE} and {MAX_SIZE} pixels, got {size}")
    if not 0 <= compress_level <= 9:
        raise ValueError(f"compress_level must be between 0 and 9, got {compress_level}")
    if len(puzzle) != 81 or not set(puzzle) <= set("123456789."):
        raise ValueError("puzzle must be 81 characters, each 1-9 or '.'")
    if variant == "solution":
        if len(solution) != 81 or not set(solution) <= set("123456789"):
            raise ValueError("solution must be 81 digits 1-9")
        if any(p not in (".", s) for p, s in zip(puzzle, solution, strict=True)):
            raise ValueError("solution disagrees with a given of the puzzle")


def _picture(puzzle: str, solution: str, variant: Variant, size: int) -> Image.Image:
    layout = _layout(size)
    image = Image.new("P", (size, size), 0)
    cell, origin = layout.cell, layout.origin
    for i, ch in enumerate(puzzle):
        if ch != ".":
            tile = layout.given[int(ch) - 1]
        elif variant == "solution":
            tile = layout.filled[int(solution[i]) - 1]
        else:
            continue
        row, col = divmod(i, 9)
        image.paste(tile, (origin + col * cell, origin + row * cell))
    _draw_grid(ImageDraw.Draw(image), layout)
    image.putpalette(_PALETTE_SOLUTION if variant == "solution" else _PALETTE_PUZZLE)
    return image


def render_png(
    puzzle: str,
    solution: str,
    variant: Variant,
    *,
    size: int = DEFAULT_SIZE,
    compress_level: int = PNG_COMPRESS_LEVEL,
) -> bytes:
    """Return a ``size`` x ``size`` palette PNG of the puzzle (``"puzzle"``) or its solved grid (``"solution"``).

    ``puzzle`` is 81 characters, row-major, ``1``-``9`` or ``.``; ``solution`` is 81 digits and is only
    read for the solution variant, where the givens keep their bold dark ink and the other cells get the
    solution's digits in the lighter blue ink. Raises ``ValueError`` for a malformed grid, a solution
    that contradicts a given, an unknown variant or a size outside ``MIN_SIZE``..``MAX_SIZE``.
    ``compress_level`` is zlib's 0-9 (9 is Pillow's ``optimize``: slowest, smallest).
    CPU-bound (a few milliseconds, holding the GIL for most of it): call it off the event loop,
    e.g. as a job of the work pool (:class:`~sudokupool.work.WorkPool`).
    """
    _check(puzzle, solution, variant, size, compress_level)
    out = io.BytesIO()
    _picture(puzzle, solution, variant, size).save(out, format="PNG", compress_level=compress_level)
    return out.getvalue()


def render_webp(puzzle: str, solution: str, variant: Variant, *, size: int = DEFAULT_SIZE) -> bytes:
    """The PNG's picture as a lossless ``size`` x ``size`` WebP (same arguments and errors as :func:`render_png`).

    CPU-bound like :func:`render_png` (about as long again as the PNG): call it off the event loop.
    """
    _check(puzzle, solution, variant, size, PNG_COMPRESS_LEVEL)
    out = io.BytesIO()
    # WebP has no palette mode of its own: the encoder takes RGB and finds the 16 colours again.
    _picture(puzzle, solution, variant, size).convert("RGB").save(out, format="WEBP", **WEBP_OPTIONS)
    return out.getvalue()


# The SVG's own coordinates: a 30-unit margin, cells of 100 and the PNG's line weights and digit height in
# proportion (lines of size/160 and size/400 at 960 units; digits 54 % of a cell high). Its width and height
# attributes carry the requested size; the drawing scales to it.
_SVG_VIEW: Final = 960
_SVG_MARGIN: Final = 30
_SVG_CELL: Final = 100
_SVG_THICK: Final = 6
_SVG_THIN: Final = 2.4
# Font size whose digits (0.729 em high in DejaVu Sans, 0.716 in Arial) stand 54 units tall; the baseline
# sits half a digit below the cell's centre, so no renderer's own vertical alignment is relied on.
_SVG_FONT_SIZE: Final = round(_SVG_CELL * _DIGIT_SHARE / _DIGIT_HEIGHT_PER_EM)
_SVG_BASELINE: Final = round(_SVG_CELL / 2 + _SVG_CELL * _DIGIT_SHARE / 2)
# A generic stack: the PNG's font where the reader has it, then common sans-serif faces with tabular digits.
SVG_FONTS: Final = "'DejaVu Sans', Verdana, Arial, Helvetica, sans-serif"


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#" + "".join(f"{c:02x}" for c in rgb)


def _thin_grey() -> str:
    # The PNG's thin lines: the given ink at partial coverage over the paper.
    r, g, b = (round(p + (i - p) * THIN_LINE_LEVEL / LEVELS) for p, i in zip(PAPER, INK_GIVEN, strict=True))
    return _hex((r, g, b))


def _svg_lines(keep: Callable[[int], bool]) -> str:
    lo, hi = _SVG_MARGIN, _SVG_MARGIN + 9 * _SVG_CELL
    parts = []
    for k in range(10):
        if keep(k):
            at = _SVG_MARGIN + k * _SVG_CELL
            parts.append(f"M{at} {lo}V{hi}M{lo} {at}H{hi}")
    return "".join(parts)


def _svg_parts() -> tuple[str, str, tuple[str, ...]]:
    # The board and each cell's opening tag are the same for every grid, so a render is one join.
    head = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
        f'viewBox="0 0 {_SVG_VIEW} {_SVG_VIEW}" role="img" aria-label="{{label}}">'
        "<title>{label}</title>"
        f'<rect width="{_SVG_VIEW}" height="{_SVG_VIEW}" fill="{_hex(PAPER)}"/>'
        f'<path d="{_svg_lines(lambda k: k % 3 != 0)}" stroke="{_thin_grey()}" stroke-width="{_SVG_THIN}"/>'
        f'<path d="{_svg_lines(lambda k: k % 3 == 0)}" stroke="{_hex(INK_GIVEN)}" stroke-width="{_SVG_THICK}" '
        'stroke-linecap="square"/>'
        f'<g font-family="{SVG_FONTS}" font-size="{_SVG_FONT_SIZE}" text-anchor="middle" '
        f'fill="{_hex(INK_GIVEN)}" font-weight="bold">'
    )
    cells = []
    for i in range(81):
        row, col = divmod(i, 9)
        x = _SVG_MARGIN + col * _SVG_CELL + _SVG_CELL // 2
        y = _SVG_MARGIN + row * _SVG_CELL + _SVG_BASELINE
        cells.append(f'<text x="{x}" y="{y}"')
    # Filled digits: the PNG's regular weight and blue ink, as attributes (no <style>: some SVG readers skip CSS).
    filled = f' font-weight="normal" fill="{_hex(INK_FILLED)}"'
    return head, filled, tuple(cells)


_SVG_HEAD, _SVG_FILLED, _SVG_CELLS = _svg_parts()


def render_svg(puzzle: str, solution: str, variant: Variant, *, size: int = DEFAULT_SIZE) -> bytes:
    """The grid as a small SVG document (UTF-8) whose ``width`` and ``height`` are ``size``; it stays a vector.

    Each digit is one ``<text>`` element, in row order (so it can be selected, read aloud and found);
    givens are bold near-black, filled digits regular blue, as in the PNG. The digits use a generic font
    stack and nothing outside the document is referenced. Same arguments and errors as :func:`render_png`.
    About 10 us: string joins of parts prepared at import.
    """
    _check(puzzle, solution, variant, size, PNG_COMPRESS_LEVEL)
    label = "Sudoku solution" if variant == "solution" else "Sudoku puzzle"
    parts = [_SVG_HEAD.format(size=size, label=label)]
    for i, ch in enumerate(puzzle):
        if ch != ".":
            parts.append(f"{_SVG_CELLS[i]}>{ch}</text>")
        elif variant == "solution":
            parts.append(f"{_SVG_CELLS[i]}{_SVG_FILLED}>{solution[i]}</text>")
    parts.append("</g></svg>")
    return "".join(parts).encode()


def render(fmt: Format, puzzle: str, solution: str, variant: Variant, size: int = DEFAULT_SIZE) -> bytes:
    """The picture in ``fmt`` (``png``, ``svg`` or ``webp``); see :func:`render_png`, :func:`render_webp`,
    :func:`render_svg`. Picklable with its arguments (``functools.partial``), for a process pool."""
    if fmt == "png":
        return render_png(puzzle, solution, variant, size=size)
    if fmt == "webp":
        return render_webp(puzzle, solution, variant, size=size)
    if fmt == "svg":
        return render_svg(puzzle, solution, variant, size=size)
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def _draw_grid(draw: ImageDraw.ImageDraw, layout: _Layout) -> None:
    # Thin lines first, then the box lines over them, so crossings are always the heavy ink.
    for heavy in (False, True):
        width = layout.thick if heavy else layout.thin
        fill = BOX_LINE_LEVEL if heavy else THIN_LINE_LEVEL
        lo = layout.origin - layout.thick // 2
        hi = lo + 9 * layout.cell + layout.thick - 1
        for k in range(10):
            if (k % 3 == 0) != heavy:
                continue
            start = layout.origin + k * layout.cell - width // 2
            end = start + width - 1
            draw.rectangle((start, lo, end, hi), fill=fill)
            draw.rectangle((lo, start, hi, end), fill=fill)
