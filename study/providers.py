"""Recruitment providers: the one small interface MTurk and Prolific both offer, and the
registry that names them (README, "MTurk" and "Prolific").

Each provider is a folder of its own (study/mturk, study/prolific) with an adapter module,
`provider.py`, that implements `Provider` over its own context (the account, the study, the
database). The core names no provider: code that must act on "the provider's submission"
(a worker's HIT assignment, a participant's Prolific submission) asks `provider_for(name)`.
Both providers file a participant's session alike (study.store.db.sessions): the worker id or
PID as `worker_id`, the assignment or Prolific submission as `assignment_id`, the HIT or
Prolific study as `hit_id`, so the repeat guard, review, rounds and releases (keyed pseudonyms
of worker ids) treat them the same.

The operations, in the words of the issue (19): post work, list it, sync submissions with
sessions, review them by the shared rules, approve / reject, pay a bonus through the ledger,
qualify (gate a main round on a qualification round), block, notify, and the balance with the
study's budget. Every paying operation is safe to re-run.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, runtime_checkable

ADAPTERS = {
    "mturk": "study.mturk.provider",
    "prolific": "study.prolific.provider",
}


@runtime_checkable
class Provider(Protocol):
    name: str

    def post(self, ctx: Any, **what: Any) -> list[str]:
        """Offer work (HITs, a Prolific study); returns the provider's ids."""

    def list(self, ctx: Any) -> list[dict]:
        """This study's work on the provider (never another study's)."""

    def sync(self, ctx: Any) -> Any:
        """Submissions reconciled with sessions and the ledger; a report with `problems`."""

    def review(self, ctx: Any) -> list[Any]:
        """A proposal (approve / reject, with reasons) per submission awaiting review."""

    def approve(self, ctx: Any, submission_id: str) -> str: ...

    def reject(self, ctx: Any, submission_id: str, message: str) -> str: ...

    def bonus(self, ctx: Any, submission_id: str, amount: Any, reason: str) -> str:
        """Pay once, whatever crashes between intent and answer; returns the outcome."""

    def qualify(self, ctx: Any) -> Any:
        """Pay the qualification round and gate the main round on who passed."""

    def block(self, ctx: Any, worker_id: str) -> None: ...

    def notify(self, ctx: Any, worker_ids: list[str], message: str) -> dict[str, str]: ...

    def balance(self, ctx: Any) -> dict:
        """The account's balance and this study's committed money (fees included)."""


class UnknownProvider(KeyError):
    pass


def names() -> tuple[str, ...]:
    return tuple(ADAPTERS)


def provider_for(name: str) -> Provider:
    """The provider called `name` ("mturk" or "prolific")."""
    if name not in ADAPTERS:
        raise UnknownProvider(
            f"No recruitment provider named {name!r}. Fix: use one of {', '.join(ADAPTERS)}."
        )
    return importlib.import_module(ADAPTERS[name]).PROVIDER
