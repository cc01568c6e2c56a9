"""What the rendered pictures show: size, mode, grid geometry, and the right digit in the right ink per cell.

The digit check is independent of the renderer's glyph tiles: reference glyphs are drawn here straight
from the shipped font files at another size, cropped to their ink and scaled to a common shape, and
each cell's ink is matched against them (digit and weight, so bold givens and regular filled digits).
"""

from __future__ import annotations

import concurrent.futures
import io
import random
from functools import cache
from importlib import resources

import pytest
from PIL import Image, ImageDraw, ImageFont

from sudokupool.images import render as render_module
from sudokupool.images.render import (
    DEFAULT_SIZE,
    FONT_FILLED,
    FONT_GIVEN,
    VARIANTS,
    Format,
    Variant,
    render,
    render_png,
)

PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
WHITE = (255, 255, 255)
SHAPE = (20, 28)  # normalised glyph shape for matching


def relabel(seed: int, clues: int) -> tuple[str, str]:
    """A different valid puzzle/solution pair: the base solution with its digits permuted, ``clues`` kept."""
    rng = random.Random(seed)
    perm = dict(zip("123456789", rng.sample("123456789", 9), strict=True))
    solution = "".join(perm[d] for d in SOLUTION)
    keep = set(rng.sample(range(81), clues))
    return "".join(d if i in keep else "." for i, d in enumerate(solution)), solution


PAIRS = [
    pytest.param(PUZZLE, SOLUTION, id="classic-30-clues"),
    pytest.param(*relabel(1, 17), id="sparse-17-clues"),
    pytest.param(*relabel(2, 45), id="easy-45-clues"),
    pytest.param("." * 81, SOLUTION, id="no-givens"),
    pytest.param(SOLUTION, SOLUTION, id="all-givens"),
]


def decode(data: bytes, size: int) -> Image.Image:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(io.BytesIO(data))
    image.load()
    assert image.format == "PNG"
    assert image.size == (size, size)
    assert image.mode == "P"
    return image


def cell_boxes(rgb: Image.Image) -> list[tuple[int, int, int, int]]:
    """Inner sampling box of each of the 81 cells, found from the drawn grid (its outer border)."""
    grey = rgb.convert("L")
    left, top, right, bottom = Image.eval(grey, lambda v: 255 - v).getbbox() or (0, 0, 0, 0)
    extent = right - left
    assert extent == bottom - top
    assert extent > rgb.width * 0.85  # the grid fills the picture, with a small margin
    # The border's thickness, measured across the left border halfway down the first row of cells.
    y = top + extent // 18
    border = next(x for x in range(left, right) if grey.getpixel((x, y)) == 255) - left
    pitch = (extent - border) / 9
    boxes = []
    for i in range(81):
        row, col = divmod(i, 9)
        x0, y0 = left + border / 2 + col * pitch, top + border / 2 + row * pitch
        # Keep clear of the lines (at most a border's width) but wide enough to hold the whole digit.
        inset = border / 2 + 1
        boxes.append((round(x0 + inset), round(y0 + inset), round(x0 + pitch - inset), round(y0 + pitch - inset)))
    return boxes


def normalise(coverage: Image.Image) -> Image.Image:
    """Crop an ink-coverage image (0 paper, 255 ink) to its ink and scale it to ``SHAPE``."""
    bbox = coverage.getbbox()
    assert bbox is not None
    return coverage.crop(bbox).resize(SHAPE, Image.Resampling.BILINEAR)


@cache
def references() -> dict[tuple[str, str], bytes]:
    """(digit, style) -> normalised coverage bytes, drawn from the shipped fonts at 96 px."""
    refs = {}
    for style, name in (("given", FONT_GIVEN), ("filled", FONT_FILLED)):
        data = resources.files("sudokupool.images").joinpath("fonts", name).read_bytes()
        font = ImageFont.truetype(io.BytesIO(data), 96)
        for digit in "123456789":
            canvas = Image.new("L", (160, 160), 0)
            ImageDraw.Draw(canvas).text((80, 80), digit, fill=255, font=font, anchor="mm")
            refs[digit, style] = normalise(canvas).tobytes()
    return refs


