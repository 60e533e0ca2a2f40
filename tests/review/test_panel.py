"""An L0 session's assistant panel, as a reviewer sees it: every request and response in order,
a request that got none, and the text the writer copied from a response or put into the story
marked in it."""

from __future__ import annotations

from study.review import presentation, submissions
from study.review.panel import conversation
from study.store import writing
from tests.review.conftest import add_reviewer, log_in
from tests.review.sessions import build_events, finished_session

RESPONSE = "He wore a new face each time. She loved every one of them, and never said so."
TAKEN = " She loved every one of them,"
SCRIPT = [
    ("W", " So:"),
    ("ASK", ("How could it end?", 7, RESPONSE)),
    ("COPY", (7, "She loved every one of them")),
    ("PANEL", (7, TAKEN)),
    ("ASK", ("Give me a title", None, "the assistant did not answer in time")),
    ("W", " The end."),
]


def test_the_conversation_lists_requests_responses_and_what_the_writer_took():
    messages = conversation(build_events("Prompt.", SCRIPT))
    assert [(m.role, m.text, m.t) for m in messages] == [
        ("writer", "How could it end?", 2000),
        ("assistant", RESPONSE, 3000),
        ("writer", "Give me a title", 6000),
        ("failed", "the assistant did not answer in time", 7000),
    ]
    response = messages[1]
    assert (response.chat_id, response.copies, response.inserts) == (7, 1, 1)
    assert response.pieces() == [
        ("He wore a new face each time. ", False),
        ("She loved every one of them,", True),
        (" and never said so.", False),
    ]
    assert conversation(build_events("Prompt.", [("W", " Just typing.")])) == []


def test_a_reviewer_sees_the_panel_and_the_text_taken_from_it_as_the_ais(review_study, engine, workspace):
    finished_session(engine, worker_id="A1ASKER", round_name="qualification", script=SCRIPT)
    with writing(engine) as connection:
        (submission_id,) = submissions.collect(connection, review_study)
        shown = presentation.show(connection, review_study, submissions.get(connection, submission_id))
    assert ("suggestion", TAKEN) in shown.spans  # in the story, marked as the AI's
    assert [m.role for m in shown.panel] == ["writer", "assistant", "writer", "failed"]
    assert dict(shown.stats)["Pasted from outside"] == "none"  # the panel's text is no paste

    add_reviewer(engine, "ana")
    client = log_in(workspace, "ana")
    client.post("/review/next", data={"csrf_token": client.csrf})
    page = client.get(f"/review/s/{submission_id}").get_data(as_text=True)
    assert 'data-testid="panel"' in page
    assert "How could it end?" in page and "the assistant did not answer in time" in page
    assert '<mark data-testid="panel-used">She loved every one of them,</mark>' in page
    assert "copied 1×, put into the story 1×" in page
    assert f'<span class="by-suggestion">{TAKEN}</span>' in page


def test_the_panels_messages_are_masked_like_the_text(review_study, engine):
    script = [("W", " Hi."), ("ASK", ("My worker id is A1ASKINGWORKER, is that ok?", 3, "Yes, A1ASKINGWORKER.")),
              ("S", " The end.")]  # fmt: skip
    finished_session(engine, worker_id="A1ASKINGWORKER", round_name="qualification", script=script)
    with writing(engine) as connection:
        (submission_id,) = submissions.collect(connection, review_study)
        shown = presentation.show(connection, review_study, submissions.get(connection, submission_id))
    texts = " ".join(m.text for m in shown.panel)
    assert "A1ASKINGWORKER" not in texts.upper() and "<WORKER" in texts
