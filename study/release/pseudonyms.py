"""Worker pseudonyms, and the encrypted table that turns them back into worker ids.

A pseudonym is `w` + the first 20 hex digits (80 bits) of
HMAC-SHA256(pseudonym key, namespace + NUL + worker id). Keyed, because a plain hash of an
MTurk worker id can be reversed by hashing every id of that shape; namespaced, because one key
may serve several datasets whose writers must not be linkable across them (the namespace
defaults to the release name). The same key, namespace and worker id always give the same
pseudonym, so a writer keeps one pseudonym across sessions and releases. The lower-case `w`
prefix keeps pseudonyms from looking like MTurk ids (`A` + upper-case letters and digits).

Session ids are released under fresh keyed ids too: the study server's own ids are live
(`/s/<id>/...` and the event API answer to them while the study runs), so a released log under
its database id could be matched with the server or the database. A released session id is the
first 32 hex digits (128 bits, CoAuthor's shape, so tools written for CoAuthor read it) of
HMAC-SHA256(pseudonym key, "session" + NUL + namespace + NUL + session id). Keyed rather than
random, so it is stable across versions of the same dataset (same key and namespace):
`study release diff` and the version rules compare sessions by id, and a session that did not
change keeps its id. Without the key, nobody can link it to the live id.

The re-identification table (`KEYFILE.reid`, Fernet-encrypted, see `study.release.keys`) maps
each pseudonym a build has issued back to its worker id, for payments and withdrawals, and each
released session id back to the study's session id. It is written by `study release build` and
read by `study keys lookup` and `study withdraw`; it never enters a release.
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


def released_session_id(key: ReleaseKey, session_id: str, namespace: str) -> str:
    message = b"session\x00" + namespace.encode("utf-8") + b"\x00" + session_id.encode("utf-8")
    return hmac.new(key.pseudonym_key, message, hashlib.sha256).hexdigest()[:32]


class ReidentificationTable:
    """pseudonym -> worker id, per namespace, kept encrypted beside the key."""

    def __init__(self, key: ReleaseKey) -> None:
        self.key = key
        self.path = key.companion(REID_SUFFIX)
        stored = read_vault(key, self.path, {"namespaces": {}})
        self.namespaces: dict[str, dict[str, str]] = stored.get("namespaces", {})
        # released session id -> the study's session id, per namespace (absent in tables
        # written before sessions were re-keyed)
        self.sessions: dict[str, dict[str, str]] = stored.get("sessions", {})
        self._dirty = False

    def issue(self, worker_id: str, namespace: str) -> str:
        """The pseudonym of `worker_id` in `namespace`, remembered for re-identification."""
        alias = pseudonym(self.key, worker_id, namespace)
        table = self.namespaces.setdefault(namespace, {})
        if table.get(alias) != normalize_worker_id(worker_id):
            table[alias] = normalize_worker_id(worker_id)
            self._dirty = True
        return alias

    def issue_session(self, session_id: str, namespace: str) -> str:
        """The released id of `session_id` in `namespace`, remembered for re-identification."""
        released = released_session_id(self.key, session_id, namespace)
        table = self.sessions.setdefault(namespace, {})
        if table.get(released) != session_id:
            table[released] = session_id
            self._dirty = True
        return released

    def lookup_session(self, released: str, namespace: str | None = None) -> list[tuple[str, str]]:
        """(namespace, study session id) for each namespace where `released` was issued."""
        names = [namespace] if namespace else sorted(self.sessions)
        return [
            (n, self.sessions[n][released]) for n in names if released in self.sessions.get(n, {})
        ]

    def session_ids(self) -> set[str]:
        """Every study session id that a release built with this key has re-keyed."""
        return {session for table in self.sessions.values() for session in table.values()}

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
            write_vault(
                self.key, self.path, {"namespaces": self.namespaces, "sessions": self.sessions}
            )
            self._dirty = False
