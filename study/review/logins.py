"""Login sessions of the reviewers' workspace, and their CSRF tokens.

A login is a random token in an HttpOnly, SameSite=Strict cookie; the database keeps its SHA-256
with the reviewer, an expiry and the login's CSRF token. Every POST in the workspace must send
that CSRF token back (a hidden form field or the X-CSRF-Token header), which a page on another
site cannot read, so it cannot make a logged-in reviewer's browser rate or decide anything.
Keeping logins on the server (rather than in a signed cookie) makes logging out final and works
across several server processes without a shared secret.

Password guessing is slowed per address, not per name: locking a name after failed logins would
let anyone lock a researcher out of their own workspace. An address may fail `FREE_FAILURES`
times within `FAILURE_WINDOW_SECONDS`; after that each attempt must wait twice as long as the last
(`BACKOFF_SECONDS`, doubling up to `MAX_BACKOFF_SECONDS`) after that address's latest failure, and
is refused unchecked until then. The address is the connection's, or the client's as the
trusted reverse proxy reports it (`study.server.proxy`); an IPv6 client's is its /64
(`study.server.throttle.counted_as`). Changing a password or disabling an
account ends every login of that account.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from sqlalchemy import Connection, select, update

from study.review import accounts, audit
from study.store.coordination import clock, take_turn
from study.store.review_tables import review_logins

LOGIN_HOURS = 12
FREE_FAILURES = 5
FAILURE_WINDOW_SECONDS = 15 * 60
BACKOFF_SECONDS = 2.0
MAX_BACKOFF_SECONDS = 15 * 60


@dataclass(frozen=True)
class Login:
    reviewer: dict
    csrf_token: str

    @property
    def name(self) -> str:
        return self.reviewer["name"]

    @property
    def researcher(self) -> bool:
        return self.reviewer["role"] == "researcher"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start(connection: Connection, reviewer: dict) -> str:
    """A new login for `reviewer`; returns the cookie value."""
    token = secrets.token_urlsafe(32)
    now = time.time()
    connection.execute(
        review_logins.insert().values(
            token_hash=_digest(token),
            reviewer_id=reviewer["reviewer_id"],
            csrf_token=secrets.token_urlsafe(32),
            created_at=now,
            expires_at=now + LOGIN_HOURS * 3600,
        )
    )
    audit.record(connection, reviewer["name"], audit.LOGIN)
    return token


def find(connection: Connection, token: str | None) -> Login | None:
    """The live login of a cookie value, else None (unknown, expired, logged out, disabled)."""
    if not token or len(token) > 200:
        return None
    row = (
        connection.execute(
            select(review_logins).where(review_logins.c.token_hash == _digest(token))
        )
        .mappings()
        .first()
    )
    if row is None or row["ended_at"] is not None or row["expires_at"] < time.time():
        return None
    reviewer = accounts.by_id(connection, row["reviewer_id"])
    if reviewer is None or not reviewer["active"]:
        return None
    return Login(reviewer=reviewer, csrf_token=row["csrf_token"])


def end(connection: Connection, token: str) -> None:
    connection.execute(
        update(review_logins)
        .where(review_logins.c.token_hash == _digest(token))
        .values(ended_at=time.time())
    )


def csrf_matches(expected: str, sent: str | None) -> bool:
    # compare_digest: the time taken does not tell an attacker how much of a guess was right.
    return bool(sent) and hmac.compare_digest(expected.encode(), sent.encode())


def record_failure(connection: Connection, name: str, address: str | None) -> None:
    audit.record(connection, name[:64] or "(no name)", audit.LOGIN_FAILED, ip=address or "")


def wait_seconds(connection: Connection, address: str | None) -> float:
    """How long `address` must wait before its next login attempt is checked (0: go ahead).
    Call it in the transaction that records the attempt's failure: attempts from one address
    are then checked one at a time on every server and host, so a burst of guesses sent at
    once cannot all pass before the first failure is counted."""
    take_turn(connection, f"login:{address or ''}")
    now = clock(connection)  # the audit log's (audit.record)
    recent = [
        entry["at"]
        for entry in audit.entries(
            connection, actions=(audit.LOGIN_FAILED,), since=now - FAILURE_WINDOW_SECONDS
        )
        if entry["detail"].get("ip", "") == (address or "")
    ]
    if len(recent) < FREE_FAILURES:
        return 0.0
    backoff = min(BACKOFF_SECONDS * 2 ** (len(recent) - FREE_FAILURES), MAX_BACKOFF_SECONDS)
    return max(0.0, max(recent) + backoff - now)
