"""Survey, not a test: every session of the shared sample redone in our editor, every difference
from the release collected by kind. Not in the default run (the file name is no test_*):

    RETYPE_EVENTS=300 RETYPE_OUT=/tmp/retype.jsonl \
        python -m pytest -q -p no:cacheprovider tests/browser/survey_retyped.py

Each session's first RETYPE_EVENTS events are redone as tests/browser/test_real_session_retyped.py
does, up to the first action the writer's log names that our editor cannot be made to do (the
caret is elsewhere, the list is not there: the texts have parted). Ours and theirs are aligned
by (eventName, eventSource); one line per difference goes to RETYPE_OUT: a sequence difference
(their events, ours) or, in aligned records, a field that differs beyond what
`as_coauthor_logs_it` names.
"""

from __future__ import annotations

import difflib
import json
import os

import pytest

from tests.browser.participant import export_session, start_writing, wait_saved
from tests.browser.recorded_writer import redo, redo_all
from tests.browser.test_real_session_retyped import (  # noqa: F401 - the fixtures
    as_coauthor_logs_it,
    endpoint,
    model,
    recorded,
    study_dir,
    without_timing,
)
from tests.conftest import COAUTHOR

pytestmark = pytest.mark.browser

EVENTS = int(os.environ.get("RETYPE_EVENTS", "300"))
OUT = os.environ.get("RETYPE_OUT", "/tmp/retype-survey.jsonl")
SESSIONS = sorted(path.stem for path in (COAUTHOR / "sessions").glob("*.jsonl"))


@pytest.fixture(params=SESSIONS, ids=[s[:8] for s in SESSIONS])
def released(request) -> tuple[str, int]:
    return request.param, 100_000


def _write(**line) -> None:
    with open(OUT, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def test_survey(page, task_server, study_dir, tmp_path, recorded, released, model):  # noqa: F811
    session_id = start_writing(page, task_server.url)
    done, previous = len(recorded), 0
    for number, record in enumerate(recorded):
        if record["eventSource"] != "user":
            continue
        if number >= EVENTS:
            done = number
            break
        try:
            redo_all(page, recorded[:number], model, start=previous)
            redo(page, recorded, number)
            previous = number + 1
        except Exception as error:  # noqa: BLE001 - a survey notes where it stopped
            done = number
            _write(session=released[0][:8], kind="stopped", event=number, name=record["eventName"],
                   why=(repr(error).splitlines() or [""])[0][:300])
            break
    page.wait_for_timeout(300)
    wait_saved(page)
    ours = export_session(study_dir, tmp_path / "export", session_id, unfinished=True)
    theirs = recorded[:done]
    key = lambda r: (r["eventName"], r["eventSource"])  # noqa: E731
    matcher = difflib.SequenceMatcher(None, [key(r) for r in theirs], [key(r) for r in ours], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            _write(session=released[0][:8], kind="sequence", event=i1,
                   theirs=[key(r) for r in theirs[i1:i2]], ours=[key(r) for r in ours[j1:j2]],
                   before=[key(r) for r in theirs[max(0, i1 - 3):i1]])
            continue
        for mine, their in zip(ours[j1:j2], theirs[i1:i2], strict=True):
            try:
                adjusted = as_coauthor_logs_it(mine, their)
            except (AssertionError, ValueError):  # a list of another length, ...
                adjusted = without_timing(mine)
            expected = without_timing(their)
            for field in (f for f in expected if f != "eventNum"):
                if adjusted.get(field) != expected[field]:
                    _write(session=released[0][:8], kind="field", event=their["eventNum"], name=their["eventName"],
                           source=their["eventSource"], field=field,
                           ours=str(adjusted.get(field))[:200], theirs=str(expected[field])[:200])
    _write(session=released[0][:8], kind="covered", events=done, ours=len(ours))
