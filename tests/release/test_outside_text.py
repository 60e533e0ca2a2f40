"""A release carries where each session's text came from (issue 27 item 6): a session into
which text from outside was pasted is flagged in stats.csv, the others are not, and the card
says what the columns mean."""

from __future__ import annotations

import csv

from study.curation.formats import read_session
from study.curation.replay import replay
from study.release.build import build_release
from study.release.keys import load_key
from study.release.pseudonyms import released_session_id
from study.release.verify import verify
from tests.release.conftest import copy_source, write_session

PASTED_INTO = "88daaed513824fbd9c77746eec7862d9"
OTHER = "ae1f2b6df9a74fe4b1eeec602bf6c3ae"
OUTSIDE = "An essay paragraph that came from another model, pasted in one piece."


def test_the_release_flags_the_session_with_outside_text(key, tmp_path):
    source = copy_source(tmp_path / "coauthor", [PASTED_INTO, OTHER])
    path = source / "sessions" / f"{PASTED_INTO}.jsonl"
    events = read_session(path).events
    last = events[-1]
    length = len(replay(events).text) - 1  # before Quill's final newline (no astral characters here)
    pasted = {**last, "eventName": "text-insert", "eventSource": "user", "eventNum": len(events),
              "eventTimestamp": last["eventTimestamp"] + 1000,
              "textDelta": {"ops": [{"retain": length}, {"insert": OUTSIDE}]},
              "currentDoc": ""}  # fmt: skip
    write_session(path, events + [pasted])

    built = build_release(source, version="1.0.0", out=tmp_path / "out", key_path=key.path, processes=2)

    with open(built.directory / "stats.csv", newline="", encoding="utf-8") as handle:
        rows = {row["session_id"]: row for row in csv.DictReader(handle)}
    flagged = rows[released_session_id(load_key(key.path), PASTED_INTO, "coauthor")]
    clean = rows[released_session_id(load_key(key.path), OTHER, "coauthor")]
    assert flagged["outside_inserts"] == "1" and float(flagged["outside_share"]) > 0
    assert clean["outside_inserts"] == "0" and float(clean["outside_share"]) == 0
    assert "`outside_inserts`, the inserts of text from outside the study" in (built.directory / "README.md").read_text()
    report = verify(built.directory, processes=2)
    assert report.ok, report.render()