def read_cell(rgb: Image.Image, box: tuple[int, int, int, int]) -> tuple[str, str] | None:
    """(digit, style) drawn in the box, or None when it is blank paper. Style comes from the ink colour."""
    crop = rgb.crop(box)
    if crop.getextrema() == ((255, 255), (255, 255), (255, 255)):
        return None
    raw = crop.tobytes()
    darkest = min((tuple(raw[i : i + 3]) for i in range(0, len(raw), 3)), key=sum)
    r, g, b = darkest
    if max(darkest) - min(darkest) < 16 and max(darkest) < 60:
        style = "given"  # neutral, near-black ink
    elif b - r > 80 and b > g:
        style = "filled"  # clearly blue ink
    else:
        raise AssertionError(f"ink colour {darkest} is neither the given nor the filled ink")
    coverage = Image.eval(crop.convert("L"), lambda v: 255 - v)
    shape = normalise(coverage).tobytes()
    # Match against the glyphs of the font that ink colour stands for (bold for givens, regular for filled).
    scores = {d: sum(abs(a - c) for a, c in zip(shape, references()[d, style], strict=True)) for d in "123456789"}
    digit = min(scores, key=lambda d: scores[d])
    return digit, style


def read_grid(data: bytes, size: int) -> list[tuple[str, str] | None]:
    rgb = decode(data, size).convert("RGB")
    return [read_cell(rgb, box) for box in cell_boxes(rgb)]


@pytest.mark.parametrize(("puzzle", "solution"), PAIRS)
def test_puzzle_image_shows_exactly_the_givens(puzzle: str, solution: str) -> None:
    cells = read_grid(render_png(puzzle, solution, "puzzle"), DEFAULT_SIZE)
    expected = [None if ch == "." else (ch, "given") for ch in puzzle]
    assert cells == expected


@pytest.mark.parametrize(("puzzle", "solution"), PAIRS)
def test_solution_image_shows_givens_and_filled_digits_apart(puzzle: str, solution: str) -> None:
    cells = read_grid(render_png(puzzle, solution, "solution"), DEFAULT_SIZE)
    expected = [(s, "given" if p != "." else "filled") for p, s in zip(puzzle, solution, strict=True)]
    assert all(cell is not None for cell in cells)
    assert cells == expected


@pytest.mark.parametrize(
    "size",
    [
        pytest.param(200, id="small-200"),
        pytest.param(render_module.MAX_SIZE, id="largest"),
        pytest.param(301, id="odd-301"),
        pytest.param(1000, id="large-1000"),
    ],
)
def test_other_sizes_show_the_same_grid(size: int) -> None:
    cells = read_grid(render_png(PUZZLE, SOLUTION, "solution", size=size), size)
    assert cells == [(s, "given" if p != "." else "filled") for p, s in zip(PUZZLE, SOLUTION, strict=True)]


def test_the_smallest_size_inks_every_cell_as_the_larger_ones_do() -> None:
    # 10 px cells hold 7 px digits: too coarse for the glyph matcher, so the digit itself is not read here.
    cells = read_grid(render_png(PUZZLE, SOLUTION, "solution", size=render_module.MIN_SIZE), render_module.MIN_SIZE)
    assert [None if c is None else c[1] for c in cells] == ["given" if p != "." else "filled" for p in PUZZLE]
    blank = read_grid(render_png(PUZZLE, SOLUTION, "puzzle", size=render_module.MIN_SIZE), render_module.MIN_SIZE)
    assert [c is None for c in blank] == [p == "." for p in PUZZLE]


def test_givens_look_the_same_in_both_variants() -> None:
    puzzle_rgb = decode(render_png(PUZZLE, SOLUTION, "puzzle"), DEFAULT_SIZE).convert("RGB")
    solution_rgb = decode(render_png(PUZZLE, SOLUTION, "solution"), DEFAULT_SIZE).convert("RGB")
    for ch, box in zip(PUZZLE, cell_boxes(puzzle_rgb), strict=True):
        if ch != ".":
            assert puzzle_rgb.crop(box).tobytes() == solution_rgb.crop(box).tobytes()


def test_grid_has_heavier_box_lines_than_cell_lines() -> None:
    rgb = decode(render_png("." * 81, SOLUTION, "puzzle"), DEFAULT_SIZE).convert("L")
    # Scan across the middle of the first row of cells: every run of non-white pixels is a vertical line.
    boxes = cell_boxes(rgb.convert("RGB"))
    y = (boxes[0][1] + boxes[0][3]) // 2
    runs: list[tuple[int, int]] = []  # (width, darkest value)
    for x in range(rgb.width):
        value = rgb.getpixel((x, y))
        assert isinstance(value, int)
        if value < 255:
            if runs and runs[-1][0] < 0:
                width, dark = runs[-1]
                runs[-1] = (width - 1, min(dark, value))
            else:
                runs.append((-1, value))
        elif runs and runs[-1][0] < 0:
            runs[-1] = (-runs[-1][0], runs[-1][1])
    assert len(runs) == 10
    heavy = [runs[k] for k in (0, 3, 6, 9)]
    light = [runs[k] for k in (1, 2, 4, 5, 7, 8)]
    assert min(w for w, _ in heavy) > max(w for w, _ in light)
    assert max(d for _, d in heavy) < min(d for _, d in light)  # box lines are darker too


