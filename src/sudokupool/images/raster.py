"""The raster pictures of :mod:`sudokupool.images.render`: PNG, and WebP from the same raster, drawn with Pillow.

This module is imported by the first PNG or WebP asked for, not with the app: a worker that never draws one
does not hold Pillow's modules (1.3 MB of each worker's private memory).

The output is a palette PNG: the anti-aliased edges are quantised to 7 coverage levels per ink, so
paper and both inks fit in 16 colours and both variants are 4-bit PNGs of a few kilobytes. (At 15
levels per ink the solution needs an 8-bit PNG, about 15% larger, with no difference to be seen
even at 3x zoom.) zlib level 7 takes a sixth to an eighth of the time of level 9 (Pillow's
``optimize``) for 2-5% more bytes; see python -m bench render.

Rendering is cheap because each digit is rasterised once per (size, style) into a cell-sized tile
of palette indices; a picture is then 81 tile pastes, a few rectangles and the PNG encoder. The
tiles are built under a lock and only read afterwards, so :func:`png` is safe to call from
several threads at once (FreeType faces themselves are not thread-safe, and never shared here).

WebP is the same raster as the PNG, encoded losslessly (method 0, quality 100: 7.7 KB and 4 ms for a
480 px solution, where lossy quality 80 gave 30 KB of blurred lines).
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from importlib import resources
from typing import Final

from PIL import Image, ImageDraw, ImageFont

from sudokupool.images.render import (
    BOX_LINE_LEVEL,
    DIGIT_HEIGHT_PER_EM,
    DIGIT_SHARE,
    FONT_FILLED,
    FONT_GIVEN,
    INK_FILLED,
    INK_GIVEN,
    LEVELS,
    PAPER,
    THIN_LINE_LEVEL,
    Variant,
)

WEBP_OPTIONS: Final = {"lossless": True, "method": 0, "quality": 100}


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
            thick = max(2, round(size / 160))
            margin = max(thick + 2, round(size * 0.025))
            cell = (size - 2 * margin) // 9
            origin = (size - 9 * cell) // 2
            px = round(cell * DIGIT_SHARE / DIGIT_HEIGHT_PER_EM)
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


def png(puzzle: str, solution: str, variant: Variant, size: int, compress_level: int) -> bytes:
    """The palette PNG of :func:`sudokupool.images.render.render_png`, its arguments checked there."""
    out = io.BytesIO()
    _picture(puzzle, solution, variant, size).save(out, format="PNG", compress_level=compress_level)
    return out.getvalue()


def webp(puzzle: str, solution: str, variant: Variant, size: int) -> bytes:
    """The PNG's picture as a lossless WebP (:func:`sudokupool.images.render.render_webp`)."""
    out = io.BytesIO()
    # WebP has no palette mode of its own: the encoder takes RGB and finds the 16 colours again.
    _picture(puzzle, solution, variant, size).convert("RGB").save(out, format="WEBP", **WEBP_OPTIONS)
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
