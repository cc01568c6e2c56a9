"""PNG pictures of a puzzle grid or its solved grid.

The picture is a white square with a 9x9 grid (thin cell lines, heavier 3x3 box lines and border)
and the digits in DejaVu Sans, which ships inside the package (``fonts/``) so no system font is
needed. Givens are bold near-black; the digits a solution fills in are regular weight in a blue ink,
so the two read apart at a glance, in colour and in grey-scale print alike.

The output is a palette PNG: the anti-aliased edges are quantised to 7 coverage levels per ink, so
paper and both inks fit in 16 colours and both variants are 4-bit PNGs of a few kilobytes. (At 15
levels per ink the solution needs an 8-bit PNG, about 15% larger, with no difference to be seen
even at 3x zoom.) zlib level 7 takes a sixth to an eighth of the time of level 9 (Pillow's
``optimize``) for 2-5% more bytes; see bench/bench_render.py.

Rendering is cheap because each digit is rasterised once per (size, style) into a cell-sized tile
of palette indices; a picture is then 81 tile pastes, a few rectangles and the PNG encoder. The
tiles are built under a lock and only read afterwards, so :func:`render_png` is safe to call from
several threads at once (FreeType faces themselves are not thread-safe, and never shared here).
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from importlib import resources
from typing import Final, Literal, get_args

from PIL import Image, ImageDraw, ImageFont

Variant = Literal["puzzle", "solution"]
VARIANTS: Final[tuple[Variant, ...]] = get_args(Variant)

DEFAULT_SIZE: Final = 480
MIN_SIZE: Final = 200
MAX_SIZE: Final = 2048
PNG_COMPRESS_LEVEL: Final = 7

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


_layouts: dict[int, _Layout] = {}
_layouts_lock = threading.Lock()


def _font(name: str, px: int) -> ImageFont.FreeTypeFont:
    # A fresh face per call: FreeType faces must not be shared between threads.
    data = resources.files("sudokupool").joinpath("fonts", name).read_bytes()
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


def _layout(size: int) -> _Layout:
    layout = _layouts.get(size)
    if layout is not None:
        return layout
    with _layouts_lock:
        layout = _layouts.get(size)
        if layout is None:
            thin = max(1, size // 400)
            thick = max(3, round(size / 160))
            margin = max(thick + 2, round(size * 0.025))
            cell = (size - 2 * margin) // 9
            origin = (size - 9 * cell) // 2
            px = round(cell * _DIGIT_SHARE / _DIGIT_HEIGHT_PER_EM)
            layout = _Layout(
                size=size,
                origin=origin,
                cell=cell,
                thin=thin,
                thick=thick,
                given=_tiles(FONT_GIVEN, cell, px, 1),
                filled=_tiles(FONT_FILLED, cell, px, 1 + LEVELS),
            )
            _layouts[size] = layout
    return layout


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
    e.g. through ``RenderCache``.
    """
    _check(puzzle, solution, variant, size, compress_level)
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
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=compress_level)
    return out.getvalue()


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
