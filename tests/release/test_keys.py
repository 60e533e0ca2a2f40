"""`study keys init`: secret key material, mode 600, never overwritten; vaults beside it."""

from __future__ import annotations

import json
import os
import stat

import pytest
from click.testing import CliRunner

from study.release.cli import keys
from study.release.keys import KeyFileError, init_keyfile, load_key, read_vault, write_vault


def test_init_writes_a_key_only_its_owner_can_read(tmp_path):
    result = CliRunner().invoke(keys, ["init", str(tmp_path / "study.key")])
    assert result.exit_code == 0, result.output
    mode = stat.S_IMODE(os.stat(tmp_path / "study.key").st_mode)
    assert mode == 0o600
    content = json.loads((tmp_path / "study.key").read_text())
    assert len(bytes.fromhex(content["pseudonym_key"])) == 32
    assert "fingerprint" in result.output


def test_init_sets_mode_600_whatever_the_umask(tmp_path):
    previous = os.umask(0)
    try:
        key = init_keyfile(tmp_path / "k")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(key.path).st_mode) == 0o600


def test_init_refuses_to_overwrite(tmp_path):
    path = tmp_path / "study.key"
    init_keyfile(path)
    before = path.read_bytes()
    result = CliRunner().invoke(keys, ["init", str(path)])
    assert result.exit_code != 0
    assert "already exists" in result.output and "never overwritten" in result.output
    assert path.read_bytes() == before


def test_two_keys_differ(tmp_path):
    first, second = init_keyfile(tmp_path / "a"), init_keyfile(tmp_path / "b")
    assert first.pseudonym_key != second.pseudonym_key
    assert first.fingerprint != second.fingerprint


def test_a_key_readable_by_others_is_refused(tmp_path):
    key = init_keyfile(tmp_path / "k")
    os.chmod(key.path, 0o644)
    with pytest.raises(KeyFileError, match="chmod 600"):
        load_key(key.path)


def test_a_missing_key_says_how_to_create_one(tmp_path):
    with pytest.raises(KeyFileError, match="study keys init"):
        load_key(tmp_path / "nope.key")


def test_vaults_are_encrypted_private_and_bound_to_their_key(tmp_path):
    key, other = init_keyfile(tmp_path / "k"), init_keyfile(tmp_path / "o")
    vault = key.companion(".reid")
    write_vault(key, vault, {"worker": "A1B2C3D4E5F6G7"})
    assert b"A1B2C3D4E5F6G7" not in vault.read_bytes()
    assert stat.S_IMODE(os.stat(vault).st_mode) == 0o600
    assert read_vault(key, vault, None) == {"worker": "A1B2C3D4E5F6G7"}
    with pytest.raises(KeyFileError, match="cannot be decrypted"):
        read_vault(other, vault, None)


def test_init_creates_missing_folders_only_the_owner_can_open(tmp_path):
    path = tmp_path / "team" / "keys" / "study.key"
    result = CliRunner().invoke(keys, ["init", str(path)])
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    for folder in (tmp_path / "team", tmp_path / "team" / "keys"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    load_key(path)


def test_init_under_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    result = CliRunner().invoke(keys, ["init", str(tmp_path / "notes.txt" / "study.key")])
    assert result.exit_code == 1 and result.exception.__class__ is SystemExit
    assert "notes.txt is not a folder" in result.output
