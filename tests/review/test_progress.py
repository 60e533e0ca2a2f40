"""`study status` of a study in rounds: sessions per round, and where the review stands, so the
researcher sees from the command line whether ratings are owed, disagreements wait for an
adjudication, or the round is ready for `study qualify`."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main
from study.review import submissions
from study.review import ratings as rating_store
from study.store import writing
from tests.review.conftest import add_reviewer
from tests.review.sessions import finished_session

SCORES = (1, 2, 3, 4, 5)


def status(folder) -> str:
    result = CliRunner().invoke(main, ["status", str(folder)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_status_counts_sessions_per_round_and_the_review_s_outcomes(review_folder, review_study, engine):
    passing = finished_session(engine, worker_id="A1PASSING", round_name="qualification")
    split = finished_session(engine, worker_id="A1SPLIT", round_name="qualification")
    finished_session(engine, worker_id="A1UNRATED", round_name="qualification")
    finished_session(engine, access_code="passing-main", round_name="main")
    ana, ben = add_reviewer(engine, "ana"), add_reviewer(engine, "ben")
    with writing(engine) as connection:
        submissions.collect(connection, review_study)
        named = {s["session_id"]: s["submission_id"] for s in submissions.all_submissions(connection)}
        for reviewer, (one, other) in ((ana, (4, 5)), (ben, (5, 2))):
            rating_store.rate(connection, named[passing], reviewer, one, "", scores=SCORES)
            rating_store.rate(connection, named[split], reviewer, other, "", scores=SCORES)

    said = status(review_folder)

    assert "Rounds (sessions): qualification 3 (3 complete), main 1 (1 complete)" in said
    assert (
        "Review: 3 submissions, 4 ratings by 2 reviewers; awaiting ratings 1, "
        "needs adjudication 1, passed 1, failed 0, disqualified 0"
    ) in said


def test_status_of_a_study_without_rounds_or_review_says_nothing_of_them(plain_study):
    from study.store import create_tables, make_engine

    engine = make_engine(plain_study.database_url)
    create_tables(engine)
    finished_session(engine, worker_id="A1WRITER")
    engine.dispose()

    said = status(plain_study.directory)

    assert "Rounds" not in said and "Review:" not in said
