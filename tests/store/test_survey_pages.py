"""A survey page saved twice at once (a double-click on "Next", or the page sent again from a
second tab) on SQLite and PostgreSQL: both submissions are answered and merged into one
response, never a unique-key error (study.store.surveys.save_page)."""

from __future__ import annotations

import threading

from study.store import reading, writing
from study.store import sessions as session_store
from study.store import surveys as survey_store
from tests.store.locks import until_done_or_waiting


def test_the_first_page_of_a_survey_sent_twice_at_once_is_saved_once_with_both_answers(engine):
    with writing(engine) as connection:
        session_id = session_store.create(connection, access_code="writer-1")["session_id"]

    def save(answers: dict) -> dict:
        with writing(engine) as connection:
            return survey_store.save_page(connection, session_id, "post_session", 0, "after_session",
                                          answers, next_page=1, last=False)  # fmt: skip

    second: dict = {}

    def second_submission() -> None:
        try:
            second["row"] = save({"age": "30"})
        except Exception as error:  # noqa: BLE001 - what the participant's second request met
            second["error"] = error

    with writing(engine) as connection:
        survey_store.save_page(connection, session_id, "post_session", 0, "after_session",
                               {"age": "30", "field": "history"}, next_page=1, last=False)  # fmt: skip
        # The second submission starts while the first's row is not committed yet.
        thread = threading.Thread(target=second_submission)
        thread.start()
        if engine.dialect.name == "postgresql":  # SQLite's write lock holds it back until then
            until_done_or_waiting(thread, engine)
    thread.join()

    assert "error" not in second, second.get("error")
    with reading(engine) as connection:
        [response] = survey_store.for_session(connection, session_id)
    assert response["answers"] == {"age": "30", "field": "history"} and response["page"] == 1
