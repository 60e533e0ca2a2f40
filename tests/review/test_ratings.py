"""Ratings are blind until one rates; every rating, edit and decision is in the audit log; a
change from a page that showed an older rating (another tab) is refused, on SQLite and
PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from study.review import audit, decisions, queue, submissions
from study.review import ratings as rating_store
from study.store import create_tables, reading, writing
from study.store.review_tables import review_audit
from tests.review.conftest import add_reviewer
from tests.review.sessions import finished_session
from tests.store.conftest import empty_database, postgres_url  # noqa: F401 - the cluster, as a fixture

SCORES = (1, 2, 3, 4, 5)


def one_submission(engine, study) -> str:
    finished_session(engine, worker_id="A1WRITER", round_name="qualification")
    with writing(engine) as connection:
        (submission_id,) = submissions.collect(connection, study)
    return submission_id


def test_a_reviewer_sees_no_other_rating_before_rating(review_study, engine):
    submission_id = one_submission(engine, review_study)
    ana, ben = add_reviewer(engine, "ana"), add_reviewer(engine, "ben")
    with writing(engine) as connection:
        rating_store.rate(connection, submission_id, ana, 5, "lovely ending", scores=SCORES)
        assert rating_store.visible_to(connection, submission_id, ben["reviewer_id"]) == []
        rating_store.rate(connection, submission_id, ben, 4, "", scores=SCORES)
        seen = rating_store.visible_to(connection, submission_id, ben["reviewer_id"])
        assert [(r["reviewer"], r["score"], r["comment"]) for r in seen] == [
            ("ana", 5, "lovely ending")
        ]
        # and ana, who rated first, now sees ben's
        assert [
            r["reviewer"]
            for r in rating_store.visible_to(connection, submission_id, ana["reviewer_id"])
        ] == ["ben"]


def test_scores_outside_the_rubric_and_long_comments_are_refused(review_study, engine):
    submission_id = one_submission(engine, review_study)
    ana = add_reviewer(engine, "ana")
    with writing(engine) as connection:
        for score, comment in ((6, ""), (0, ""), (3, "x" * 5001)):
            try:
                rating_store.rate(connection, submission_id, ana, score, comment, scores=SCORES)
            except rating_store.RatingError:
                continue
            raise AssertionError(f"accepted {score}")
        assert rating_store.of_submission(connection, submission_id) == []


def test_the_audit_log_keeps_every_rating_edit_and_decision(review_study, engine):
    submission_id = one_submission(engine, review_study)
    ana, ben = add_reviewer(engine, "ana"), add_reviewer(engine, "ben")
    rita = add_reviewer(engine, "rita", role="researcher")
    with writing(engine) as connection:
        queue.next_for(connection, ana, needed=2, assignment_hours=24)
        rating_store.rate(connection, submission_id, ana, 3, "no ending", scores=SCORES)
        rating_store.rate(
            connection, submission_id, ana, 3, "no ending", scores=SCORES
        )  # no change
        rating_store.rate(connection, submission_id, ben, 5, "", scores=SCORES)
        rating_store.rate(
            connection, submission_id, ana, 4, "ending is there after all", scores=SCORES
        )
        decisions.adjudicate(connection, submission_id, rita, 4, "ending present", scores=SCORES)
        decisions.adjudicate(
            connection, submission_id, rita, 5, "on reflection, great", scores=SCORES
        )
        log = audit.entries(connection, submission_id=submission_id)
    actions = [(e["actor"], e["action"]) for e in reversed(log)]
    assert actions == [
        ("ana", audit.SUBMISSION_ASSIGN),
        ("ana", audit.RATING_CREATE),
        ("ben", audit.RATING_CREATE),
        ("ana", audit.RATING_EDIT),
        ("rita", audit.DECISION_ADJUDICATE),
        ("rita", audit.DECISION_ADJUDICATE),
    ]
    edit = log[2]["detail"]
    assert edit == {
        "score": 4, "comment": "ending is there after all", "previous_score": 3,
        "previous_comment": "no ending", "after_seeing_others": True,
    }  # fmt: skip
    assert log[0]["detail"] == {"score": 5, "note": "on reflection, great", "previous_score": 4}


def test_automatic_disqualification_is_logged_with_its_reason(review_study, engine):
    finished_session(
        engine, worker_id="A1ALONE", round_name="qualification", script=[("W", " Alone.")]
    )
    with writing(engine) as connection:
        (submission_id,) = submissions.collect(connection, review_study)
        assert submissions.collect(connection, review_study) == []  # collected once
    with reading(engine) as connection:
        (entry,) = audit.entries(connection, submission_id=submission_id)
        judged = decisions.judge(connection, review_study, submissions.all_submissions(connection))
    assert (entry["actor"], entry["action"]) == ("rules", audit.DECISION_DISQUALIFY)
    assert "asked for suggestions 0 times" in entry["detail"]["reason"]
    assert judged[0].outcome.status == "disqualified"


def test_the_audit_log_never_names_a_worker(review_study, engine):
    submission_id = one_submission(engine, review_study)
    ana = add_reviewer(engine, "ana")
    with writing(engine) as connection:
        rating_store.rate(connection, submission_id, ana, 4, "fine", scores=SCORES)
        rows = connection.execute(select(review_audit)).mappings().all()
    assert rows and not any("A1WRITER" in str(dict(row)) for row in rows)


# -- two tabs on one rating -------------------------------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def any_engine(request, review_study):
    """The study database on SQLite, or on the test run's PostgreSQL cluster (emptied)."""
    url = review_study.database_url if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    engine = empty_database(url)
    yield engine
    engine.dispose()


