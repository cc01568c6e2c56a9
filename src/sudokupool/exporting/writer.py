"""Write an export, and its pack, a record at a time: what a build or a merge keeps goes to disk as it is kept.

Both files grow as temporary files beside their final place (a dot name ending in ``.tmp``, which no service takes
for an export), so memory does not grow with the records but for the pack's small columns (a few hundred bytes
a record: :class:`~sudokupool.pool.pack.PackWriter`). :meth:`ExportWriter.commit` renames them into place,
the pack first, so a service that sees the new export finds its pack beside it; until then, or on any error,
a reader sees the previous files or none.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import secrets
import time
import zlib
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from sudokupool.config import Settings, SettingsError
from sudokupool.loading.packing import write_problem
from sudokupool.pool.export import parse_record, record_line
from sudokupool.pool.pack import PackWriter
from sudokupool.storage.naming import export_filename, pack_key

#: Seconds between flushes of a gzip export, so what was kept can be read (and a build watched) while it runs;
#: a sync flush costs a few bytes of output.
FLUSH_EVERY = 5.0


def prepare_output(text: str) -> Path:
    """The output ``--out TEXT`` names, checked before any work, its missing directories made: a directory when it
    is one or ends in ``/`` (``Path`` drops the slash, so ``pools/`` would otherwise become a file named
    ``pools``), else a file (through a symbolic link: its target, so the temporary file and the rename happen
    beside it). ValueError says why it cannot be written: a directory that cannot be made or refuses new files,
    or an existing path that is not a regular file or a directory (a device such as /dev/null would be
    replaced by a file)."""
    out = Path(text)
    try:
        (out if text.endswith(("/", os.sep)) or out.is_dir() else out.parent).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot make the directories of --out {text}: {exc}") from None
    if (out.exists() or out.is_symlink()) and not (out.is_file() or out.is_dir()):
        raise ValueError(f"--out {out} is not a regular file or a directory")
    directory = out if out.is_dir() else out.resolve().parent
    problem = write_problem(directory)
    if problem is not None:
        raise ValueError(f"cannot write in {directory}: {problem}")
    return out.resolve() if out.is_symlink() and out.is_file() else out


def output_path(out: Path, when: datetime) -> Path:
    """The file to write: ``out`` itself, or ``pool-<UTC time>.ndjson.gz`` inside it when it is a directory."""
    if out.is_dir():
        return out / export_filename(when)
    return out


def export_limit_problem(inflated: int) -> str | None:
    """What to set when an export inflates to ``inflated`` bytes, past ``SUDOKUPOOL_MAX_EXPORT_BYTES`` (the value
    in this environment): the service, ``check`` and ``pack`` would refuse it. None when it is within."""
    try:
        limit = Settings.from_environ(os.environ).max_export_bytes
    except SettingsError:
        limit = Settings.max_export_bytes  # the service reports a bad value itself
    if inflated <= limit:
        return None
    wanted = -(-inflated // (1 << 30)) << 30
    return (
        f"the export inflates to {inflated} bytes, more than SUDOKUPOOL_MAX_EXPORT_BYTES="
        f"{limit}: set SUDOKUPOOL_MAX_EXPORT_BYTES={wanted} (or more) wherever it is served, checked or packed"
    )


def _new_file(directory: Path, suffix: str, mode: str) -> IO[bytes]:
    """A new file of a random dot name in ``directory`` (which no service takes for an export)."""
    while True:
        try:
            return open(directory / f".sudokupool-{secrets.token_hex(8)}{suffix}", mode)
        except FileExistsError:
            continue


class ExportWriter:
    """An export being written in ``directory`` (gzip when ``gzipped``), with its pack when ``pack``.

    Use as a context manager: leaving the block without :meth:`commit` (an error, Ctrl-C) removes the
    temporary files.
    """

    def __init__(self, directory: Path, *, gzipped: bool, pack: bool) -> None:
        self.directory = directory
        self.count = 0
        #: Bytes of the records written, as they inflate.
        self.inflated = 0
        # Made with open() rather than tempfile, whose files are private (0600): the export and its pack get
        # the permissions any new file gets here (the umask's), as they did when written at the end.
        self._raw = _new_file(directory, ".ndjson.tmp", "xb")
        self._out: IO[bytes] | gzip.GzipFile = self._raw
        self._flushed = time.monotonic()
        if gzipped:
            # mtime=0 keeps the gzip header free of the wall clock; the records carry their own times.
            self._out = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, mtime=0)
        self._pack_file: IO[bytes] | None = None
        self._pack: PackWriter | None = None
        if pack:
            self._pack_file = _new_file(directory, ".pack.tmp", "x+b")
            self._pack = PackWriter(self._pack_file)

    @property
    def path(self) -> Path:
        """The temporary export file (records are there, in order, as soon as they are flushed)."""
        return Path(self._raw.name)

    def add(self, record: dict[str, Any]) -> None:
        """Append ``record`` (an export record's fields; ``synced_at`` is set to now)."""
        self.add_line(record_line({**record, "synced_at": int(time.time())}))

    def add_line(self, line: bytes) -> None:
        """Append one export line as it is (with its newline): a record already checked by the caller."""
        self._out.write(line)
        self.inflated += len(line)
        self.count += 1
        if self._pack is not None:
            self._pack.add(parse_record(line))
        if time.monotonic() - self._flushed > FLUSH_EVERY:
            if isinstance(self._out, gzip.GzipFile):
                self._out.flush(zlib.Z_SYNC_FLUSH)
            self._raw.flush()
            self._flushed = time.monotonic()

    def commit(self, path: Path, *, pack: bool = True) -> Path | None:
        """Close the export and move it to ``path``, its pack beside it (unless ``pack`` is False, or there is
        none): the pack's path, or None."""
        self._out.close()
        self._raw.close()
        packed = None
        if self._pack is not None and self._pack_file is not None and pack and self.count:
            self._pack.finish(export_name=path.name, export_size=self.path.stat().st_size, made_at=int(time.time()))
            self._pack_file.close()
            packed = path.with_name(pack_key(path.name))
            os.replace(self._pack_file.name, packed)
        self._discard_pack()
        try:
            os.replace(self.path, path)
        except OSError:
            if packed is not None:
                packed.unlink(missing_ok=True)  # a pack without its export would name a file that is not there
            raise
        return packed

    def _discard_pack(self) -> None:
        if self._pack_file is not None:
            self._pack_file.close()
            Path(self._pack_file.name).unlink(missing_ok=True)

    def discard(self) -> None:
        """Remove the temporary files (nothing is left of this export)."""
        for handle in (self._out, self._raw):
            # A full disk refuses the last flush too; the file goes anyway.
            with contextlib.suppress(OSError):
                handle.close()
        self.path.unlink(missing_ok=True)
        self._discard_pack()

    def __enter__(self) -> ExportWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if kind is not None or not self._raw.closed:
            self.discard()
