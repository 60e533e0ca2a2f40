"""Reviewer accounts: a name, a role and a salted password hash.

Passwords are hashed with werkzeug.security (scrypt with a random 16-character salt, the hash
naming its method so stronger settings can be introduced later). Two roles:
  - reviewer: rates the submissions assigned to them, blind to others' ratings until they rate;
  - researcher: also sees every rating, agreement and the audit log, and adjudicates.
Accounts are made on the command line (`study reviewers add DIR NAME`), never through the web.
"""

from __future__ import annotations

import functools
import re
import time

from sqlalchemy import Connection, select, update
from werkzeug.security import check_password_hash, generate_password_hash

from study.review import audit, queue
from study.store.review_tables import review_logins, reviewers

ROLES = ("reviewer", "researcher")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
MIN_PASSWORD = 10


class AccountError(ValueError):
    pass


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"The password must have at least {MIN_PASSWORD} characters.")


def add(
    connection: Connection, name: str, password: str, *, role: str = "reviewer", by: str = "cli"
) -> dict:
    if not NAME.match(name):
        raise AccountError(
            f"{name!r} cannot be a reviewer name: use letters, digits, '_', '.', '@' or '-' "
            "(at most 64), starting with a letter or digit."
        )
    if role not in ROLES:
        raise AccountError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    if by_name(connection, name) is not None:
        raise AccountError(
            f"A reviewer named {name!r} exists already. Fix: choose another name, or change "
            f"the password with `study reviewers password DIR {name}`."
        )
    check_password(password)
    connection.execute(
        reviewers.insert().values(
            name=name,
            password_hash=generate_password_hash(password),
            role=role,
            active=1,
            created_at=time.time(),
        )
    )
    audit.record(connection, by, audit.REVIEWER_ADD, name=name, role=role)
    return by_name(connection, name)


def set_password(connection: Connection, name: str, password: str, *, by: str = "cli") -> None:
    account = _existing(connection, name)
    check_password(password)
    connection.execute(
        update(reviewers)
        .where(reviewers.c.reviewer_id == account["reviewer_id"])
        .values(password_hash=generate_password_hash(password), active=1)
    )
    # A new password is often set because the old one leaked: whoever used it is logged out.
    _end_logins(connection, account["reviewer_id"])
    audit.record(connection, by, audit.REVIEWER_PASSWORD, name=name)


def disable(connection: Connection, name: str, *, by: str = "cli") -> None:
    """The account can no longer log in; its ratings stay (they are part of the record)."""
    account = _existing(connection, name)
    connection.execute(
        update(reviewers).where(reviewers.c.reviewer_id == account["reviewer_id"]).values(active=0)
    )
    _end_logins(connection, account["reviewer_id"])
    queue.expire_assignments(connection, account["reviewer_id"])
    audit.record(connection, by, audit.REVIEWER_DISABLE, name=name)


def verify(connection: Connection, name: str, password: str) -> dict | None:
    """The active account with this name and password, else None."""
    account = by_name(connection, name)
    if account is None or not account["active"]:
        check_password_hash(_dummy_hash(), password)
        return None
    return account if check_password_hash(account["password_hash"], password) else None


@functools.cache
def _dummy_hash() -> str:
    """A hash to check an unknown name's password against, so that a wrong name takes as long
    as a wrong password. Made at the first unknown name rather than at import: scrypt takes
    0.1-0.6 s, which every server process and every `study` command would pay at start."""
    return generate_password_hash("not a password of anyone")


def by_name(connection: Connection, name: str) -> dict | None:
    row = connection.execute(select(reviewers).where(reviewers.c.name == name)).mappings().first()
    return dict(row) if row else None


def by_id(connection: Connection, reviewer_id: int) -> dict | None:
    row = (
        connection.execute(select(reviewers).where(reviewers.c.reviewer_id == reviewer_id))
        .mappings()
        .first()
    )
    return dict(row) if row else None


def all_accounts(connection: Connection) -> list[dict]:
    return [
        dict(r) for r in connection.execute(select(reviewers).order_by(reviewers.c.name)).mappings()
    ]


def _end_logins(connection: Connection, reviewer_id: int) -> None:
    """End every live login of an account (its password changed, or it was disabled). Here
    rather than in study.review.logins, which reads accounts to check a login."""
    connection.execute(
        update(review_logins)
        .where(review_logins.c.reviewer_id == reviewer_id, review_logins.c.ended_at.is_(None))
        .values(ended_at=time.time())
    )


def _existing(connection: Connection, name: str) -> dict:
    account = by_name(connection, name)
    if account is None:
        raise AccountError(
            f"No reviewer named {name!r}. Fix: add one with `study reviewers add DIR {name}`."
        )
    return account
