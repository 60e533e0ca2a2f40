"""Handing out submissions: distinct reviewers, the number of ratings, expiry, disqualification."""

from __future__ import annotations

import time

from sqlalchemy import delete, update

from study.review import accounts, decisions, queue, submissions
from study.review import ratings as rating_store
from study.store import reading, writing
from study.store.db import suggestion_requests
from study.store.review_tables import review_assignments
from tests.review.conftest import add_reviewer
from tests.review.sessions import finished_session

SCORES = (1, 2, 3, 4, 5)


def next_for(engine, reviewer, needed=2, hours=24.0):
    with writing(engine) as connection:
        return queue.next_for(connection, reviewer, needed=needed, assignment_hours=hours)


def rate(engine, submission_id, reviewer, score=4):
    with writing(engine) as connection:
        rating_store.rate(connection, submission_id, reviewer, score, "", scores=SCORES)


def collected(engine, study, count):
    for i in range(count):
        finished_session(
            engine, worker_id=f"A1W{i}", round_name="qualification", completed_at=1000 + i
        )
    with writing(engine) as connection:
        submissions.collect(connection, study)
        return [s["submission_id"] for s in submissions.all_submissions(connection)]


def test_each_submission_gets_its_ratings_from_different_reviewers(review_study, engine):
    ids = collected(engine, review_study, 3)
    reviewers = [add_reviewer(engine, name) for name in ("ana", "ben", "cai")]
    given = {r["name"]: [] for r in reviewers}
    for _ in range(3):
        for reviewer in reviewers:
            chosen = next_for(engine, reviewer)
            if chosen:
                given[reviewer["name"]].append(chosen)
                rate(engine, chosen, reviewer)
    assert all(len(set(got)) == len(got) for got in given.values())  # nobody rates twice
    with reading(engine) as connection:
        counts = {i: len(rating_store.of_submission(connection, i)) for i in ids}
    assert counts == {i: 2 for i in ids}  # 3 submissions x 2 ratings = 6, no more
    assert all(next_for(engine, r) is None for r in reviewers)


def test_an_unrated_assignment_comes_back_first_and_holds_its_place(review_study, engine):
    ids = collected(engine, review_study, 1)
    ana, ben, cai = (add_reviewer(engine, name) for name in ("ana", "ben", "cai"))
    assert next_for(engine, ana) == ids[0]
    assert next_for(engine, ana) == ids[0]  # asking again: the same one, not a new one
    assert next_for(engine, ben) == ids[0]
    assert next_for(engine, cai) is None  # two places, both held


def test_an_assignment_left_unrated_too_long_frees_its_place(review_study, engine):
    ids = collected(engine, review_study, 1)
    ana, ben, cai = (add_reviewer(engine, name) for name in ("ana", "ben", "cai"))
    next_for(engine, ana)
    next_for(engine, ben)
    with writing(engine) as connection:
        connection.execute(
            update(review_assignments)
            .where(review_assignments.c.reviewer_id == ana["reviewer_id"])
            .values(assigned_at=time.time() - 25 * 3600)
        )
    assert next_for(engine, cai) == ids[0]


def test_a_disabled_reviewers_unrated_assignment_frees_its_place_at_once(review_study, engine):
    (submission,) = collected(engine, review_study, 1)
    ana, ben, cai = (add_reviewer(engine, name) for name in ("ana", "ben", "cai"))
    assert next_for(engine, ana) == submission
    assert next_for(engine, ben) == submission
    with writing(engine) as connection:  # ben leaves the team: study reviewers disable DIR ben
        accounts.disable(connection, "ben")
    assert next_for(engine, cai) == submission  # not "nothing to rate" for assignment_hours
    rate(engine, submission, ana)
    rate(engine, submission, cai)

    with writing(engine) as connection:  # ben is back (study reviewers password DIR ben)
        accounts.set_password(connection, "ben", "a new password for ben")
    assert next_for(engine, ben) is None  # a third rating would exceed ratings_per_submission
    with reading(engine) as connection:
        assert len(rating_store.of_submission(connection, submission)) == 2


