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
