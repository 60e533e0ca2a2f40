"""The editor's interaction memory rebuilt from stored events (study.paradigms.proactive.memory).

`data/l2-session.json` is a real L2 session recorded by the editor in Chromium
(tests/browser/test_proactive_memory.py with STUDY_CAPTURE_L2_SESSION set): its stored events
up to the third suggestion-get, and the body of the request that get sent. The rebuild must
give the history, outcomes and kept words the page sent.
"""

from __future__ import annotations

import json
from pathlib import Path

from study.paradigms.proactive.context import parse_history, snapshot
from study.paradigms.proactive.memory import interaction_memory
from study.paradigms.proactive.policy import word_count
from tests.curation.conftest import record
from tests.curation.proactive_session import Script

DATA = Path(__file__).parent / "data" / "l2-session.json"


def test_the_rebuild_of_a_real_l2_session_is_what_the_editor_sent():
    recorded = json.loads(DATA.read_text())
    request = recorded["request"]
    memory = interaction_memory(recorded["events"])
    assert memory["history"] == request["history"]
    assert [o for o in memory["outcomes"] if o != "shown"] == request["outcomes"]
    kept = [word_count(request["doc"][s["start"] : s["end"]]) for s in memory["accepted"]]
    assert kept == request["kept_words"]
    # And the server can mark the document up with it, as for the request itself.
    marked = snapshot(request["doc"], parse_history(memory["history"], len(request["doc"])))
    assert "<reject>" in marked and "<accept>" in marked and "<del>er</del>" in marked


def test_partial_accepts_modifies_stale_answers_and_a_paste_over_a_suggestion():
    script = Script(prompt="Snow.\n", paradigm="L2")
    script.type(" It fell")
    script.suggest(1, " all night long.", outcome="partial")  # " all" taken, then typing rejects
    script.suggest(2, " x", outcome="stale")
    script.type(" and")
    script.suggest(3, " the roads closed.")
    script.edit(script.end - 3, insert="X").modify(3, script.end - 18, 18)
    script.suggest(4, " Then.", outcome="esc")
    # A paste while suggestion 5 is on screen: the editor rejects it before the edit.
    script.add(record("suggestion-get", "api"),
               trigger="idle", idleMs=2000, stage=None)
    item = {"index": 0, "original": " Next.", "trimmed": "Next.", "probability": None}
    script.add(record("suggestion-open", "api", currentSuggestions=[item]),
               suggestionId=5)
    anchor = script.end
    script.type(" pasted")
    memory = interaction_memory(script.events)
    assert memory["outcomes"] == ["accepted", "stale", "accepted_modified", "rejected", "rejected"]
    accepts = [h for h in memory["history"] if h["kind"] == "accept"]
    assert [(a["id"], a["length"]) for a in accepts] == [(1, 4), (3, 19)]  # " all"; the X inside
    rejects = [h for h in memory["history"] if h["kind"] == "reject"]
    assert [r["text"] for r in rejects] == [" Then.", " Next."]
    assert rejects[-1]["index"] == anchor and memory["history"][-1] == {"kind": "add", "index": anchor, "length": 7}
    assert [s["id"] for s in memory["accepted"]] == [1, 3]
    assert memory["accepted"][1]["outcome"] == 2


def test_deleting_backwards_grows_one_del_with_the_text_in_order():
    script = Script(prompt="Snow.\n", paradigm="L2")
    script.type(" abc")
    for _ in range(3):
        script.edit(script.end - 1, delete=1)
    assert interaction_memory(script.events)["history"] == [
        {"kind": "add", "index": 5, "length": 1}, {"kind": "del", "index": 6, "text": "abc"},
    ]
