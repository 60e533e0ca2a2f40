"""`study qualify` run while reviewers are still at work: the submissions without a final outcome
(awaiting ratings, needs adjudication) are neither paid nor granted, and the researcher is told
how many wait and where to finish them, rather than read "0 failures" as "everyone is done"."""

from __future__ import annotations

from decimal import Decimal

from study.mturk import posting
from study.review import accounts, submissions
from study.review import ratings as rating_store
from study.store import writing
from tests.mturk.conftest import with_model
from tests.mturk.walk import take_hit
from tests.review.test_qualify import ctx, rated, run, TASK_URL  # noqa: F401  (fixtures)


def test_qualify_says_which_submissions_it_left_undecided(ctx, rated, emulator, review_folder, model_url):
    from study.server import create_app

    hit_id = posting.post(ctx, hits=1, assignments=2, reward=Decimal("2.50"), task_url=TASK_URL).hits[0]["hit_id"]
    task = create_app(with_model(ctx.study, model_url), engine=ctx.engine).test_client()
    take_hit(emulator.url, task, hit_id, "A1LATEWRITER")
    disputed = take_hit(emulator.url, task, hit_id, "A1DISPUTED")
    with writing(ctx.engine) as connection:
        submissions.collect(connection, ctx.study)
        by_session = {s["session_id"]: s["submission_id"] for s in submissions.all_submissions(connection)}
        for name, score in (("ana", 5), ("ben", 2)):  # both sides of the pass mark
            rating_store.rate(connection, by_session[disputed.session_id], accounts.by_name(connection, name),
                              score, "", scores=(1, 2, 3, 4, 5))  # fmt: skip

    output = run(str(review_folder), "--endpoint-url", emulator.url)

    assert (
        "Not decided yet: 2 submission(s) (awaiting ratings 1, needs adjudication 1), neither paid "
        "nor let into the main round by this run." in output
    )
    assert f"then run `study qualify {review_folder}` again" in output
    # Undecided is not unpaid for long: MTurk pays a submitted assignment by itself.
    assert "MTurk approves and pays a submitted assignment by itself 72 hours after it was submitted" in output
    assert "A1LATEWRITER" not in output and "A1DISPUTED" not in output  # nothing done for them
