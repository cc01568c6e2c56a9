"""The image endpoint's formats and sizes, against the real server (``sudokupool serve``, as the Procfile does).

PNG and WebP are decoded with Pillow and compared pixel for pixel; the SVG is parsed as XML and its
``<text>`` elements are read back as the grid, checked against the puzzle and its solution. The render
cache's byte budget is watched on the metrics port while distinct representations flood in.
"""

from __future__ import annotations

import concurrent.futures
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image, features

from sudokupool.images.render import render_png
from tests.helpers import free_port
from tests.servers import Server, run_server

# Each test here starts the service (or drives one started for the module) as the Procfile does.
pytestmark = pytest.mark.slow

SVG_NS = "{http://www.w3.org/2000/svg}"
# The SVG's own coordinates (render.py): a 30-unit margin and cells of 100.
MARGIN, CELL = 30, 100


@pytest.fixture(scope="module")
def server(export_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("images") / "server.log"
    # A limit no test reaches: these tests count representations, not requests.
    with run_server({"SUDOKUPOOL_EXPORTS": str(export_dir), "SUDOKUPOOL_LIMIT_ANONYMOUS": "100000"}, log) as server:
        yield server


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def image_url(record: dict[str, Any]) -> str:
    return f"/api/v2/puzzles/{record['canonical_id']}/image"


def decode(data: bytes, fmt: str, size: int) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    assert image.format == fmt
    assert image.size == (size, size)
    return image


def test_pillow_here_reads_webp() -> None:
    assert features.check("webp"), "Pillow was built without WebP: the WebP tests cannot decode the answers"


def test_the_default_answer_is_the_480_px_png_it_always_was(http: httpx.Client, records: list[dict[str, Any]]) -> None:
    record = records[3]
    for variant in ("puzzle", "solution"):
        default = http.get(image_url(record), params={"variant": variant})
        explicit = http.get(image_url(record), params={"variant": variant, "format": "png", "size": "480"})
        assert default.status_code == explicit.status_code == 200
        assert default.headers["content-type"] == "image/png"
        assert default.content == explicit.content == render_png(record["puzzle"], record["solution"], variant)
        assert default.headers["etag"] == explicit.headers["etag"]
        assert default.headers["etag"].endswith(f'-{variant[0]}"')


@pytest.mark.parametrize("size", [100, 333, 480, 2000])
@pytest.mark.parametrize("variant", ["puzzle", "solution"])
def test_png_and_webp_are_exactly_the_size_asked_and_the_same_picture(
    http: httpx.Client, records: list[dict[str, Any]], variant: str, size: int
) -> None:
    record = records[5]
    png = http.get(image_url(record), params={"variant": variant, "size": size})
    webp = http.get(image_url(record), params={"variant": variant, "size": size, "format": "webp"})
    assert (png.status_code, png.headers["content-type"]) == (200, "image/png")
    assert (webp.status_code, webp.headers["content-type"]) == (200, "image/webp")
    png_pixels = decode(png.content, "PNG", size).convert("RGB")
    webp_pixels = decode(webp.content, "WEBP", size).convert("RGB")
    # Lossless: the WebP is the PNG's picture, pixel for pixel.
    assert webp_pixels.tobytes() == png_pixels.tobytes()
    assert png.content == render_png(record["puzzle"], record["solution"], variant, size=size)  # type: ignore[arg-type]


def read_svg(data: bytes) -> tuple[ET.Element, list[tuple[int, str, str]]]:
    """The root and every ``<text>`` as (cell index, digit, "given" or "filled"), in document order."""
    root = ET.fromstring(data)
    assert root.tag == f"{SVG_NS}svg"
    cells = []
    for text in root.iter(f"{SVG_NS}text"):
        x, y = float(text.attrib["x"]), float(text.attrib["y"])
        col, row = int((x - MARGIN) // CELL), int((y - MARGIN) // CELL)
        assert 0 <= col < 9 and 0 <= row < 9
        style = "filled" if text.attrib.get("font-weight") == "normal" else "given"
        cells.append((row * 9 + col, text.text or "", style))
    return root, cells


@pytest.mark.parametrize("size", [100, 480, 2000])
def test_svg_draws_each_digit_as_text_in_row_order(
    http: httpx.Client, records: list[dict[str, Any]], size: int
) -> None:
    record = records[6]
    puzzle, solution = record["puzzle"], record["solution"]
    for variant in ("puzzle", "solution"):
        response = http.get(image_url(record), params={"variant": variant, "format": "svg", "size": size})
        assert response.status_code == 200
        assert response.headers["content-type"] == "image/svg+xml"
        root, cells = read_svg(response.content)
        # It declares the size asked and stays a vector drawing in its own coordinates.
        assert (root.attrib["width"], root.attrib["height"]) == (str(size), str(size))
        assert root.attrib["viewBox"] == "0 0 960 960"
        expected = [
            (i, solution[i] if ch == "." else ch, "filled" if ch == "." else "given")
            for i, ch in enumerate(puzzle)
            if ch != "." or variant == "solution"
        ]
        assert cells == expected
        assert len(response.content) < 6000


def test_svg_tells_givens_from_filled_digits_as_the_png_does(http: httpx.Client, records: list[dict[str, Any]]) -> None:
    response = http.get(image_url(records[6]), params={"variant": "solution", "format": "svg"})
    root, _ = read_svg(response.content)
    (group,) = root.iter(f"{SVG_NS}g")
    given_ink = group.attrib["fill"]
    filled_inks = {t.attrib["fill"] for t in group if t.attrib.get("font-weight") == "normal"}
    # The PNG's inks (render.INK_GIVEN, INK_FILLED): near-black bold givens, blue regular filled digits.
    assert (group.attrib["font-weight"], given_ink, filled_inks) == ("bold", "#111111", {"#2563bf"})
    assert group.attrib["font-family"].endswith("sans-serif")


def test_svg_references_nothing_outside_itself(http: httpx.Client, records: list[dict[str, Any]]) -> None:
    data = http.get(image_url(records[8]), params={"variant": "solution", "format": "svg"}).content
    root = ET.fromstring(data)
    tags = {element.tag.removeprefix(SVG_NS) for element in root.iter()}
    assert tags == {"svg", "title", "rect", "path", "g", "text"}
    attributes = {name for element in root.iter() for name in element.attrib}
    assert not {name for name in attributes if "href" in name or name.startswith("on")}
    assert b"url(" not in data and b"@import" not in data and b"<!DOCTYPE" not in data


@pytest.mark.parametrize(
    "query",
    [
        pytest.param({"format": "SVG"}, id="SVG"),
        pytest.param({"format": "Svg", "variant": "SOLUTION"}, id="Svg-SOLUTION"),
        pytest.param({"format": "WebP", "variant": "Puzzle", "size": "250"}, id="WebP-Puzzle-250"),
        pytest.param({"format": "PNG", "variant": "Solution"}, id="PNG-Solution"),
    ],
)
def test_format_and_variant_take_any_case(
    http: httpx.Client, records: list[dict[str, Any]], query: dict[str, str]
) -> None:
    lower = {name: value.lower() for name, value in query.items()}
    asked = http.get(image_url(records[2]), params=query)
    plain = http.get(image_url(records[2]), params=lower)
    assert asked.status_code == plain.status_code == 200
    assert asked.content == plain.content
    assert asked.headers["etag"] == plain.headers["etag"]


FORMAT_ERROR = "format must be one of png, svg, webp"
SIZE_ERROR = "size must be a whole number of pixels from 100 to 2000"


@pytest.mark.parametrize(
    ("query", "error"),
    [
        pytest.param("format=jpg", FORMAT_ERROR, id="jpg"),
        pytest.param("format=", FORMAT_ERROR, id="empty-format"),
        pytest.param("format=svg%00", FORMAT_ERROR, id="nul-format"),
        pytest.param("size=99", SIZE_ERROR, id="too-small"),
        pytest.param("size=2001", SIZE_ERROR, id="too-large"),
        pytest.param("size=", SIZE_ERROR, id="empty-size"),
        pytest.param("size=abc", SIZE_ERROR, id="not-a-number"),
        pytest.param("size=480.0", SIZE_ERROR, id="decimal"),
        pytest.param("size=%2B480", SIZE_ERROR, id="plus-sign"),
        pytest.param("size=-480", SIZE_ERROR, id="negative"),
        pytest.param("size=%D9%A4%D9%A8%D9%A0", SIZE_ERROR, id="arabic-indic-digits"),
        pytest.param("size=" + "9" * 5000, SIZE_ERROR, id="huge"),
        pytest.param("variant=answer", "variant must be one of puzzle, solution", id="variant"),
    ],
)
def test_bad_parameters_are_a_json_400_naming_what_is_allowed(
    http: httpx.Client, records: list[dict[str, Any]], query: str, error: str
) -> None:
    response = http.get(f"{image_url(records[0])}?{query}")
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": error}


def test_a_size_with_a_leading_zero_is_that_whole_number(http: httpx.Client, records: list[dict[str, Any]]) -> None:
    response = http.get(f"{image_url(records[0])}?size=0480")
    assert response.status_code == 200
    assert response.content == http.get(image_url(records[0])).content


def test_an_unknown_id_is_404_in_every_format(http: httpx.Client) -> None:
    for fmt in ("png", "svg", "webp"):
        response = http.get("/api/v2/puzzles/NOSUCHPUZZLE0/image", params={"format": fmt})
        assert response.status_code == 404
        assert response.json() == {"error": "no puzzle has that id"}


def test_every_representation_has_its_own_etag_and_revalidates_to_304(
    http: httpx.Client, records: list[dict[str, Any]]
) -> None:
    url = image_url(records[9])
    tags: dict[tuple[str, str, int], str] = {}
    for variant in ("puzzle", "solution"):
        for fmt in ("png", "svg", "webp"):
            for size in (480, 600):
                response = http.get(url, params={"variant": variant, "format": fmt, "size": size})
                assert response.status_code == 200
                assert response.headers["cache-control"] == "public, max-age=3600"
                tags[variant, fmt, size] = response.headers["etag"]
    assert len(set(tags.values())) == len(tags) == 12
    for (variant, fmt, size), etag in tags.items():
        params = {"variant": variant, "format": fmt, "size": str(size)}
        again = http.get(url, params=params, headers={"If-None-Match": etag})
        assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", etag)
        # Another representation's tag is no match: the client gets this one's bytes.
        other = tags["solution" if variant == "puzzle" else "puzzle", "svg" if fmt != "svg" else "png", size]
        assert http.get(url, params=params, headers={"If-None-Match": other}).status_code == 200


def metric(text: str, name: str) -> float:
    match = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    assert match is not None, f"{name} not in the scrape"
    return float(match.group(1))


def test_a_flood_of_distinct_representations_never_overfills_the_cache(
    export_dir: Path, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    budget = 100_000
    metrics_port = free_port()
    env = {
        "SUDOKUPOOL_EXPORTS": str(export_dir),
        "SUDOKUPOOL_IMAGE_CACHE_BYTES": str(budget),
        "SUDOKUPOOL_METRICS_PORT": str(metrics_port),
    }
    # Distinct (id, variant, format, size): 40 puzzles x 3 formats x sizes from 100 to 1000, about 700 KB rendered.
    urls = [
        f"/api/v1/puzzles/{record['canonical_id']}/image?format={fmt}&size={100 + (i * 37 + j * 11) % 900}"
        f"&variant={'solution' if (i + j) % 2 else 'puzzle'}"
        for i, record in enumerate(records)
        for j, fmt in enumerate(("png", "svg", "webp"))
    ]
    scrape = f"http://127.0.0.1:{metrics_port}/metrics"
    with run_server(env, tmp_path / "server.log") as running, httpx.Client(base_url=running.url, timeout=60) as client:
        seen: list[float] = []
        total = 0
        with concurrent.futures.ThreadPoolExecutor(8) as flood:
            for start in range(0, len(urls), 8):
                batch = list(flood.map(client.get, urls[start : start + 8]))
                assert [r.status_code for r in batch] == [200] * len(batch)
                total += sum(len(r.content) for r in batch)
                seen.append(metric(httpx.get(scrape).text, "sudokupool_image_cache_bytes"))
        assert total > 5 * budget  # the flood was far larger than the budget
        assert max(seen) <= budget
        assert seen[-1] > budget / 2  # and the cache was in use, not refusing everything
