from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from sudokupool.cli import main
from sudokupool.config import Settings, SettingsError
from sudokupool.ratelimit.keys import Keyring, Tier, digest, new_key

KEY_A = "first-key"
KEY_B = "second-key"


def test_new_keys_are_long_random_and_url_safe() -> None:
    keys = {new_key() for _ in range(50)}
    assert len(keys) == 50
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{32}", key) for key in keys)


def test_digest_is_sha256_hex_of_the_key() -> None:
    assert digest(KEY_A) == hashlib.sha256(b"first-key").hexdigest()
    assert digest(KEY_A.encode()) == digest(KEY_A)


def test_keys_from_the_variable_and_the_file(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.txt"
    keys_file.write_text(f"# issued 2026-01-01\n\n{digest('third-key')}:pro   # for ACME\n  {digest('fourth')}\n")
    settings = Settings(api_keys=f" {digest(KEY_A)} ,{digest(KEY_B).upper()}:PRO,", api_keys_file=str(keys_file))
    keyring = Keyring.from_settings(settings)
    assert len(keyring) == 4
    assert keyring.lookup(KEY_A) is Tier.KEYED
    assert keyring.lookup(KEY_B) is Tier.PRO
    assert keyring.lookup("third-key") is Tier.PRO
    assert keyring.lookup("fourth") is Tier.KEYED
    assert keyring.lookup("first-ke") is None
    assert keyring.lookup(digest(KEY_A)) is None


def test_no_keys_configured() -> None:
    assert len(Keyring.from_settings(Settings())) == 0


@pytest.mark.parametrize(
    ("api_keys", "message"),
    [
        pytest.param("a-plain-secret-key", r"SUDOKUPOOL_API_KEYS entry 1: not a SHA-256 hex digest", id="plain-key"),
        pytest.param(
            f"{digest(KEY_A)},abc123", r"entry 2: not a SHA-256 hex digest \(64 hex .* got 6 char", id="short"
        ),
        pytest.param(
            "g" * 64, r"entry 1: not a SHA-256 hex digest \(.*got characters other than 0-9 and a-f\)", id="not-hex"
        ),
        pytest.param(f"{digest(KEY_A)}:gold", r"entry 1: unknown tier 'gold'", id="unknown-tier"),
        pytest.param(
            f"{digest(KEY_A)},{digest(KEY_A)}:pro", r"entry 2: the same digest .* another tier", id="conflict"
        ),
    ],
)
def test_bad_entries_are_operator_errors(api_keys: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message) as raised:
        Keyring.from_settings(Settings(api_keys=api_keys))
    assert "a-plain-secret-key" not in str(raised.value)


def test_a_bad_line_in_the_file_names_the_file_and_line(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.txt"
    keys_file.write_text(f"{digest(KEY_A)}\nnot-a-digest\n")
    with pytest.raises(SettingsError, match=rf"SUDOKUPOOL_API_KEYS_FILE {re.escape(str(keys_file))} line 2"):
        Keyring.from_settings(Settings(api_keys_file=str(keys_file)))


def test_a_byte_order_mark_is_not_part_of_the_first_entry(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.txt"
    keys_file.write_bytes(b"\xef\xbb\xbf" + f"{digest(KEY_A)}\r\n{digest(KEY_B)}:pro\r\n".encode())
    keyring = Keyring.from_settings(Settings(api_keys_file=str(keys_file)))
    assert keyring.tiers == {digest(KEY_A): Tier.KEYED, digest(KEY_B): Tier.PRO}


def test_a_missing_file_is_an_operator_error(tmp_path: Path) -> None:
    with pytest.raises(
        SettingsError, match=r"SUDOKUPOOL_API_KEYS_FILE=.* cannot be read \(no such file or directory\)"
    ):
        Keyring.from_settings(Settings(api_keys_file=str(tmp_path / "missing.txt")))


@pytest.mark.parametrize(
    ("argv", "tier"),
    [
        pytest.param(["keys", "new"], Tier.KEYED, id="keyed"),
        pytest.param(["keys", "new", "--tier", "pro"], Tier.PRO, id="pro"),
    ],
)
def test_keys_new_prints_a_key_and_its_entry(capsys: pytest.CaptureFixture[str], argv: list[str], tier: Tier) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    key = re.search(r"^key:\s+(\S+)$", out, re.M)
    line = re.search(r"^entry:\s+(\S+)$", out, re.M)
    assert key is not None
    assert line is not None
    keyring = Keyring.from_settings(Settings(api_keys=line.group(1)))
    assert keyring.lookup(key.group(1)) is tier


def test_keys_check(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUDOKUPOOL_API_KEYS", f"{digest(KEY_A)},{digest(KEY_B)}:pro")
    assert main(["keys", "check"]) == 0
    assert capsys.readouterr().out == "2 keys: 1 keyed, 1 pro\n"
    monkeypatch.setenv("SUDOKUPOOL_API_KEYS", "nonsense")
    assert main(["keys", "check"]) == 2
