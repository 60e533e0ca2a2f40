"""The replay's steps and authorship, and what reviewers are shown of a submission."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from study.curation.replay import apply_delta, from_units, to_units
from study.review import presentation, submissions
from study.review.playback import Step, author_codes, steps
from study.store import events as event_store
from study.store import reading, writing
from tests.review.sessions import build_events, finished_session

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "data" / "coauthor"
REAL_SESSIONS = sorted(FIXTURES.glob("sessions/*.jsonl")) + sorted(
    FIXTURES.glob("interface-format/*.jsonl")
)


def play(prompt: str, found) -> tuple[str, str]:
    """Apply the steps as review-replay.js does (UTF-16 units), with their author codes."""
    text = to_units(prompt)
    authors = "P" * len(text)
    for step in found:
        text, authors = apply_delta(text, step.ops, authors, step.author or "W")
    return from_units(text, authors)


def test_each_change_has_the_author_the_curation_replay_gives_it():
    events = build_events(
        "Prompt.", [("W", " I"), ("S", " met a wolf."), ("Q", ""), ("D", 5), ("W", "fox.")]
    )
    prompt, found, final = steps(events)
    assert [s.author for s in found] == ["W", "S", "", "W"]
    assert [s.t for s in found] == [1000, 6000, 10000, 11000]  # ms since system-initialize
    assert (
        play(prompt, found)
        == (final.text, final.authors)
        == (
            "Prompt. I met a fox.\n",
            "P" * 7 + "WW" + "S" * 7 + "WWWW" + "P",
        )
    )


def test_astral_characters_keep_their_authors():
    events = build_events("Start 🐺", [("W", " 🦊 fox"), ("S", " and 🐻 bear.")])
    prompt, found, final = steps(events)
    assert play(prompt, found) == (final.text, final.authors)
    assert final.text == "Start 🐺 🦊 fox and 🐻 bear.\n"


@pytest.mark.skipif(not REAL_SESSIONS, reason="the CoAuthor fixtures are not in ../shared/data")
@pytest.mark.parametrize("path", REAL_SESSIONS, ids=lambda p: p.stem[:8])
def test_real_coauthor_sessions_replay_to_the_curation_replays_text_and_authors(path):
    events = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    prompt, found, final = steps(events)
    assert play(prompt, found) == (final.text, final.authors)
    assert set(author_codes(events).values()) <= {"W", "S"}


def test_a_submission_is_shown_without_worker_ids_even_pasted_into_the_text(review_study, engine):
    session_id = finished_session(
        engine, worker_id="A1PASTEDMYID", round_name="qualification",
        script=[("W", " My id is a1pastedmyid, pay me."), ("S", " The end.")],
    )  # fmt: skip
    with writing(engine) as connection:
        (submission_id,) = submissions.collect(connection, review_study)
        shown = presentation.show(
            connection, review_study, submissions.get(connection, submission_id)
        )
    everything = json.dumps(
        [shown.spans, shown.replay, shown.stats, shown.self_evaluation, shown.prompt_heading]
    )
    assert "A1PASTEDMYID" not in everything.upper()
    assert session_id not in everything
    assert "<WORKER____>" in "".join(text for _, text in shown.spans)
    # The sentence came in one insert of text the session never held: a paste from outside.
    assert [name for name, _ in shown.spans] == ["prompt", "outside", "suggestion", "prompt"]
    stats = dict(shown.stats)
    assert stats["AI requests"] == "1" and stats["Acceptance"] == "100%"
    assert stats["Writing time"] == "10.7 min"
    assert shown.self_evaluation == [
        ("My story has a clear ending.", True),
        ("I collaboratively wrote my story with AI.", True),
    ]


def test_an_assistant_panels_response_the_writer_pasted_is_shown_as_the_ais(review_study, engine):
    # MindCopilot's L0 panel: the writer asks, the response comes in the log (chat-receive), and
    # the writer pastes it in (or presses Insert at cursor): a user text-insert with its chatId.
    prompt = "A woman keeps dating the same shapeshifter."
    typed = build_events(prompt, [("W", " So:")])
    session_id = finished_session(engine, round_name="qualification", prompt=prompt, script=[("W", " So:")])
    response = " He wore a new face each time, and she loved every one of them."
    end = len(to_units(prompt)) + len(" So:")
    base = {key: value for key, value in typed[-1].items() if key != "proactive"}
    panel = [
        {**base, "eventName": "chat-send", "eventSource": "user", "textDelta": "",
         "proactive": {"paradigm": "L0", "text": "How could it end?"}},
        {**base, "eventName": "chat-receive", "eventSource": "api", "textDelta": "",
         "proactive": {"paradigm": "L0", "chatId": 7, "text": response}},
        {**base, "eventName": "text-insert", "eventSource": "user",
         "textDelta": {"ops": [{"retain": end}, {"insert": response}]},
         "proactive": {"paradigm": "L0", "paste": True, "chatId": 7}},
    ]  # fmt: skip
    event_store.ingest(engine, session_id, [{"seq": len(typed) + i, **e} for i, e in enumerate(panel)])
    with writing(engine) as connection:
        (submission_id,) = submissions.collect(connection, review_study)
        shown = presentation.show(connection, review_study, submissions.get(connection, submission_id))

    assert ("suggestion", response) in shown.spans  # marked AI, not the writer's
    assert play(shown.replay["prompt"], [Step(*s) for s in shown.replay["steps"]])[1].count("S") == len(response)
    stats = dict(shown.stats)
    assert stats["AI requests"] == "1"  # the panel request
    assert stats["Written by the writer"] == f"{100 * 4 / (4 + len(response)):.0f}% of the final text"


def test_a_session_whose_log_cannot_be_replayed_shows_the_editors_text(review_study, engine):
    session_id = finished_session(engine, worker_id="A1BROKEN", round_name="qualification")
    from study.store.db import events

    with writing(engine) as connection:
        connection.execute(events.delete().where(events.c.session_id == session_id))
        (submission_id,) = submissions.collect(connection, review_study)
    with reading(engine) as connection:
        shown = presentation.show(
            connection, review_study, submissions.get(connection, submission_id)
        )
    assert shown.replay is None and "cannot be replayed" in shown.problem
    assert shown.spans == [("writer", "...")]


TYPED = "A3TYPEDKEYBYKEY7"


def typed_key_by_key(text: str) -> list[tuple[str, str]]:
    return [("W", character) for character in text]


def test_an_id_typed_key_by_key_never_reaches_the_browsers_replay(review_study, engine):
    """The writer types their worker id one key at a time (and a typo fixed on the way): no
    moment of the replay, and no run of the inserts it sends, spells it."""
    script = (
        typed_key_by_key(" I am A3TYPEDKEYX")
        + [("D", 1)]
        + typed_key_by_key("BYKEY7, pay me.")
        + [("S", " The end.")]
    )
    finished_session(engine, worker_id=TYPED, round_name="qualification", script=script)
    with writing(engine) as connection:
        (submission_id,) = submissions.collect(connection, review_study)
        shown = presentation.show(
            connection, review_study, submissions.get(connection, submission_id)
        )
    assert shown.replay is not None and not shown.problem
    sent = shown.replay_json().upper()
    inserts = "".join(
        op["insert"] for step in shown.replay["steps"] for op in step[3] if "insert" in op
    )
    assert TYPED not in sent and TYPED not in inserts.upper()
    text = to_units(shown.replay["prompt"])
    for step in shown.replay["steps"]:
        text = apply_delta(text, step[3])
        assert TYPED not in from_units(text).upper()
        assert "A3TYPEDKEYX" not in from_units(text).upper()  # nor the id being typed, mistyped
    final = "".join(part for _, part in shown.spans)
    assert "I am <WORKER________>, pay me. The end." in final
    assert from_units(text) == final


def test_the_workspace_page_does_not_carry_an_id_typed_key_by_key(workspace, engine):
    from tests.review.conftest import add_reviewer, log_in

    finished_session(engine, worker_id=TYPED, round_name="qualification",
                     script=typed_key_by_key(" I am " + TYPED.lower() + ".") + [("S", " End.")])  # fmt: skip
    add_reviewer(engine, "ana")
    client = log_in(workspace, "ana")
    response = client.post("/review/next", data={"csrf_token": client.csrf})
    page = client.get(response.location).get_data(as_text=True)
    assert 'id="replay-data"' in page
    assert TYPED not in page.upper()
    payload = page.split('id="replay-data" type="application/json">')[1].split("</script>")[0]
    data = json.loads(payload)
    inserts = "".join(op["insert"] for step in data["steps"] for op in step[3] if "insert" in op)
    assert TYPED not in inserts.upper() and "<WORKER" in inserts
