"""Table 5's per-session figures and per-paradigm rows (study.paradigms.proactive.metrics.table5)
from scripted extended logs: editing time with and without the blurred time, window and panel
switches, the assistant panel's requests, and acceptance counted once per suggestion."""

from __future__ import annotations

import math

import pytest

from study.paradigms.proactive.metrics.table5 import session_figures, table5
from tests.curation.conftest import record
from tests.curation.proactive_session import Script


def _l0_session() -> Script:
    s = Script(paradigm="L0")  # starts at t = 1000 s
    s.type(" A town")
    s.add(record("panel-focus"), panel="assistant")
    s.add(record("chat-send"), text="Write about the town.")
    s.add(record("chat-receive", "api"), chatId=1, text=" It slept.")
    s.add(record("window-blur"))
    s.wait(119)  # away two minutes (each event adds a second)
    s.add(record("window-focus"))
    s.add(record("panel-focus"), panel="editor")
    s.type(" It slept.")
    return s


def test_an_assistant_panel_session_counts_time_switches_and_requests():
    events = _l0_session().events
    figures = session_figures(events, "a", "L0")
    span = (events[-1]["eventTimestamp"] - events[0]["eventTimestamp"]) / 60000
    assert figures.editing_minutes == pytest.approx(span)
    assert figures.editing_minutes - figures.active_minutes == pytest.approx(2.0)
    assert (figures.window_switches, figures.panel_switches, figures.chat_requests) == (1, 2, 1)


def test_rows_per_paradigm_with_one_acceptance_and_none_for_l0():
    l0 = session_figures(_l0_session().events, "a", "L0")
    l1 = Script(paradigm="L1")
    l1.type(" It").suggest(1, " snowed.").suggest(2, " Then.", "esc").suggest(3, " Late.", "stale")
    rows = {r["paradigm"]: r for r in table5(
        [l0, session_figures(l1.events, "b", "L1")],
        [("b", "accepted"), ("b", "rejected"), ("b", "stale")],
    )}  # fmt: skip
    assert list(rows) == ["L0", "L1", "all"]
    assert rows["L0"]["shown"] == 0 and math.isnan(rows["L0"]["acceptance_macro"])
    assert (rows["L1"]["shown"], rows["L1"]["accepted"], rows["L1"]["acceptance_micro"]) == (2, 1, 50.0)
    assert rows["all"]["sessions"] == 2 and rows["all"]["window_switches"] == 0.5
