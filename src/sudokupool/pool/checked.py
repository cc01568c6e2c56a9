"""A pack copy in a cache directory and the record of what the checks of its load found (``.<pack>.checked``,
beside it), so that the next load of the same file need not check it again; and the test of a file or directory
being this user's alone to write, which such a record and the copies it speaks for need."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import orjson

from sudokupool.pool import validate

logger = logging.getLogger("sudokupool.loader")


def not_own(st: os.stat_result, kind: str) -> str | None:
    """Why the file or directory whose status is ``st`` is not this user's alone to write (a ``kind``:
    ``directory`` or ``file``), or None."""
    wanted = stat.S_ISDIR if kind == "directory" else stat.S_ISREG
    if not wanted(st.st_mode):
        return f"not a {'directory' if kind == 'directory' else 'regular file'}"
    if st.st_uid != os.getuid():
        return f"owned by uid {st.st_uid}, not by this user (uid {os.getuid()})"
    if st.st_mode & 0o022:
        return f"mode {stat.S_IMODE(st.st_mode):04o} lets other users write it"
    return None


@functools.cache
def _checks() -> str:
    """What the structural check of a pack is: a digest of the module that makes it, so that a record of a
    check made by another version of the service is not taken for one of this version's."""
    return hashlib.sha256(Path(validate.__file__).read_bytes()).hexdigest()[:16]


@dataclass(frozen=True)
class Checked:
    """What the checks of a pack copy found: the most id-table slots a lookup reads (``validate``'s answer),
    and whether every body was also inflated and found to be its record (``Pool.verify``)."""

    probes: int
    bodies: bool = False


@dataclass(frozen=True)
class Copy:
    """A pack copy in the cache directory, as it was (``stat``) when it was mapped, and the record of its checks
    (``.<pack>.checked``, beside it). A copy is the service's own file, never written again once whole, so a
    check proves it for as long as it is the same file: same device and inode, size, modification and change
    times. The change time is the kernel's (no process can set it), and any write, truncation, ``chmod`` or
    rename of the file sets it; a new file is another inode. A record is only written and believed in a
    directory that no other user may write (the private directory always; ``SUDOKUPOOL_CACHE_DIR`` when it is
    the service user's and not group- or world-writable): whoever could write it could also replace the copy."""

    path: Path
    stat: os.stat_result
    max_record_bytes: int

    @property
    def _record(self) -> Path:
        return self.path.with_name(f".{self.path.name}.checked")

    def _fields(self) -> dict[str, object]:
        st = self.stat
        file = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        return {"file": file, "checks": _checks(), "max_record_bytes": self.max_record_bytes}

    def _trusted(self) -> bool:
        return not_own(os.stat(self.path.parent), "directory") is None

    def recall(self) -> Checked | None:
        """What an earlier load's checks found about this very file, or None (no record, a record of another
        file, of another version's checks or another ``SUDOKUPOOL_MAX_RECORD_BYTES``, or a directory others
        may write)."""
        try:
            if not self._trusted():
                return None
            with open(os.open(self._record, os.O_RDONLY | os.O_NOFOLLOW), "rb") as file:
                if os.fstat(file.fileno()).st_uid != os.getuid():
                    return None
                fields = orjson.loads(file.read(4096))
            checked = Checked(fields.pop("probes"), fields.pop("bodies"))
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            return None
        valid = type(checked.probes) is int and checked.probes > 0 and type(checked.bodies) is bool
        return checked if valid and fields == self._fields() else None

    def record(self, checked: Checked) -> None:
        """Record what this load's checks found (written whole, then renamed into place), unless the
        directory is one others may write; a failure to write only costs the next load a check."""
        fields = {**self._fields(), "probes": checked.probes, "bodies": checked.bodies}
        written = self._record.with_name(f"{self._record.name}.{os.getpid()}")
        try:
            if self._trusted():
                written.write_bytes(orjson.dumps(fields))
                os.replace(written, self._record)
        except OSError as exc:
            logger.debug("cannot record the checks of %s: %s", self.path, exc)
            with contextlib.suppress(OSError):
                written.unlink(missing_ok=True)
