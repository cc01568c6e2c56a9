from __future__ import annotations

import asyncio
import gzip
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sudokupool.cli import main
from sudokupool.config import Settings, parse_s3_url
from sudokupool.exporting.publish import PublishError, publish
from sudokupool.loading import packing, verify
from sudokupool.pool import pack
from sudokupool.storage.naming import pack_key
from tests.factories import write_export
from tests.helpers import free_port
from tests.seaweed import SeaweedS3

KEY = re.compile(r"pool-\d{8}T\d{6}Z\.ndjson(\.gz)?")


@pytest.fixture
def s3_settings(s3_env: SeaweedS3, monkeypatch: pytest.MonkeyPatch) -> SeaweedS3:
    monkeypatch.setenv("SUDOKUPOOL_S3_ENDPOINT_URL", s3_env.endpoint_url)
    return s3_env


def published(server: SeaweedS3, bucket: str, prefix: str) -> dict[str, bytes]:
    client = server.client()
    listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {item["Key"]: client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read() for item in listed}


@pytest.mark.parametrize(
    ("name", "flags", "suffix", "compressed"),
    [
        pytest.param("export.ndjson.gz", [], ".ndjson.gz", False, id="gzip-as-is"),
        pytest.param("export.ndjson", [], ".ndjson.gz", True, id="plain-gets-gzipped"),
        pytest.param("export.ndjson", ["--no-gzip"], ".ndjson", False, id="plain-kept"),
    ],
)
def test_publish_uploads_under_a_time_stamped_key(
    s3_settings: SeaweedS3,
    tmp_path: Path,
    records: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    name: str,
    flags: list[str],
    suffix: str,
    compressed: bool,
) -> None:
    bucket = s3_settings.new_bucket()
    path = write_export(tmp_path / name, records[:8])
    before = datetime.now(UTC).replace(microsecond=0)

    code = main(["publish", str(path), "--to", f"s3://{bucket}/exports/", *flags])

    out = capsys.readouterr()
    assert code == 0, out.err
    objects = published(s3_settings, bucket, "exports/")
    packs = {k: v for k, v in objects.items() if k.endswith(".pack")}
    [(key, body)] = ((k, v) for k, v in objects.items() if not k.endswith(".pack"))
    # The export goes up with its pack, made for the export as uploaded (its new name and size).
    assert list(packs) == [pack_key(key)]
    mapped = pack.read_header(packs[pack_key(key)], len(packs[pack_key(key)]))
    assert (mapped.export_name, mapped.export_size, mapped.count) == (key.removeprefix("exports/"), len(body), 8)
    assert out.out == f"s3://{bucket}/{key}\n"
    assert key.startswith("exports/pool-")
    assert key.endswith(suffix)
    assert KEY.fullmatch(key.removeprefix("exports/"))
    stamp = datetime.strptime(key[len("exports/pool-") :][:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    assert before <= stamp <= datetime.now(UTC)
    assert (gzip.decompress(body) if compressed else body) == path.read_bytes()
    assert "loaded 8 puzzles" in out.err


def test_publish_refuses_an_export_that_fails_check(
    s3_settings: SeaweedS3, tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    bucket = s3_settings.new_bucket()
    path = write_export(tmp_path / "export.ndjson.gz", records[:3], extra_lines=(b'{"not": "a record"}',))

    code = main(["publish", str(path), "--to", f"s3://{bucket}/"])

    out = capsys.readouterr()
    assert code == 1
    assert out.out == ""
    assert "line 4: missing-field" in out.err
    assert "sudokupool publish: not uploaded: cannot load export" in out.err
    assert "1 bad line of 4 read, more than SUDOKUPOOL_MAX_BAD_LINES=0.1% allows" in out.err
    assert published(s3_settings, bucket, "") == {}


def test_publish_applies_the_services_bound_on_bad_lines(
    s3_settings: SeaweedS3, tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    bucket = s3_settings.new_bucket()
    path = write_export(tmp_path / "export.ndjson.gz", records[:3], extra_lines=(b"[]",))

    code = main(["publish", str(path), "--to", f"s3://{bucket}/", "--max-bad-lines", "25%"])

    out = capsys.readouterr()
    assert code == 0
    assert "line 4: not-an-object" in out.err
    assert "loaded 3 puzzles, skipped 1" in out.err
    # The export and its pack, made within the same bound.
    assert sorted(key.rsplit(".", 1)[-1] for key in published(s3_settings, bucket, "")) == ["gz", "pack"]


def test_publish_refuses_a_file_that_is_not_there(s3_settings: SeaweedS3, tmp_path: Path) -> None:
    code = main(["publish", str(tmp_path / "missing.ndjson.gz"), "--to", "s3://bucket/"])

    assert code == 1


@pytest.mark.parametrize(
    "url", [pytest.param("s3:///exports/", id="no-bucket"), pytest.param("/srv/exports/", id="not-s3")]
)
def test_publish_rejects_a_bad_destination(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], url: str
) -> None:
    path = write_export(tmp_path / "export.ndjson.gz", records[:1])

    code = main(["publish", str(path), "--to", url])

    assert code == 2
    assert "sudokupool publish:" in capsys.readouterr().err


def test_publish_reports_unreachable_storage_in_one_line(
    s3_env: SeaweedS3,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    records: list[dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SUDOKUPOOL_S3_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    path = write_export(tmp_path / "export.ndjson.gz", records[:1])

    code = main(["publish", str(path), "--to", "s3://bucket/exports/"])

    err = capsys.readouterr().err.splitlines()
    assert code == 1
    assert err[-1].startswith("sudokupool publish: s3://bucket/exports/: Could not connect")


@pytest.mark.anyio
async def test_publish_refuses_when_an_export_as_new_is_there(s3_env: SeaweedS3, tmp_path: Path) -> None:
    bucket = s3_env.new_bucket()
    s3_env.put(bucket, "pool-20270101T000000Z.ndjson.gz", b"from the future")
    path = tmp_path / "export.ndjson.gz"
    path.write_bytes(b"x")
    settings = Settings(s3_endpoint_url=s3_env.endpoint_url)

    with pytest.raises(PublishError, match=r"pool-20270101T000000Z\.ndjson\.gz is not older than 2027-01-01T00:00:00Z"):
        await publish(
            path, parse_s3_url(f"s3://{bucket}/"), settings, now=datetime(2027, 1, 1, tzinfo=UTC), with_pack=False
        )
    key = await publish(
        path, parse_s3_url(f"s3://{bucket}/"), settings, now=datetime(2027, 1, 1, 0, 0, 1, tzinfo=UTC), with_pack=False
    )

    assert key == "pool-20270101T000001Z.ndjson.gz"


@pytest.mark.anyio
async def test_large_files_go_up_in_parts(s3_env: SeaweedS3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # S3's smallest part is 5 MiB: three parts, the last one short.
    monkeypatch.setattr("sudokupool.exporting.publish.PART_SIZE", 5 << 20)
    bucket = s3_env.new_bucket()
    body = os.urandom((11 << 20) + 17)
    path = tmp_path / "export.ndjson.gz"
    path.write_bytes(body)
    settings = Settings(s3_endpoint_url=s3_env.endpoint_url)

    key = await publish(
        path, parse_s3_url(f"s3://{bucket}/p/"), settings, now=datetime(2026, 5, 1, tzinfo=UTC), with_pack=False
    )

    assert key == "p/pool-20260501T000000Z.ndjson.gz"
    assert published(s3_env, bucket, "p/") == {key: body}


def test_publish_parses_a_clean_export_once(
    s3_settings: SeaweedS3, tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check's parse makes the pack; it is renamed for the upload, not made again.
    bucket = s3_settings.new_bucket()
    path = write_export(tmp_path / "export.ndjson", records[:6])
    parses: list[str] = []
    real = verify.parse_export

    async def counted(store: Any, export: Any, **options: Any) -> Any:
        parses.append(export.key)
        return await real(store, export, **options)

    monkeypatch.setattr(verify, "parse_export", counted)
    monkeypatch.setattr(packing, "parse_export", counted)

    assert main(["publish", str(path), "--to", f"s3://{bucket}/exports/"]) == 0

    assert parses == ["export.ndjson"]
    objects = published(s3_settings, bucket, "exports/")
    [key] = [k for k in objects if not k.endswith(".pack")]
    data = objects[pack_key(key)]
    header = pack.read_header(data, len(data))
    assert (header.export_name, header.export_size, header.count) == (
        key.removeprefix("exports/"),
        len(objects[key]),
        6,
    )
    # Checked whole: the uploaded pack loads as the service loads the export it names.
    (tmp_path / "up").mkdir()
    (tmp_path / "up" / key.removeprefix("exports/")).write_bytes(objects[key])
    (tmp_path / "up" / pack_key(key).removeprefix("exports/")).write_bytes(data)
    report, checked = asyncio.run(verify.check_export(tmp_path / "up" / key.removeprefix("exports/")))
    assert checked == verify.PackCheck(pack_key(key).removeprefix("exports/"), None) and report.loaded == 6


def test_publish_checks_as_the_service_loads_without_replaying_solve_paths(
    s3_settings: SeaweedS3, tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Replaying every solve path and counting solutions cost twenty times the CPU of the service's own
    # checks; publish makes the latter (check --fast) unless asked for --full.
    from sudokupool.sudoku import replay, solver

    bucket = s3_settings.new_bucket()
    path = write_export(tmp_path / "export.ndjson.gz", records[:6])
    calls: list[str] = []
    real_replay, real_count = replay.replay, solver.solutions

    def counted_replay(*args: Any) -> Any:
        calls.append("replay")
        return real_replay(*args)

    def counted_count(*args: Any, **kwargs: Any) -> Any:
        calls.append("count")
        return real_count(*args, **kwargs)

    monkeypatch.setattr(replay, "replay", counted_replay)
    monkeypatch.setattr(solver, "solutions", counted_count)

    assert main(["publish", str(path), "--to", f"s3://{bucket}/fast/"]) == 0
    assert calls == []
    assert len(published(s3_settings, bucket, "fast/")) == 2
    assert main(["publish", str(path), "--to", f"s3://{bucket}/full/", "--full"]) == 0
    assert sorted(calls) == ["count"] * 6 + ["replay"] * 6


def test_check_fast_makes_the_services_checks_only(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    # A solve path that does not replay: refused by the full check, kept by the service and check --fast.
    broken = {**records[0], "solve_path": records[1]["solve_path"]}
    path = write_export(tmp_path / "export.ndjson.gz", [broken, *records[2:5]])
    assert main(["check", str(path), "--max-bad-lines", "50%"]) == 0
    assert "line 1: bad-solve-path" in capsys.readouterr().out
    assert main(["check", str(path), "--fast"]) == 0
    out = capsys.readouterr().out
    assert "bad-solve-path" not in out and "loaded 4 puzzles, skipped 0" in out