def test_a_reviewer_back_after_their_place_was_given_away_is_not_handed_a_full_submission(
    review_study, engine
):
    (given_away,) = collected(engine, review_study, 1)
    ana, ben, cai = (add_reviewer(engine, name) for name in ("ana", "ben", "cai"))
    assert next_for(engine, ana) == given_away
    with writing(engine) as connection:  # ana walks away for a day
        connection.execute(
            update(review_assignments)
            .where(review_assignments.c.reviewer_id == ana["reviewer_id"])
            .values(assigned_at=time.time() - 25 * 3600)
        )
    for reviewer in (ben, cai):  # her place goes to cai, and both ratings are in
        assert next_for(engine, reviewer) == given_away
        rate(engine, given_away, reviewer, score=5)

    assert next_for(engine, ana) is None  # a third rating would exceed ratings_per_submission
    with reading(engine) as connection:
        assert len(rating_store.of_submission(connection, given_away)) == 2


def test_submissions_closest_to_complete_come_first_then_the_oldest(review_study, engine):
    oldest, newer = collected(engine, review_study, 2)
    ana, ben = add_reviewer(engine, "ana"), add_reviewer(engine, "ben")
    assert next_for(engine, ana) == oldest
    rate(engine, oldest, ana)
    assert next_for(engine, ana) == newer
    assert next_for(engine, ben) == oldest  # it holds one rating already


def test_disqualified_and_adjudicated_submissions_are_not_handed_out(review_study, engine):
    alone = finished_session(
        engine, worker_id="A1ALONE", round_name="qualification", script=[("W", " Alone.")]
    )
    collected(engine, review_study, 1)
    researcher = add_reviewer(engine, "rita", role="researcher")
    ana = add_reviewer(engine, "ana")
    with reading(engine) as connection:
        listed = {s["session_id"]: s for s in submissions.all_submissions(connection)}
    assert "no interaction with the AI" in listed.pop(alone)["disqualified"]
    (fine,) = listed.values()
    with writing(engine) as connection:
        decisions.adjudicate(
            connection, fine["submission_id"], researcher, 5, "clearly fine", scores=SCORES
        )
    assert next_for(engine, ana) is None


def test_progress_counts_rated_assigned_and_available(review_study, engine):
    ids = collected(engine, review_study, 3)
    ana = add_reviewer(engine, "ana")
    with reading(engine) as connection:
        assert queue.progress(connection, ana, needed=2, assignment_hours=24) == queue.Progress(
            0, 0, 3
        )
    rate(engine, next_for(engine, ana), ana)
    next_for(engine, ana)
    with reading(engine) as connection:
        found = queue.progress(connection, ana, needed=2, assignment_hours=24)
    assert (found.rated, found.assigned, found.available, found.total) == (1, 1, 1, 3)
    assert len(ids) == 3


def test_suggestion_gets_the_server_never_answered_do_not_count_as_asking_the_ai(
    review_study, engine
):
    """A worker can post `suggestion-get` events without pressing Tab; the qualification rule
    counts the task server's own suggestion requests (issue 10)."""
    forged = finished_session(engine, worker_id="A1FORGED", round_name="qualification")
    with writing(engine) as connection:
        connection.execute(delete(suggestion_requests).where(suggestion_requests.c.session_id == forged))
        submissions.collect(connection, review_study)
    with reading(engine) as connection:
        (listed,) = submissions.all_submissions(connection)
    assert "asked for suggestions 0 times" in listed["disqualified"]


def test_a_chat_studys_conversations_are_not_queued_nor_disqualified(tmp_path):
    """The workspace replays CoAuthor logs and counts Tab requests; a chat conversation has
    neither, so every chat worker would be 'disqualified: no interaction with the AI'."""
    from study import config
    from study.cli import write_study_files
    from study.store import create_tables, make_engine

    folder = tmp_path / "chat"
    write_study_files(folder, paradigm="chat")
    study = config.load(folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finished_session(engine, worker_id="A1CHATTER", completed_at=1000)
    with writing(engine) as connection:
        assert submissions.collect(connection, study) == []
        assert submissions.all_submissions(connection) == []
    engine.dispose()


def test_study_review_and_qualify_refuse_a_chat_study_with_the_reason(tmp_path, monkeypatch):
    import waitress
    from click.testing import CliRunner

    from study.cli import main, write_study_files

    def never(*_args, **_kwargs):
        raise AssertionError("study review served a chat study")

    monkeypatch.setattr(waitress, "serve", never)
    folder = tmp_path / "chat"
    write_study_files(folder, paradigm="chat")
    for command in (["review", str(folder)], ["qualify", str(folder), "--dry-run"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 1, command
        assert "chat study" in result.output and "study mturk review" in result.output, result.output
