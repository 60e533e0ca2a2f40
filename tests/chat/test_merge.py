"""The running document's merge rule (study.paradigms.chat.merge), the rule the chat page applies
in the browser (tests/browser/test_chat_merged_document.py walks the same replies there)."""

from __future__ import annotations

from study.paradigms.chat.merge import delta, draft_of, merge
from tests.chat.merge_script import ADDED, FIRST, REPLIES, REWRITE


def test_replies_merge_as_the_page_merges_them():
    document, seen = "", []
    for reply in REPLIES:
        document = merge(document, reply)
        seen.append(document)
    assert seen == [FIRST, f"{FIRST}\n\n{ADDED}", f"{FIRST}\n\n{ADDED}", REWRITE]


def test_talk_to_the_participant_is_not_draft():
    assert draft_of('Here it is:\n\nText one.\n\nShall I go on?"') == "Text one."
    assert draft_of("Which tone do you want?\n\n(Or should I choose?)") == ""
    assert merge("Kept as it was.", "Any questions?") == "Kept as it was."


def test_the_delta_turns_one_text_into_the_other():
    def apply(text: str, change: dict) -> str:
        out, at = "", 0
        for op in change["ops"]:
            if "retain" in op:
                out, at = out + text[at : at + op["retain"]], at + op["retain"]
            elif "delete" in op:
                at += op["delete"]
            else:
                out += op["insert"]
        return out + text[at:]

    for before, after in (("", "New."), ("Abc def.", "Abc def.\n\nMore."), ("Old text here.", "New text there."),
                          ("aaa", "aa"), ("Same.", "Same.")):  # fmt: skip
        change = delta(before, after)
        assert (change is None) if before == after else apply(before, change) == after


def test_the_delta_counts_positions_as_the_server_replays_them_with_emoji():
    # The chat page's events are replayed (study.paradigms.chat.store.document_from_events) in
    # Quill's UTF-16 positions: an emoji is two of them. A simulated user's merged document must
    # replay to what the page showed, or a reload and the export's event log show another text.
    from study.curation.replay import apply_delta, from_units, to_units

    for before, after in (("A 🌟 star.", "A 🌟 star.\n\nMore."), ("Tea ☕ and 🍰 cake.", "Tea ☕ and 🍰 pie."),
                          ("🌟", ""), ("Tea 🌟.", "Tea 🍰.")):  # fmt: skip
        change = delta(before, after)
        assert from_units(apply_delta(to_units(before), change["ops"])) == after
    # And a reply the simulated user inserts into its own pane (study.paradigms.chat.simulate).
    from study.paradigms.chat.simulate import ChatLog

    log = ChatLog(0, "")
    log.append("A 🌟 star.", "api")
    log.append("\n\nMore.", "api")
    text = ""
    for event in log.unsent:
        text = apply_delta(text, event["textDelta"]["ops"])
    assert from_units(text) == log.document == "A 🌟 star.\n\nMore."
