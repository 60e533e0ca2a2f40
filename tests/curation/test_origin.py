"""Where a session's text came from: typed, the study's assistant, or outside (issue 27 item 6)."""

from __future__ import annotations

import math

import pytest

from study.curation.metrics import writer_share_final
from study.curation.origin import document_and_origin, origin
from study.curation.replay import replay, to_units
from tests.curation.conftest import PROMPT, load_events, ops, record, small_session

PASTED = "Bees pollinate a third of the crops we eat, and they need our help."


def _numbered(events: list[dict]) -> list[dict]:
    for number, event in enumerate(events):
        event["eventNum"] = number
        event.setdefault("eventTimestamp", 1_000_000 + 1000 * number)
    return events


def _typed(text: str, at: int) -> list[dict]:
    return [record("text-insert", delta=ops({"retain": at + i}, {"insert": c})) for i, c in enumerate(text)]


def test_a_session_of_keystrokes_and_a_suggestion_splits_typed_from_assistant():
    found = origin(small_session())
    # "It" typed, " Bees are busy." accepted, then one of its characters deleted.
    assert (found.typed, found.assistant, found.outside) == (2, 14, 0)
    assert not found.flagged
    assert found.share("typed") == pytest.approx(100 * 2 / 16)


def test_a_paste_from_outside_is_outside_text_while_the_writer_share_still_reads_it_as_human():
    p = len(PROMPT)
    events = _numbered([
        record("system-initialize", "api", currentDoc=PROMPT),
        *_typed("Hi. ", p),
        record("text-insert", delta=ops({"retain": p + 4}, {"insert": PASTED})),
    ])
    found = origin(events)
    assert found.outside == len(PASTED) and found.typed == 4
    assert found.share("outside") == pytest.approx(100 * len(PASTED) / (len(PASTED) + 4))
    [insert] = found.inserts
    assert insert.event_index == 5 and insert.chars == len(PASTED)
    assert not insert.after_window_switch
    # The paper's definition is untouched: CoAuthor counts every user insert as the writer's.
    assert writer_share_final(replay(events)) == 100


def test_a_paste_right_after_the_window_regained_focus_is_marked():
    p = len(PROMPT)
    events = _numbered([
        record("system-initialize", "api", currentDoc=PROMPT, eventTimestamp=1_000),
        record("window-blur", eventTimestamp=2_000),
        record("window-focus", eventTimestamp=30_000),
        record("text-insert", delta=ops({"retain": p}, {"insert": PASTED}), eventTimestamp=31_000),
        record("window-blur", eventTimestamp=40_000),
        record("window-focus", eventTimestamp=50_000),
        record("text-insert", delta=ops({"retain": p + len(PASTED)}, {"insert": " " + PASTED}),
               eventTimestamp=90_000),
    ])
    first, second = origin(events).inserts
    assert first.after_window_switch
    assert not second.after_window_switch  # 40 s after the window came back
    assert "right after the window regained focus" in first.describe()


def test_text_copied_inside_the_editor_keeps_its_author():
    p = len(PROMPT)
    own = "My own sentence about the hive."
    events = _numbered([
        record("system-initialize", "api", currentDoc=PROMPT),
        *_typed(own, p),
        record("text-insert", delta=ops({"retain": p + len(own)}, {"insert": own})),
    ])
    found = origin(events)
    assert (found.typed, found.outside) == (2 * len(own), 0)
    assert not found.flagged


def test_an_outside_paste_deleted_again_still_flags_the_session_but_not_its_share():
    p = len(PROMPT)
    events = _numbered([
        record("system-initialize", "api", currentDoc=PROMPT),
        record("text-insert", delta=ops({"retain": p}, {"insert": PASTED})),
        record("text-delete", delta=ops({"retain": p}, {"delete": len(PASTED)})),
        *_typed("Mine.", p),
    ])
    found = origin(events)
    assert found.flagged and found.outside == 0 and found.share("outside") == 0


