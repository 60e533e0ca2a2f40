"""L2's snapshot keeps the writer's feedback on earlier suggestions (spec A2.3).

MindCopilot §5.1: L2 conditions "on accumulated interaction history, including previous human
feedback"; spec A2.3 proposes "a configurable cap of the last 20 suggestion events". The cap
must not let ordinary typing (each typo fixed is a <del> and a new <add>) push every <accept>
and <reject> out of the snapshot.
"""

from __future__ import annotations

from study.paradigms.proactive.context import HistoryItem, snapshot
from study.paradigms.proactive.engine import build_context
from study.paradigms.proactive.settings import ProactiveSettings


def test_typing_with_typo_fixes_does_not_push_accept_and_reject_out_of_the_l2_snapshot():
    doc = "The night came."
    history = [HistoryItem("accept", 9, length=len(" came.")), HistoryItem("reject", len(doc), text=" She ran.")]
    # Then the writer types on, fixing a typo now and then: a <del> and a new <add> each time.
    for _ in range(11):
        start = len(doc)
        doc += " word"
        history.append(HistoryItem("del", len(doc), text="x"))
        history.append(HistoryItem("add", start, length=len(" word")))

    sent = build_context(doc, history, "L2", ProactiveSettings())  # history_cap = 20

    assert "<accept> came.</accept>" in sent
    assert "<reject> She ran.</reject>" in sent


def test_the_cap_still_bounds_the_snapshot():
    doc = "x"
    history = [HistoryItem("reject", 1, text=f"r{i}") for i in range(30)]
    history += [HistoryItem("del", 1, text=f"d{i}") for i in range(30)]
    sent = snapshot(doc, history, cap=20)
    assert sent.count("<reject>") == 20 and sent.count("<del>") == 20
    assert "<reject>r29</reject>" in sent and "<reject>r9</reject>" not in sent
