"""Recruitment providers: the one small interface MTurk and Prolific both offer, and the
registry that names them (README, "Prolific", "One interface, two providers").

Each provider is a folder of its own (study/mturk, study/prolific) with an adapter module,
`provider.py`, that implements `Provider`. The core names no provider: code that must act on
"the provider's submission" (a worker's HIT assignment, a participant's Prolific submission)
asks this module, which loops over the registered providers or picks one by name:

- releases count a session only if some provider has synced its submission for the same
  worker (`counted_session_ids`, study.release.source);
- `study qualify` runs the qualify command of the provider the qualification round ran on
  (`qualification_provider`, study.review.cli);
- the task server lets each provider's participant path (MTurk's HIT parameters and its
  completion form, Prolific's URL parameters and completion redirect) take the arrivals and
  completions that are its (`participant_paths`, study.server.participant);
- `study status` shows every provider's synced submissions and money (`summaries`).

Both providers file a participant's session alike (study.store.db.sessions): the worker id or
PID as `worker_id`, the assignment or Prolific submission as `assignment_id`, the HIT or
Prolific study as `hit_id`, so the repeat guard, review, rounds and releases (keyed pseudonyms
of worker ids) treat them the same. What they do not share is money: each keeps its own ledger
table and budget cap (study.mturk.ledger and study.mturk.budget in USD, study.prolific.ledger
in the workspace currency's minor units), filed under its own account (`environment`); a
summary carries each in its own currency.

The operations, in the words of issue 19: post work, list it, sync submissions with sessions,
review them by the shared rules, approve / reject, pay a bonus through the ledger, qualify
(gate a main round on a qualification round), block, notify, and the balance with the study's
budget. Every paying operation is safe to re-run.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from sqlalchemy import Connection, select

from study.config import Study
from study.store import verified
from study.store.db import sessions

ADAPTERS = {
    "mturk": "study.mturk.provider",  # first: the default where the database shows no provider
    "prolific": "study.prolific.provider",
}


@dataclass(frozen=True)
class Summary:
    """One provider account's standing for this study, from the study database alone."""

    provider: str
    environment: str  # the account the rows are filed under (sandbox / live, Prolific researcher)
    submissions: int  # synced submissions with a session of this study
    committed: str  # reserved or paid, fees included, in the account's currency
    paid: str
    cap: str | None  # the budget cap of the provider's section, None: no cap


@dataclass(frozen=True)
class Decisions:
    """Submissions bound to a session of this study, by the provider's review decision."""

    approved: int
    rejected: int
    # The sessions of the rejected submissions: the preregistered analysis leaves them out
    # (study.plan.deviations).
    rejected_sessions: frozenset[str] = frozenset()

    @classmethod
    def of(cls, rows: list[tuple[str, str]], approved: str, rejected: str) -> "Decisions | None":
        """From the provider's (session id, status) of the submissions bound to sessions; None
        if none."""
        if not rows:
            return None
        statuses = [status for _, status in rows]
        return cls(approved=statuses.count(approved), rejected=statuses.count(rejected),
                   rejected_sessions=frozenset(session for session, status in rows if status == rejected))  # fmt: skip


@runtime_checkable
class ParticipantPath(Protocol):
    """A provider's own way into and out of the task server (Prolific: URL parameters in,
    a redirect to its completion URL out)."""

    # What its writers give back to leave a study, as a refusal asks them: "this HIT".
    returned_as: str

    def arrives(self, args) -> bool:
        """The /task request carries this provider's parameters."""

    def enter(self, args, round_name: str | None) -> Any:
        """The /task response: a preview, a refusal, or the session's page."""

    def completion_url(self, session: dict) -> str | None:
        """Where the completion page sends this session; None if it is not this provider's."""

    def submit_origin(self, session: dict) -> str | None:
        """The origin the completion page's form posts to (MTurk's externalSubmit); None."""

    def completion_form(self, session: dict) -> Any:
        """The completion page's form for this session (MTurk's Submit HIT), or None."""

    def submitted(self, session: dict) -> bool:
        """Whether the provider already has this session's submission (the page then says
        only that the session is finished)."""

    def submission_deadline(self, session: dict) -> float | None:
        """The latest time (epoch seconds) the provider may still take this session's
        submission, bounded from above from what the study knows (MTurk: entry + the
        assignment's duration): the completion page stays open until then, never less than its
        hour. None if the session is not this provider's."""


