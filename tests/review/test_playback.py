"""The replay's steps and authorship, and what reviewers are shown of a submission."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from study.curation.replay import apply_delta, from_units, to_units
from study.review import presentation, submissions
from study.review.playback import author_codes, steps
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
    assert presentation.MASK * len("A1PASTEDMYID") in "".join(text for _, text in shown.spans)
    assert [name for name, _ in shown.spans] == ["prompt", "writer", "suggestion", "prompt"]
    stats = dict(shown.stats)
    assert stats["AI requests (Tab)"] == "1" and stats["Acceptance"] == "100%"
    assert stats["Writing time"] == "10.7 min"
    assert shown.self_evaluation == [
        ("My story has a clear ending.", True),
        ("I collaboratively wrote my story with AI.", True),
    ]


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
