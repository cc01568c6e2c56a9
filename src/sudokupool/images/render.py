"""Pictures of a puzzle grid or its solved grid: PNG, WebP (the same raster) and SVG (a vector drawing).

The picture is a white square with a 9x9 grid (thin cell lines, heavier 3x3 box lines and border)
and the digits in DejaVu Sans, which ships inside the package (``fonts/``) so no system font is
needed. Givens are bold near-black; the digits a solution fills in are regular weight in a blue ink,
so the two read apart at a glance, in colour and in grey-scale print alike.

PNG and WebP are a palette raster drawn with Pillow (:mod:`sudokupool.images.raster`, imported by the
first such picture); the SVG draws the same layout in vector form: see :func:`render_svg`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal, get_args

Variant = Literal["puzzle", "solution"]
VARIANTS: Final[tuple[Variant, ...]] = get_args(Variant)
Format = Literal["png", "svg", "webp"]
FORMATS: Final[tuple[Format, ...]] = get_args(Format)
MEDIA_TYPES: Final[dict[Format, str]] = {"png": "image/png", "svg": "image/svg+xml", "webp": "image/webp"}

DEFAULT_SIZE: Final = 480
MIN_SIZE: Final = 100
MAX_SIZE: Final = 2000
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
DIGIT_SHARE: Final = 0.54
DIGIT_HEIGHT_PER_EM: Final = 1493 / 2048


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
    from sudokupool.images import raster  # Pillow, imported by the first raster picture (see there)

    return raster.png(puzzle, solution, variant, size, compress_level)


def render_webp(puzzle: str, solution: str, variant: Variant, *, size: int = DEFAULT_SIZE) -> bytes:
    """The PNG's picture as a lossless ``size`` x ``size`` WebP (same arguments and errors as :func:`render_png`).

    CPU-bound like :func:`render_png` (about as long again as the PNG): call it off the event loop.
    """
    _check(puzzle, solution, variant, size, PNG_COMPRESS_LEVEL)
    from sudokupool.images import raster

    return raster.webp(puzzle, solution, variant, size)


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
_SVG_FONT_SIZE: Final = round(_SVG_CELL * DIGIT_SHARE / DIGIT_HEIGHT_PER_EM)
_SVG_BASELINE: Final = round(_SVG_CELL / 2 + _SVG_CELL * DIGIT_SHARE / 2)
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
