"""API keys: the operator's digest entries, their tiers, and fresh keys.

Configuration never holds a plain key, only ``<sha256 hex of the key>`` (keyed tier) or
``<sha256 hex>:pro``, from ``SUDOKUPOOL_API_KEYS`` (comma-separated) and
``SUDOKUPOOL_API_KEYS_FILE`` (one entry per line, ``#`` starts a comment). A presented key is
hashed and the digest looked up in a dict: the only comparison that can take more or less time
is between *digests*, which tells a guesser nothing about how much of a key was right.
"""

from __future__ import annotations

import enum
import hashlib
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sudokupool.config import Settings, SettingsError

_DIGEST = re.compile(r"[0-9a-f]{64}")


class Tier(enum.StrEnum):
    """Rate-limit tiers: no key, an issued key, a key the operator marked pro."""

    ANONYMOUS = "anonymous"
    KEYED = "keyed"
    PRO = "pro"


def new_key() -> str:
    """A fresh random key: 192 bits, URL-safe base64 (32 characters)."""
    return secrets.token_urlsafe(24)


def digest(key: str | bytes) -> str:
    """The SHA-256 hex digest configuration holds for ``key`` (UTF-8 when given as text)."""
    data = key.encode() if isinstance(key, str) else key
    return hashlib.sha256(data).hexdigest()


def entry(key_digest: str, tier: Tier) -> str:
    """The configuration entry for a digest: ``<digest>`` or ``<digest>:pro``."""
    return key_digest if tier is Tier.KEYED else f"{key_digest}:{tier.value}"


def parse_entry(text: str, where: str) -> tuple[str, Tier]:
    """One entry ``<sha256 hex>[:keyed|:pro]``; ``where`` names its place in error messages.

    The message never repeats the entry: a plain key pasted by mistake must not reach the logs.
    """
    value, _, suffix = text.strip().partition(":")
    value = value.strip().lower()
    suffix = suffix.strip().lower()
    if not _DIGEST.fullmatch(value):
        got = f"{len(value)} characters" if len(value) != 64 else "characters other than 0-9 and a-f"
        raise SettingsError(
            f"{where}: not a SHA-256 hex digest (64 hex characters, got {got}). "
            "Configure `<sha256 hex of the key>` or `<sha256 hex>:pro`, never the key itself; "
            "`sudokupool keys new` prints an entry."
        )
    if suffix in ("", Tier.KEYED.value):
        return value, Tier.KEYED
    if suffix == Tier.PRO.value:
        return value, Tier.PRO
    raise SettingsError(f"{where}: unknown tier {suffix!r} after ':' (use ':pro', or nothing for the keyed tier)")


@dataclass(frozen=True)
class Keyring:
    """Issued keys by digest. Build with :meth:`from_settings` or :meth:`parse`."""

    tiers: Mapping[str, Tier]

    def __len__(self) -> int:
        return len(self.tiers)

    def lookup(self, key: str | bytes) -> Tier | None:
        """The tier of a presented key, or None when no issued key has its digest."""
        return self.tiers.get(digest(key))

    def lookup_digest(self, key_digest: str) -> Tier | None:
        return self.tiers.get(key_digest)

    @classmethod
    def parse(cls, entries: Iterable[tuple[str, str]]) -> Keyring:
        """Entries as ``(text, where)``; empty texts are skipped. Raises :class:`SettingsError`."""
        tiers: dict[str, Tier] = {}
        places: dict[str, str] = {}
        for text, where in entries:
            if not text.strip():
                continue
            key_digest, tier = parse_entry(text, where)
            if tiers.get(key_digest, tier) is not tier:
                raise SettingsError(f"{where}: the same digest is listed at {places[key_digest]} with another tier")
            tiers[key_digest] = tier
            places.setdefault(key_digest, where)
        return cls(tiers)

    @classmethod
    def from_settings(cls, settings: Settings) -> Keyring:
        """All entries of ``SUDOKUPOOL_API_KEYS`` and ``SUDOKUPOOL_API_KEYS_FILE``; raises :class:`SettingsError`."""
        entries = [
            (text, f"SUDOKUPOOL_API_KEYS entry {number}")
            for number, text in enumerate(settings.api_keys.split(","), start=1)
        ]
        if settings.api_keys_file:
            path = Path(settings.api_keys_file)
            try:
                lines = path.read_text(encoding="utf-8-sig").splitlines()
            except OSError as exc:
                reason = (exc.strerror or type(exc).__name__).lower()
                raise SettingsError(
                    f"SUDOKUPOOL_API_KEYS_FILE={str(path)!r} cannot be read ({reason}); "
                    "expected a readable file with one key entry per line, or empty"
                ) from None
            except UnicodeDecodeError:
                raise SettingsError(
                    f"SUDOKUPOOL_API_KEYS_FILE={str(path)!r} is not UTF-8 text; "
                    "expected a text file with one key entry per line, or empty"
                ) from None
            entries += [
                (line.partition("#")[0], f"SUDOKUPOOL_API_KEYS_FILE {path} line {number}")
                for number, line in enumerate(lines, start=1)
            ]
        return cls.parse(entries)
