from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from sudokupool.exporting import writer as writer_module
from tests.factories import read_export


def test_a_gzip_export_is_readable_while_it_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer_module, "FLUSH_EVERY", -1.0)  # flush after every record
    snapshot = min((Path(__file__).resolve().parents[2] / "snapshots").glob("pool-*.ndjson.gz"))
    lines = read_export(snapshot)[:3]
    with writer_module.ExportWriter(tmp_path, gzipped=True, pack=True) as writer:
        for line in lines:
            writer.add_line(line + b"\n")
            inflated = zlib.decompressobj(wbits=31).decompress(writer.path.read_bytes())
            assert inflated.splitlines() == lines[: writer.count]
    assert list(tmp_path.iterdir()) == []  # never committed: removed
