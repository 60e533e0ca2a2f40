"""Worker pseudonyms, and the encrypted table that turns them back into worker ids.

A pseudonym is `w` + the first 20 hex digits (80 bits) of
HMAC-SHA256(pseudonym key, namespace + NUL + worker id). Keyed, because a plain hash of an
MTurk worker id can be reversed by hashing every id of that shape; namespaced, because one key
may serve several datasets whose writers must not be linkable across them (the namespace
defaults to the release name). The same key, namespace and worker id always give the same
pseudonym, so a writer keeps one pseudonym across sessions and releases. The lower-case `w`
prefix keeps pseudonyms from looking like MTurk ids (`A` + upper-case letters and digits).

The re-identification table (`KEYFILE.reid`, Fernet-encrypted, see `study.release.keys`) maps
each pseudonym a build has issued back to its worker id, for payments and withdrawals. It is
written by `study release build` and read by `study keys lookup` and `study withdraw`; it never
enters a release.
"""

from __future__ import annotations

import hashlib
import hmac
import re

from study.release.keys import ReleaseKey, read_vault, write_vault

PSEUDONYM = re.compile(r"^w[0-9a-f]{20}$")
REID_SUFFIX = ".reid"


def normalize_worker_id(worker_id: str) -> str:
    # Only surrounding whitespace: MTurk ids are case-sensitive strings, and lab access codes
    # are whatever the researchers handed out.
    return worker_id.strip()


def pseudonym(key: ReleaseKey, worker_id: str, namespace: str) -> str:
    message = namespace.encode("utf-8") + b"\x00" + normalize_worker_id(worker_id).encode("utf-8")
    return "w" + hmac.new(key.pseudonym_key, message, hashlib.sha256).hexdigest()[:20]


def is_pseudonym(text: str) -> bool:
    return bool(PSEUDONYM.match(text))


class ReidentificationTable:
    """pseudonym -> worker id, per namespace, kept encrypted beside the key."""

    def __init__(self, key: ReleaseKey) -> None:
        self.key = key
        self.path = key.companion(REID_SUFFIX)
        stored = read_vault(key, self.path, {"namespaces": {}})
        self.namespaces: dict[str, dict[str, str]] = stored.get("namespaces", {})
        self._dirty = False

    def issue(self, worker_id: str, namespace: str) -> str:
        """The pseudonym of `worker_id` in `namespace`, remembered for re-identification."""
        alias = pseudonym(self.key, worker_id, namespace)
        table = self.namespaces.setdefault(namespace, {})
        if table.get(alias) != normalize_worker_id(worker_id):
            table[alias] = normalize_worker_id(worker_id)
            self._dirty = True
        return alias

    def lookup(self, alias: str, namespace: str | None = None) -> list[tuple[str, str]]:
        """(namespace, worker id) for each namespace where `alias` was issued."""
        names = [namespace] if namespace else sorted(self.namespaces)
        return [
            (n, self.namespaces[n][alias]) for n in names if alias in self.namespaces.get(n, {})
        ]

    def worker_ids(self) -> set[str]:
        """Every worker id that any release built with this key has pseudonymised."""
        return {worker for table in self.namespaces.values() for worker in table.values()}

    def save(self) -> None:
        if self._dirty:
            write_vault(self.key, self.path, {"namespaces": self.namespaces})
            self._dirty = False
