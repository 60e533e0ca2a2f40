"""What `study status` says of a study's rounds and its review: how many sessions each round
holds, and where the reviewed submissions stand (the workspace's Outcomes page in one line), so a
researcher sees from the command line when ratings are owed, disagreements wait for them, or the
round is ready for `study qualify`. A writer who withdrew (`study withdraw --study`) is in
neither count, as in the workspace.
"""

from __future__ import annotations

from collections import Counter

from sqlalchemy import Connection, func, select

from study.config import Study
from study.review import decisions, rounds, rules, submissions
from study.review import settings as review_settings
from study.store.db import sessions
from study.store.review_tables import review_ratings, review_submissions
from study.store.withdrawals import not_withdrawn


def lines(connection: Connection, study: Study) -> list[str]:
    """Nothing for a study without rounds that was never reviewed."""
    found = []
    declared = review_settings.from_study(study).rounds
    if declared:
        counts = []
        for declared_round in declared:
            in_round = rounds.sessions_in(study, declared_round.name)
            total = connection.execute(select(func.count()).where(in_round, not_withdrawn())).scalar()
            complete = connection.execute(
                select(func.count()).where(in_round, not_withdrawn(), sessions.c.stage == "complete")
            ).scalar()
            counts.append(f"{declared_round.name} {total} ({complete} complete)")
        found.append("Rounds (sessions): " + ", ".join(counts))
    # The submissions the workspace (or `study qualify`) has listed; one not yet opened there is
    # listed at its next page view, so a finished session may be missing here until then.
    # A withdrawn writer's submissions, and the ratings given them, are left out (the workspace's
    # pages leave them out too: study.review.submissions.in_review).
    listed = submissions.in_review(connection)
    gone = len(submissions.withdrawn(connection))
    if listed or gone:
        outcomes = Counter(j.outcome.status for j in decisions.judge(connection, study, listed))
        counted = review_ratings.c.submission_id.in_(
            select(review_submissions.c.submission_id)
            .join(sessions, sessions.c.session_id == review_submissions.c.session_id)
            .where(not_withdrawn())
        )
        rated = connection.execute(select(func.count()).select_from(review_ratings).where(counted)).scalar()
        by = connection.execute(
            select(func.count(func.distinct(review_ratings.c.reviewer_id))).where(counted)
        ).scalar()
        found.append(
            f"Review: {len(listed)} submissions, {rated} ratings by {by} reviewers; "
            + ", ".join(f"{status} {outcomes.get(status, 0)}" for status in rules.STATUSES)
            + (f"; {gone} submission(s) of writers who withdrew left out" if gone else "")
        )
    return found
