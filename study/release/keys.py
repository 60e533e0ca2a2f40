"""The curator's secret key material, and the encrypted files kept beside it.

`study keys init KEYFILE` writes one JSON file, mode 600, that holds two independent secrets:

- `pseudonym_key` (32 random bytes, hex): the HMAC-SHA256 key of the worker pseudonyms
  (`study.release.pseudonyms`). A plain hash is not enough: MTurk worker ids follow a known
  shape and can be enumerated, so anyone could hash every candidate id and match.
- `fernet_key` (a `cryptography` Fernet key): encrypts the files that must stay with the
  research team, next to the key:

  - `KEYFILE`: the two secrets;
  - `KEYFILE.reid`: the re-identification table, pseudonym -> worker id per namespace (for
    payments and withdrawals);
  - `KEYFILE.withdrawals`: the workers who withdrew (`study withdraw`);
  - `KEYFILE.redactions/<name>-X.Y.Z.csv`: what the PII scan redacted in each release, with
    the original text, for the curator's review (plain CSV, mode 600).

None of these ever enters a release. Losing the key means new pseudonyms (a major release, see
`study.release.versioning`); leaking it means anyone can test whether a worker id took part.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from study.store.permissions import private_folder, write_private

KEY_KIND = "study-release-key"
KEY_VERSION = 1


class KeyFileError(ValueError):
    """A key file (or a file encrypted with it) that cannot be used, worded for the curator."""


@dataclass(frozen=True)
class ReleaseKey:
    path: Path
    pseudonym_key: bytes
    fernet_key: bytes

    def fernet(self) -> Fernet:
        return Fernet(self.fernet_key)

    @property
    def fingerprint(self) -> str:
        """A public name for this key: releases built with the same key share it.

        An HMAC of a fixed label, so it tells nothing about the key itself; `study release diff`
        and the version rules use it to notice that pseudonyms were re-keyed.
        """
        digest = hmac.new(self.pseudonym_key, b"study-release-key-fingerprint", hashlib.sha256)
        return digest.hexdigest()[:16]

    def companion(self, suffix: str) -> Path:
        """A file kept beside the key: `KEYFILE.reid`, `KEYFILE.withdrawals`, ..."""
        return self.path.with_name(self.path.name + suffix)


def init_keyfile(path: str | os.PathLike) -> ReleaseKey:
    """Create KEYFILE with fresh secrets, mode 600. Refuses to overwrite an existing file.

    Missing folders on the way are created, mode 700: the key's folder also receives the
    re-identification table and the redaction reports, which only the team may read.
    """
    path = Path(path)
    _make_private_folders(path.parent)
    content = {
        "kind": KEY_KIND,
        "version": KEY_VERSION,
        "pseudonym_key": secrets.token_hex(32),
        "fernet_key": Fernet.generate_key().decode("ascii"),
    }
    data = (json.dumps(content, indent=2) + "\n").encode()
    try:
        write_private(path, data, exclusive=True)
    except FileExistsError:
        raise KeyFileError(
            f"{path} already exists; a key is never overwritten (every pseudonym and the "
            "re-identification table depend on it). Choose another path or move the old key away."
        ) from None
    return load_key(path)


def _make_private_folders(folder: Path) -> None:
    probe = folder
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise KeyFileError(f"{probe} is not a folder; choose a key path inside a folder.")
    try:
        private_folder(folder)
    except OSError as error:
        raise KeyFileError(f"cannot create the folder {error.filename} for the key ({error.strerror}).") from None


def load_key(path: str | os.PathLike) -> ReleaseKey:
    path = Path(path)
    try:
        mode = path.stat().st_mode
        raw_bytes = path.read_bytes()
    except FileNotFoundError:
        raise KeyFileError(
            f"{path}: no such key file. Create one with `study keys init {path}`."
        ) from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(
            f"{path}: the key file is readable by other users (mode {stat.S_IMODE(mode):o}). "
            f"Fix: chmod 600 {path}"
        )
    try:
        raw = raw_bytes.decode("utf-8")
    except UnicodeDecodeError:
        raise KeyFileError(
            f"{path}: not a key made by `study keys init` ({len(raw_bytes)} bytes of binary data, "
            f"not its JSON). Fix: point --key at the file `study keys init` wrote, or create one "
            f"with `study keys init NEW_KEYFILE`."
        ) from None
    try:
        content = json.loads(raw)
        if content.get("kind") != KEY_KIND:
            raise ValueError("not a study release key")
        pseudonym_key = bytes.fromhex(content["pseudonym_key"])
        fernet_key = content["fernet_key"].encode("ascii")
        Fernet(fernet_key)
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise KeyFileError(f"{path}: not a key made by `study keys init` ({error}).") from None
    if len(pseudonym_key) < 32:
        raise KeyFileError(f"{path}: pseudonym_key must be at least 32 bytes.")
    return ReleaseKey(path=path, pseudonym_key=pseudonym_key, fernet_key=fernet_key)


def read_vault(key: ReleaseKey, path: Path, default: object) -> object:
    """The JSON value Fernet-encrypted in `path`, or `default` when the file does not exist."""
    try:
        token = path.read_bytes()
    except FileNotFoundError:
        return default
    try:
        return json.loads(key.fernet().decrypt(token))
    except InvalidToken:
        raise KeyFileError(
            f"{path}: cannot be decrypted with {key.path} (another key, or a damaged file)."
        ) from None


def write_vault(key: ReleaseKey, path: Path, value: object) -> None:
    """Encrypt `value` (JSON) with the key's Fernet key into `path`, mode 600."""
    plain = json.dumps(value, sort_keys=True, ensure_ascii=False).encode()
    write_private(path, key.fernet().encrypt(plain))
