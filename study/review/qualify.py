"""The qualification round's outcomes, one per reviewed submission, with the writer and the
provider's submission they came from: what each provider's qualify pays and gates a main round
on (`study qualify`: study.mturk.qualify grants an MTurk qualification, study.prolific.qualify
fills a Prolific participant group; the provider is chosen through study.providers).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from study import providers
from study.review import decisions, submissions
from study.review.decisions import Judged
from study.store import writing
from study.store import sessions as session_store


@dataclass(frozen=True)
class Candidate:
    judged: Judged
    worker_id: str | None
    assignment_id: str | None
    provider: str | None = None  # the provider that synced the submission (study.providers)

    @property
    def submission_id(self) -> str:
        return self.judged.submission_id

    @property
    def score(self) -> int | None:
        return self.judged.outcome.score


def candidates(ctx) -> list[Candidate]:
    """Every submission with a final outcome, with its worker, the provider's submission (None
    for a lab access code) and the provider that synced it (None: none has yet). `ctx`: any
    provider's context (its `study` and `engine`)."""
    with writing(ctx.engine) as connection:
        submissions.collect(connection, ctx.study)
        judged = decisions.judge(connection, ctx.study, submissions.all_submissions(connection))
        synced_by = providers.synced_by(connection)
        found = []
        for item in judged:
            if not item.outcome.final:
                continue
            session = session_store.get(connection, item.submission["session_id"])
            found.append(Candidate(item, session["worker_id"], session["assignment_id"],
                                   synced_by.get(session["session_id"])))  # fmt: skip
    return found


def undecided(study, engine) -> Counter:
    """How many submissions have no final outcome yet, by status (awaiting ratings, needs
    adjudication): `study qualify` neither pays nor lets in their writers until they have."""
    with writing(engine) as connection:
        submissions.collect(connection, study)
        judged = decisions.judge(connection, study, submissions.all_submissions(connection))
    return Counter(item.outcome.status for item in judged if not item.outcome.final)


# What `study qualify` says of a withdrawn writer's submission (both providers).
WITHDRAWN_NOT_GRANTED = ("the writer withdrew (study withdraw --study): no qualification granted or "
                         "changed; paying for the work is as it would be")


def withdrawn_writers(ctx) -> set[str]:
    """The writers who withdrew (study.store.withdrawals): `study qualify` grants them no
    qualification, but pays for their work as it would anyone's (they did it)."""
    from study.store import reading
    from study.store.withdrawals import withdrawn_ids

    with reading(ctx.engine) as connection:
        return withdrawn_ids(connection)
