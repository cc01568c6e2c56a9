"""The cache directory's trust (loading/cache.py): a pack copy is mapped only from a directory of the service
user's that no other user may write, only as a regular file of that user's that no other user may write, and
never through a symbolic link. One test for each way another local user could put a pack under the service."""

from __future__ import annotations

import errno
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from sudokupool.loading import cache
from sudokupool.loading.loader import load_export
from sudokupool.loading.packing import write_pack
from sudokupool.pool import checked, pack
from sudokupool.pool.pool import Pool
from sudokupool.storage.local import LocalStore
from sudokupool.storage.naming import pack_key
from tests.factories import write_export

pytestmark = pytest.mark.anyio

EXPORT = "pool-20260101T000000Z.ndjson.gz"


async def source_and_forgery(tmp_path: Path, records: list[dict[str, Any]]) -> tuple[Path, Path]:
    """An export directory with its pack, and a forged pack for the same export: the same records with another
    tag, so that the forgery is what the pack of this export would be, but for its tags."""
    exports, forged = tmp_path / "exports", tmp_path / "forged"
    exports.mkdir()
    forged.mkdir()
    write_export(exports / EXPORT, [{**r, "tags": ["real"]} for r in records[:6]])
    write_export(forged / EXPORT, [{**r, "tags": ["fake"]} for r in records[:6]])
    await write_pack(exports / EXPORT)
    await write_pack(forged / EXPORT)
    # Stamped with the real export's size, as a forger who can read the export would.
    pack.restamp(forged / pack_key(EXPORT), export_name=EXPORT, export_size=(exports / EXPORT).stat().st_size)
    return exports, forged / pack_key(EXPORT)


async def load(exports: Path, cache_dir: Path) -> Pool:
    store = LocalStore(exports)
    export = (await store.list_exports(limit=1)).latest
    assert export is not None
    pool, _ = await load_export(store, export, loaded_at=77, cache_dir=cache_dir)
    return pool


def tags(pool: Pool) -> set[str]:
    return {tag for i in range(len(pool)) for tag in orjson.loads(pool.body(i))["tags"]}


async def test_a_forged_copy_in_a_directory_of_the_services_own_is_what_a_trusted_copy_would_be(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    # The premise of the tests below: a forged pack put where the copy goes is served, if mapped.
    exports, forged = await source_and_forgery(tmp_path, records)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir(mode=0o700)
    shutil.copyfile(forged, cache_dir / pack_key(EXPORT))
    (cache_dir / pack_key(EXPORT)).chmod(0o644)
    assert tags(await load(exports, cache_dir)) == {"fake"}


async def test_a_cache_directory_another_user_made_is_not_used(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    exports, forged = await source_and_forgery(tmp_path, records)
    cache_dir = tmp_path / "theirs"
    cache_dir.mkdir(mode=0o755)
    shutil.copyfile(forged, cache_dir / pack_key(EXPORT))
    # The directory is another user's: this process runs as a user of its own.
    service_uid = os.stat(cache_dir).st_uid + 1
    monkeypatch.setattr(os, "getuid", lambda: service_uid)
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        pool = await load(exports, cache_dir)
    assert tags(pool) == {"real"}
    assert (
        f"not using the cache directory {cache_dir}: owned by uid {service_uid - 1}, not by this user "
        f"(uid {service_uid}); packs go to temporary files"
    ) in caplog.text
    assert sorted(p.name for p in cache_dir.iterdir()) == [pack_key(EXPORT)]  # nothing written there


@pytest.mark.parametrize("mode", [pytest.param(m, id=f"{m:04o}") for m in (0o1777, 0o777, 0o775)])
async def test_a_cache_directory_other_users_may_write_is_not_used(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture, mode: int
) -> None:
    # A shared directory such as /tmp (1777, sticky): another user may put a file in it, if not replace ours.
    exports, forged = await source_and_forgery(tmp_path, records)
    cache_dir = tmp_path / "shared"
    cache_dir.mkdir()
    cache_dir.chmod(mode)
    shutil.copyfile(forged, cache_dir / pack_key(EXPORT))
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        pool = await load(exports, cache_dir)
    assert tags(pool) == {"real"}
    assert f"not using the cache directory {cache_dir}: mode {mode:04o} lets other users write it" in caplog.text


async def test_a_symbolic_link_in_the_cache_directory_is_not_followed(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    exports, forged = await source_and_forgery(tmp_path, records)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir(mode=0o700)
    copy = cache_dir / pack_key(EXPORT)
    copy.symlink_to(forged)
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        pool = await load(exports, cache_dir)
    assert tags(pool) == {"real"}
    assert f"refused pack copy {copy}: " in caplog.text
    # The link made way for a copy of the service's own.
    assert not copy.is_symlink() and copy.is_file()
    assert tags(await load(exports, cache_dir)) == {"real"}


@pytest.mark.parametrize("mode", [pytest.param(m, id=f"{m:04o}") for m in (0o666, 0o646, 0o664)])
async def test_a_copy_other_users_may_write_is_not_mapped(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture, mode: int
) -> None:
    # One they could truncate while it is mapped, faulting the worker (SIGBUS).
    exports, forged = await source_and_forgery(tmp_path, records)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir(mode=0o700)
    copy = cache_dir / pack_key(EXPORT)
    shutil.copyfile(forged, copy)
    copy.chmod(mode)
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        pool = await load(exports, cache_dir)
    assert tags(pool) == {"real"}
    assert f"refused pack copy {copy}: mode {mode:04o} lets other users write it" in caplog.text
    assert copy.stat().st_mode & 0o777 == 0o644  # replaced by a copy of the service's own


async def test_a_copy_another_user_owns_is_not_mapped(
    tmp_path: Path, records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    exports, forged = await source_and_forgery(tmp_path, records)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir(mode=0o700)
    copy = cache_dir / pack_key(EXPORT)
    shutil.copyfile(forged, copy)
    copy.chmod(0o644)
    other = os.stat(copy).st_uid + 1
    if os.geteuid() == 0:
        os.chown(copy, other, other)
    else:
        # Without the right to give a file away, the service's user is made another one for the file's check.
        real = checked.not_own
        monkeypatch.setattr(checked, "not_own", lambda st, kind: real(os.stat_result((*st[:4], other, *st[5:])), kind))
    with caplog.at_level(logging.WARNING, logger="sudokupool.loader"):
        pool = await load(exports, cache_dir)
    assert tags(pool) == {"real"}
    assert f"refused pack copy {copy}: owned by uid {other}, not by this user (uid {os.getuid()})" in caplog.text


def test_open_own_refuses_links_others_files_and_others_writes(tmp_path: Path) -> None:
    mine = tmp_path / "mine.pack"
    mine.write_bytes(b"pack")
    mine.chmod(0o644)
    fd, st = cache.open_own(mine)
    os.close(fd)
    assert st.st_size == 4
    link = tmp_path / "link.pack"
    link.symlink_to(mine)
    with pytest.raises(OSError) as refused:
        cache.open_own(link)
    assert refused.value.errno == errno.ELOOP
    mine.chmod(0o646)
    with pytest.raises(PermissionError, match="mode 0646 lets other users write it"):
        cache.open_own(mine)
    with pytest.raises(OSError):
        cache.open_own(tmp_path)  # a directory is no pack
