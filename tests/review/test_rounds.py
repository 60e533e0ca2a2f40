"""Rounds on the participant's path: who may enter, which prompts and instructions."""

from __future__ import annotations

import pytest
from sqlalchemy import insert

from study.review import decisions, rounds, submissions
from study.review import ratings as rating_store
from study.store import reading, writing
from study.store.review_tables import session_rounds
from tests.review.conftest import add_reviewer
from tests.review.sessions import finished_session


def refusal(engine, study, round_name, **writer):
    with reading(engine) as connection:
        return rounds.entry_refusal(connection, study, round_name, **writer)


def test_a_new_writer_may_enter_the_qualification_round_once(review_study, engine):
    assert refusal(engine, review_study, "qualification", worker_id="A1NEW") is None
    assert refusal(engine, review_study, None, worker_id="A1NEW") is None  # the default round
    finished_session(engine, worker_id="A1NEW", round_name="qualification")
    assert refusal(engine, review_study, "qualification", worker_id="A1NEW") == rounds.ONCE_REFUSAL
    assert refusal(engine, review_study, None, worker_id="A1NEW") == rounds.ONCE_REFUSAL
    assert refusal(engine, review_study, "qualification", worker_id="A1OTHER") is None


def test_lab_writers_are_told_apart_by_access_code(review_study, engine):
    finished_session(engine, access_code="lab-7", round_name="qualification")
    assert (
        refusal(engine, review_study, "qualification", access_code="lab-7") == rounds.ONCE_REFUSAL
    )
    assert refusal(engine, review_study, "qualification", access_code="lab-8") is None


def test_an_unknown_round_is_refused(review_study, engine):
    assert "no round named 'bonus'" in refusal(engine, review_study, "bonus", worker_id="A1X")


def test_the_main_round_takes_only_writers_who_passed(review_study, engine):
    passing = finished_session(engine, worker_id="A1PASS", round_name="qualification")
    failing = finished_session(engine, worker_id="A1FAIL", round_name="qualification")
    assert refusal(engine, review_study, "main", worker_id="A1PASS") == rounds.NOT_QUALIFIED
    first, second = add_reviewer(engine, "ana"), add_reviewer(engine, "ben")
    with writing(engine) as connection:
        submissions.collect(connection, review_study)
        by_session = {
            s["session_id"]: s["submission_id"] for s in submissions.all_submissions(connection)
        }
        for reviewer, scores in ((first, (5, 2)), (second, (4, 2))):
            for session_id, score in zip((passing, failing), scores):
                rating_store.rate(
                    connection, by_session[session_id], reviewer, score, "", scores=(1, 2, 3, 4, 5)
                )
    assert refusal(engine, review_study, "main", worker_id="A1PASS") is None
    assert refusal(engine, review_study, "main", worker_id="A1FAIL") == rounds.NOT_QUALIFIED
    assert refusal(engine, review_study, "main", worker_id="A1NEVER") == rounds.NOT_QUALIFIED
    with reading(engine) as connection:
        assert decisions.writer_passed(
            connection, review_study, "qualification", worker_id="A1PASS"
        )


def test_sessions_without_a_recorded_round_are_in_the_default_round(review_study, engine):
    unrecorded = finished_session(engine, worker_id="A1OLD")
    in_main = finished_session(engine, worker_id="A1MAIN", round_name="main")
    with reading(engine) as connection:
        assert rounds.round_of(connection, review_study, unrecorded).name == "qualification"
        assert rounds.round_of(connection, review_study, in_main).name == "main"


def test_record_stores_the_round_and_nothing_for_a_study_without_rounds(
    review_study, plain_study, engine
):
    with writing(engine) as connection:
        rounds.record(connection, review_study, "a" * 32, "main")
        rounds.record(connection, review_study, "b" * 32, None)
        rounds.record(connection, plain_study, "c" * 32, "main")
        stored = dict(connection.execute(session_rounds.select()).all())
    assert stored == {"a" * 32: "main", "b" * 32: "qualification"}
    with pytest.raises(KeyError), writing(engine) as connection:
        rounds.record(connection, review_study, "d" * 32, "bonus")


def test_a_round_offers_its_own_prompts_and_instructions(review_study, engine):
    qualifying = finished_session(engine, worker_id="A1Q", round_name="qualification")
    main = finished_session(engine, worker_id="A1M", round_name="main")
    with reading(engine) as connection:
        assert rounds.prompt_codes(connection, review_study, qualifying) == {
            "shapeshifter",
            "screen",
        }
        assert rounds.prompt_codes(connection, review_study, main) is None
        text = rounds.instructions(connection, review_study, qualifying)
        assert text.startswith('<p class="notice">{% raw %}This is a qualification round')
        assert text.endswith(review_study.instructions_template)
        assert (
            rounds.instructions(connection, review_study, main)
            == review_study.instructions_template
        )


def test_a_study_without_rounds_has_no_entry_rules(plain_study, engine):
    with writing(engine) as connection:
        connection.execute(insert(session_rounds).values(session_id="x" * 32, round="gone"))
    assert refusal(engine, plain_study, "main", worker_id="A1X") is None
    assert refusal(engine, plain_study, None, worker_id="A1X") is None
