"""Text pasted from outside the study, as a reviewer sees it: marked in the final text and in
every step of the replay, listed with its moment, and its share of the final text."""

from __future__ import annotations

from study.review import presentation, submissions
from study.review.playback import Step, play
from study.store import writing
from tests.review.conftest import add_reviewer, log_in
from tests.review.sessions import finished_session

PASTED = " The moon hung low over the harbour like a forgotten lantern."
SCRIPT = [
    ("W", " She met him."),
    ("F", ""),  # the writer comes back from another window...
    ("W", PASTED),  # ...and 61 characters arrive in one insert: text the session never held
    ("S", " He smiled."),
    ("W", " The end."),
]


def shown_submission(engine, study, script=SCRIPT):
    finished_session(engine, worker_id="A1PASTER", round_name="qualification", script=script)
    with writing(engine) as connection:
        (submission_id,) = submissions.collect(connection, study)
        return presentation.show(connection, study, submissions.get(connection, submission_id))


def test_a_paste_from_outside_is_marked_in_the_text_listed_and_counted(review_study, engine):
    shown = shown_submission(engine, review_study)

    assert ("outside", PASTED) in shown.spans
    assert [name for name, _ in shown.spans] == ["prompt", "writer", "outside", "suggestion", "writer", "prompt"]
    (paste,) = shown.pastes.pastes
    assert (paste.t, paste.chars, paste.after_window_switch) == (3000, len(PASTED), True)
    assert paste.preview == PASTED[:60]
    written = len(" She met him.") + len(" The end.")
    total = written + len(PASTED) + len(" He smiled.")
    stats = dict(shown.stats)
    assert stats["Pasted from outside"] == f"{100 * len(PASTED) / total:.0f}% of the final text (1 paste)"
    # CoAuthor's writer share counts the paste as the writer's, and the page says so.
    assert stats["Written by the writer"] == (
        f"{100 * (written + len(PASTED)) / total:.0f}% of the final text (pastes from outside included)"
    )


def test_the_replay_marks_the_pasted_text_from_the_moment_it_arrived(review_study, engine):
    # The writer deletes back into the paste: its last 10 characters go.
    shown = shown_submission(engine, review_study, SCRIPT + [("D", len(" He smiled. The end.") + 10)])
    steps = [Step(*step) for step in shown.replay["steps"]]
    assert [step.author for step in steps] == ["W", "O", "S", "W", ""]
    text, authors = play(shown.replay["prompt"], steps[:2])
    assert text.endswith(PASTED + "\n") and authors.endswith("O" * len(PASTED) + "P")
    text, authors = play(shown.replay["prompt"], steps)
    assert "".join(part for _, part in shown.spans) == text
    assert [name for name, _ in shown.spans] == ["prompt", "writer", "outside", "prompt"]
    assert ("outside", PASTED[:-10]) in shown.spans
    assert dict(shown.stats)["Pasted from outside"] == (
        f"{100 * (len(PASTED) - 10) / (len(PASTED) - 10 + len(' She met him.')):.0f}% of the final text (1 paste)"
    )


def test_the_writers_own_text_copied_again_and_typing_are_not_pastes(review_study, engine):
    sentence = " A long sentence the writer typed herself."
    typed = [("W", character) for character in sentence]
    shown = shown_submission(engine, review_study, typed + [("S", " And so."), ("W", sentence)])
    assert shown.pastes.pastes == ()
    assert "outside" not in [name for name, _ in shown.spans]
    assert dict(shown.stats)["Pasted from outside"] == "none"


def test_the_reviewers_page_lists_the_paste_and_marks_its_text(workspace, engine):
    finished_session(engine, worker_id="A1PASTER", round_name="qualification", script=SCRIPT)
    add_reviewer(engine, "ana")
    client = log_in(workspace, "ana")
    page = client.get(client.post("/review/next", data={"csrf_token": client.csrf}).location).get_data(as_text=True)
    assert f'<span class="by-outside">{PASTED}</span>' in page
    assert 'data-testid="pastes"' in page and "Pasted from outside the study:" in page
    assert 'data-seek="3000"' in page and "right after the writer came back from another window" in page
