"""The qualification round's outcomes, one per reviewed submission, with the writer and the
provider's submission they came from: what each provider's qualify pays and gates a main round
on (`study qualify`: study.mturk.qualify grants an MTurk qualification, study.prolific.qualify
fills a Prolific participant group; the provider is chosen through study.providers).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from study import providers
from study.review import decisions, rules, submissions
from study.review.decisions import Judged
from study.review.rules import Outcome
from study.store import writing
from study.store import sessions as session_store


# The outcome a withdrawn writer's submission is given in place of its review's: reviewers no
# longer read it (study.review.submissions.withdrawn), and `study qualify` pays it as passed work.
WITHDREW = "withdrew"


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

    @property
    def withdrew(self) -> bool:
        return self.judged.outcome.status == WITHDREW

    def earns_pay(self, pay_min_score: int) -> bool:
        """Whether `study qualify` pays this submission's work: scored at least `pay_min_score`,
        or written by a writer who withdrew (paid as a passed one is, with no review outcome;
        a disqualified one is not: rule 2 needs no reviewer)."""
        return self.withdrew or (self.score is not None and self.score >= pay_min_score)


def candidates(ctx) -> list[Candidate]:
    """Every submission with a final outcome, and every one of a writer who withdrew (as
    `WITHDREW`, whatever its ratings, unless disqualified), with its worker, the provider's
    submission (None for a lab access code) and the provider that synced it (None: none has
    yet). `ctx`: any provider's context (its `study` and `engine`)."""
    with writing(ctx.engine) as connection:
        submissions.collect(connection, ctx.study)
        everything = submissions.all_submissions(connection)
        gone = submissions.withdrawn(connection)
        reviewed = [s for s in everything if s["submission_id"] not in gone]
        judged = decisions.judge(connection, ctx.study, reviewed)
        judged += [_withdrawn(s) for s in everything if s["submission_id"] in gone]
        synced_by = providers.synced_by(connection)
        found = []
        for item in judged:
            if not item.outcome.final and item.outcome.status != WITHDREW:
                continue
            session = session_store.get(connection, item.submission["session_id"])
            found.append(Candidate(item, session["worker_id"], session["assignment_id"],
                                   synced_by.get(session["session_id"])))  # fmt: skip
    return found


def _withdrawn(submission: dict) -> Judged:
    """A withdrawn writer's submission, judged without its ratings or any adjudication."""
    if submission["disqualified"]:
        outcome = Outcome(rules.DISQUALIFIED, None, submission["disqualified"])
    else:
        outcome = Outcome(WITHDREW, None, "the writer withdrew (study withdraw --study)")
    return Judged(submission, (), None, outcome)


def undecided(study, engine) -> Counter:
    """How many submissions have no final outcome yet, by status (awaiting ratings, needs
    adjudication): `study qualify` neither pays nor lets in their writers until they have. A
    withdrawn writer's are not counted: they wait for nobody."""
    with writing(engine) as connection:
        submissions.collect(connection, study)
        judged = decisions.judge(connection, study, submissions.in_review(connection))
    return Counter(item.outcome.status for item in judged if not item.outcome.final)


def lab_round(study, engine) -> Counter | None:
    """The outcomes by status when every reviewed submission's writer entered with an access
    code (a lab round): there is no provider's submission to pay nor qualification to grant,
    and the task server already admits the writers who passed (study.review.rounds). Else None."""
    with writing(engine) as connection:
        submissions.collect(connection, study)
        reviewed = submissions.in_review(connection)
        if not reviewed:
            return None
        for submission in reviewed:
            session = session_store.get(connection, submission["session_id"])
            if session["worker_id"] or not session["access_code"]:
                return None
        judged = decisions.judge(connection, study, reviewed)
    return Counter(item.outcome.status for item in judged)


def withdrew_note(paid: bool, *, revoked: bool = False) -> str:
    """What `study qualify` says of a withdrawn writer's submission (both providers). `paid`: the
    ledger holds its payment confirmed (by this run or an earlier one); `revoked`: this run took
    back the qualification (group place) it had given them before they withdrew."""
    if revoked:
        return (f"{'paid' if paid else 'not paid'}, qualification revoked: withdrew (study "
                "withdraw --study); reviewers no longer see it")
    return (f"{'paid' if paid else 'not paid'}, not qualified: withdrew (study withdraw --study); "
            "reviewers no longer see it, and no qualification is granted")


def withdrawn_writers(ctx) -> set[str]:
    """The writers who withdrew (study.store.withdrawals): `study qualify` grants them no
    qualification, but pays for their work as it would anyone's (they did it)."""
    from study.store import reading
    from study.store.withdrawals import withdrawn_ids

    with reading(ctx.engine) as connection:
        return withdrawn_ids(connection)