@runtime_checkable
class Provider(Protocol):
    name: str
    title: str  # as people write it: "MTurk", "Prolific"
    participant: ParticipantPath | None
    repeat_refusal: str  # what a worker the repeat guard turns away reads

    # -- what the core asks, from the study and its database (no call to the provider) ------

    def synced(self):
        """The SQL condition "this session's submission was seen at the provider, for the same
        worker, as accepted work" over study.store.db.sessions."""

    def summaries(self, connection: Connection, study: Study) -> list[Summary]:
        """Per account with rows in this database: synced submissions, committed and paid."""

    def decisions(self, connection: Connection) -> Decisions | None:
        """How the review went for the submissions bound to sessions (the report's funnel, the
        preregistration's exclusions); None when the provider has none in this database."""

    def repeat_session(
        self, connection: Connection, study: Study, worker_id: str, arriving_with: str
    ) -> dict | None:
        """With the study's one-session-per-worker setting on, the worker's earlier synced
        session (the repeat guard); else None. `arriving_with`: what the worker arrives with,
        which an earlier session must not share (MTurk: the assignment; Prolific: the
        Prolific study, one session per participant and study)."""

    def qualify_command(self) -> Any:
        """The click command `study qualify --provider NAME DIR ...` runs."""

    def pays_by_itself(self, study: Study) -> str:
        """When the provider approves and pays submitted work without being asked, as a sentence
        for a researcher whose submissions wait for reviewers (`study qualify`); "" if never."""

    # -- the operations, over the provider's own context --------------------------------------

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


class WhichProvider(ValueError):
    """The study's database holds several providers' submissions: the researcher must say."""


def names() -> tuple[str, ...]:
    return tuple(ADAPTERS)


def provider_for(name: str) -> Provider:
    """The provider called `name` ("mturk" or "prolific")."""
    if name not in ADAPTERS:
        raise UnknownProvider(
            f"No recruitment provider named {name!r}. Fix: use one of {', '.join(ADAPTERS)}."
        )
    return importlib.import_module(ADAPTERS[name]).PROVIDER


def registered() -> list[Provider]:
    return [provider_for(name) for name in ADAPTERS]


def participant_paths() -> list[ParticipantPath]:
    return [p.participant for p in registered() if p.participant is not None]


def returning(session: dict) -> str | None:
    """What the writer of this session gives back to leave the study ("this HIT", "this
    submission"), by the participant path it came through; None for a lab writer."""
    for path in participant_paths():
        if path.submission_deadline(session) is not None:
            return path.returned_as
    return None


def counted_session_ids(connection: Connection, access_codes: frozenset[str] | None) -> set[str]:
    """The sessions a release counts (study.store.verified): synced by any provider, or a
    lab session with a listed access code."""
    return verified.counted_session_ids(connection, access_codes, [p.synced() for p in registered()])


def synced_by(connection: Connection) -> dict[str, str]:
    """Session id -> the name of the provider that synced its submission."""
    return {
        session_id: p.name for p in registered()
        for session_id in connection.execute(select(sessions.c.session_id).where(p.synced())).scalars()
    }  # fmt: skip


def providers_with_submissions(connection: Connection) -> list[str]:
    """The providers that have synced a submission of one of this study's sessions."""
    return [
        p.name for p in registered()
        if connection.execute(select(sessions.c.session_id).where(p.synced()).limit(1)).first()
    ]  # fmt: skip


def decisions(connection: Connection) -> list[tuple[Provider, Decisions]]:
    """Each provider with submissions bound to sessions, and how their review went."""
    return [(p, found) for p in registered() if (found := p.decisions(connection)) is not None]


def qualification_provider(connection: Connection) -> str:
    """The provider `study qualify` pays and gates on, when not named: the one whose synced
    submissions the database holds; with none yet, the first registered (MTurk, as before
    Prolific); with several, the researcher must say which."""
    found = providers_with_submissions(connection)
    if len(found) > 1:
        raise WhichProvider(
            f"This study has submissions from {' and '.join(found)}. Fix: say which provider "
            f"the qualification round ran on with --provider ({' or '.join(found)})."
        )
    return found[0] if found else names()[0]
