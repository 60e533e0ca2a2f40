"""Fig. 7 (CoAuthor §5.1.2) counts the accepted suggestions of a session in the later
interface's log too, where the accepted text is a `user` text-insert after suggestion-select
(shared data README), as the replay and Table 3 already read it."""

from __future__ import annotations

from types import SimpleNamespace

from study.curation.formats import read_session
from study.curation.replay import SUGGESTION, replay
from study.report.entities import accepted_suggestions, session_entities
from tests.conftest import COAUTHOR

INTERFACE_SESSION = COAUTHOR / "interface-format" / "2925c4bef43b49acabcade452c1b3c48.jsonl"


class _Names:
    """A stand-in named-entity model: every capitalised word is an entity."""

    def pipe(self, texts, batch_size=0):
        for text in texts:
            words = [w.strip('.,;:!?"()') for w in text.split()]
            yield SimpleNamespace(ents=[SimpleNamespace(text=w) for w in words if w[:1].isupper()])


def test_fig7_counts_accepted_suggestions_of_the_later_interface():
    events = read_session(INTERFACE_SESSION).events
    selects = sum(1 for e in events if e["eventName"] == "suggestion-select")
    assert selects == 17
    # The replay attributes the suggestion's text to the model: 17 accepted suggestions.
    assert SUGGESTION in replay(events).authors
    found = accepted_suggestions(events)
    assert len(found) == 17
    assert session_entities(events, _Names()).accepted == 17


def test_fig7_reuse_by_the_writer_leaves_out_later_accepted_suggestions_of_the_later_interface():
    prompt = "Once upon a time.\n"
    shown = [{"index": 0, "original": " Alice met Bob.", "trimmed": "Alice met Bob.", "probability": 0.1}]
    shown2 = [{"index": 0, "original": " Then Bob left.", "trimmed": "Then Bob left.", "probability": 0.1}]

    def event(name, source, ops=None, **extra):
        return {"eventName": name, "eventSource": source, "eventTimestamp": 0,
                "textDelta": {"ops": ops} if ops else "", "currentDoc": extra.get("doc", ""),
                "currentSuggestions": extra.get("suggestions", "")}  # fmt: skip

    events = [
        event("system-initialize", "api", doc=prompt),
        event("suggestion-get", "user"), event("suggestion-open", "api", suggestions=shown),
        event("suggestion-select", "user"), event("suggestion-close", "api"),
        event("text-insert", "user", [{"retain": 17}, {"insert": " Alice met Bob."}]),
        event("suggestion-get", "user"), event("suggestion-open", "api", suggestions=shown2),
        event("suggestion-select", "user"), event("suggestion-close", "api"),
        event("text-insert", "user", [{"retain": 32}, {"insert": " Then Bob left."}]),
    ]  # fmt: skip
    found = session_entities(events, _Names())
    assert found.accepted == 2
    # New: Alice and Bob (first suggestion), Then (second). The writer typed none of them
    # again: the second suggestion's "Bob" is the model's text, reused by no writer.
    assert found.new == 3
    assert found.reused == 0 and found.reused_anyone == 1