@pytest.mark.parametrize(
    ("variant", "limit"), [pytest.param("puzzle", 8_000, id="puzzle"), pytest.param("solution", 14_000, id="solution")]
)
def test_files_are_small_4_bit_palette_pngs(variant: Variant, limit: int) -> None:
    data = render_png(PUZZLE, SOLUTION, variant)
    assert len(data) < limit
    assert len(decode(data, DEFAULT_SIZE).getpalette() or []) <= 16 * 3
    assert data[24] == 4  # IHDR bit depth: paper and both inks fit in 16 colours


def test_every_compress_level_gives_the_same_picture() -> None:
    pictures = {
        level: decode(render_png(PUZZLE, SOLUTION, "solution", compress_level=level), DEFAULT_SIZE).convert("RGB")
        for level in (0, 6, 9)
    }
    assert pictures[0].tobytes() == pictures[6].tobytes() == pictures[9].tobytes()


def test_rendering_is_deterministic_and_thread_safe() -> None:
    jobs = [(PUZZLE, SOLUTION, variant, size) for size in (200, 233, 260) for variant in VARIANTS] * 3
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda job: render_png(job[0], job[1], job[2], size=job[3]), jobs))
    serial = [render_png(p, s, v, size=n) for p, s, v, n in jobs]
    assert parallel == serial


@pytest.mark.parametrize(
    ("puzzle", "solution", "variant", "size", "message"),
    [
        pytest.param(PUZZLE[:80], SOLUTION, "puzzle", DEFAULT_SIZE, "puzzle must be 81", id="short-puzzle"),
        pytest.param(PUZZLE.replace(".", "0"), SOLUTION, "puzzle", DEFAULT_SIZE, "puzzle must be 81", id="zero-empty"),
        pytest.param(PUZZLE, SOLUTION[:80], "solution", DEFAULT_SIZE, "solution must be 81", id="short-solution"),
        pytest.param(PUZZLE, "." * 81, "solution", DEFAULT_SIZE, "solution must be 81", id="unsolved-solution"),
        pytest.param("6" + PUZZLE[1:], SOLUTION, "solution", DEFAULT_SIZE, "disagrees", id="contradicting-given"),
        pytest.param(PUZZLE, SOLUTION, "answer", DEFAULT_SIZE, "variant must be one of puzzle, solution", id="variant"),
        pytest.param(PUZZLE, SOLUTION, "puzzle", render_module.MIN_SIZE - 1, "size must be", id="too-small"),
        pytest.param(PUZZLE, SOLUTION, "puzzle", render_module.MAX_SIZE + 1, "size must be", id="too-large"),
    ],
)
def test_rejects_bad_input(puzzle: str, solution: str, variant: str, size: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render_png(puzzle, solution, variant, size=size)  # type: ignore[arg-type]


def test_rejects_bad_compress_level() -> None:
    with pytest.raises(ValueError, match="compress_level must be between 0 and 9"):
        render_png(PUZZLE, SOLUTION, "puzzle", compress_level=10)


def test_puzzle_variant_does_not_need_the_solution() -> None:
    cells = read_grid(render_png(PUZZLE, "", "puzzle"), DEFAULT_SIZE)
    assert cells == [None if ch == "." else (ch, "given") for ch in PUZZLE]


@pytest.mark.parametrize("fmt", ["svg", "webp"])
def test_the_other_formats_check_their_input_as_the_png_does(fmt: Format) -> None:
    with pytest.raises(ValueError, match="disagrees"):
        render(fmt, "6" + PUZZLE[1:], SOLUTION, "solution")
    with pytest.raises(ValueError, match="size must be"):
        render(fmt, PUZZLE, SOLUTION, "puzzle", render_module.MAX_SIZE + 1)


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="format must be one of png, svg, webp"):
        render("gif", PUZZLE, SOLUTION, "puzzle")  # type: ignore[arg-type]


def test_the_layouts_of_only_the_last_sizes_drawn_are_kept() -> None:
    layout = render_module._layout
    layout.cache_clear()
    sizes = range(100, 2001, 50)
    for size in sizes:
        render_png(PUZZLE, SOLUTION, "puzzle", size=size)
    assert layout.cache_info().currsize == render_module.LAYOUTS_KEPT
    # The last sizes drawn are still there (hits); the first one is not (a miss).
    for size in sizes[-render_module.LAYOUTS_KEPT :]:
        layout(size)
    assert layout.cache_info().misses == len(sizes)
    layout(100)
    assert layout.cache_info().misses == len(sizes) + 1