def test_nothing_beyond_the_prompt_has_no_share():
    found = origin(_numbered([record("system-initialize", "api", currentDoc=PROMPT)]))
    assert math.isnan(found.share("typed"))


def test_text_deleted_and_restored_in_one_insert_is_the_writers_own():
    # An undo after a deletion re-inserts the sentence in one event (a 2021 session does so).
    p = len(PROMPT)
    own = "A sentence I typed myself."
    events = _numbered([
        record("system-initialize", "api", currentDoc=PROMPT),
        *_typed(own, p),
        record("text-delete", delta=ops({"retain": p}, {"delete": len(own)})),
        record("text-insert", delta=ops({"retain": p}, {"insert": own})),
    ])
    found = origin(events)
    assert (found.typed, found.outside, found.flagged) == (len(own), 0, False)


def test_no_outside_text_in_the_real_coauthor_sessions(session_paths):
    # The 2021 writers typed (with undo, cut and paste of their own text): no session is
    # flagged, and the three sources share exactly the characters the replay attributes.
    for path in session_paths:
        events = load_events(path)
        found = origin(events)
        document = replay(events)
        assert not found.flagged, (path.name, [i.describe() for i in found.inserts])
        assert found.typed + found.assistant + found.outside == document.count("W") + document.count("S")
        total = found.share("typed") + found.share("assistant") + found.share("outside")
        assert total == pytest.approx(100)


def test_a_chat_arms_reply_pasted_into_the_text_is_the_assistants():
    p = len(PROMPT)
    reply = "Here is an idea: " + PASTED
    events = _numbered([
        record("system-initialize", "api", currentDoc=PROMPT),
        record("text-insert", delta=ops({"retain": p}, {"insert": PASTED})),
    ])
    found = origin(events, assistant_texts=[reply])
    assert (found.assistant, found.outside, found.flagged) == (len(PASTED), 0, False)
    assert origin(events).flagged  # without the conversation it reads as outside


def test_stats_one_replay_reads_as_replay_and_origin_on_the_real_sessions(session_paths):
    # `study curate stats` replays once for both; each reading must stay its function's.
    for path in session_paths:
        events = load_events(path)
        document, found = document_and_origin(events)
        assert document == replay(events), path.name
        assert found == origin(events), path.name


def test_the_assistants_text_copied_by_the_writer_is_the_writers_to_replay_only():
    # Copying the accepted suggestion again: origin keeps it the assistant's, while the paper's
    # replay counts every user insert as the writer's (Table 3's writer share).
    events = small_session()
    document = replay(events)
    accepted = document.text[document.authors.index("S") : document.authors.rindex("S") + 1]
    assert len(accepted) >= 10
    end = len(to_units(document.text))
    copied = _numbered([*events, record("text-insert", delta=ops({"retain": end - 1}, {"insert": accepted}))])
    document, found = document_and_origin(copied, min_chars=10)
    assert document == replay(copied)
    assert document.count("S") == len(accepted)
    assert found.assistant == 2 * len(accepted) and found.outside == 0


def test_an_assistant_panels_response_pasted_into_the_text_is_the_assistants():
    # MindCopilot's L0 panel ([proactive] l0 = "assistant"): the response is in the log itself
    # (chat-receive), and the writer moves it into the document by paste or Insert at cursor.
    p = len(PROMPT)
    response = "Bees visit flowers to gather nectar, and carry pollen between them as they go."
    proactive = {"paradigm": "L0"}
    events = _numbered([
        record("system-initialize", "api", currentDoc=PROMPT, proactive=proactive),
        record("chat-send", proactive={**proactive, "text": "Tell me about bees."}),
        record("chat-receive", "api", proactive={**proactive, "chatId": 0, "text": response}),
        *[{**r, "proactive": proactive} for r in _typed("So: ", p)],
        record("text-insert", delta=ops({"retain": p + 4}, {"insert": response}),
               proactive={**proactive, "paste": True, "chatId": 0}),
    ])
    found = origin(events)
    assert (found.typed, found.assistant, found.outside) == (4, len(response), 0)
    assert not found.flagged  # review would list it as "text from outside"