def test_a_change_from_a_tab_that_showed_an_older_rating_is_refused_saying_what_is_stored(
    review_study, any_engine
):
    submission_id = one_submission(any_engine, review_study)
    ana = add_reviewer(any_engine, "ana")
    with writing(any_engine) as connection:
        # Two tabs opened before any rating (version 0); the first rates.
        first = rating_store.rate(connection, submission_id, ana, 4, "strong ending", scores=SCORES, seen=0)
        assert first["version"] == 1
    with pytest.raises(rating_store.StaleRating) as refused, writing(any_engine) as connection:
        rating_store.rate(connection, submission_id, ana, 2, "weak middle", scores=SCORES, seen=0)
    assert str(refused.value).startswith("Not saved: this rating was changed in another tab")
    assert 'it is now 4 with the comment "strong ending"' in str(refused.value)
    assert "reload the page" in str(refused.value)
    assert refused.value.current["version"] == 1
    with writing(any_engine) as connection:
        stored = rating_store.own(connection, submission_id, ana["reviewer_id"])
        assert (stored["score"], stored["comment"], stored["version"]) == (4, "strong ending", 1)
        assert [e["action"] for e in audit.entries(connection, submission_id=submission_id)] == [
            audit.RATING_CREATE
        ]
        # Sending what is stored is no conflict; rating again over the version now shown is.
        same = rating_store.rate(connection, submission_id, ana, 4, "strong ending", scores=SCORES, seen=0)
        assert same["version"] == 1
        changed = rating_store.rate(connection, submission_id, ana, 2, "weak middle", scores=SCORES, seen=1)
        assert (changed["score"], changed["comment"], changed["version"]) == (2, "weak middle", 2)
        with pytest.raises(rating_store.StaleRating):
            rating_store.rate(connection, submission_id, ana, 5, "", scores=SCORES, seen=1)


def test_a_database_made_before_rating_versions_reads_its_ratings_as_version_1(review_study, any_engine):
    submission_id = one_submission(any_engine, review_study)
    ana = add_reviewer(any_engine, "ana")
    with writing(any_engine) as connection:
        connection.exec_driver_sql("ALTER TABLE review_ratings DROP COLUMN version")
        connection.exec_driver_sql(
            "INSERT INTO review_ratings (submission_id, reviewer_id, score, comment, rated_at, updated_at)"
            f" VALUES ('{submission_id}', {ana['reviewer_id']}, 3, 'old', 1.0, 1.0)"
        )
    create_tables(any_engine)
    with writing(any_engine) as connection:
        assert rating_store.own(connection, submission_id, ana["reviewer_id"])["version"] == 1
        changed = rating_store.rate(connection, submission_id, ana, 5, "new", scores=SCORES, seen=1)
    assert changed["version"] == 2
