"""HAR on live data (issue 21, item 6): the reference a suggestion is judged against is what the
writer wrote themselves after it, never the suggestion's own text, so an accepted suggestion
does not pass the checklist's early-overlap rule (12) by matching itself."""

from __future__ import annotations

import csv

from click.testing import CliRunner

from study.cli import main as study_cli
from study.paradigms.proactive.curation.records import suggestion_records
from tests.curation.conftest import write_lines
from tests.curation.proactive_session import Script


def _session() -> Script:
    s = Script()
    s.type(" It")
    s.suggest(1, " snowed all night long.")  # accepted, then the writer goes elsewhere
    s.type(" The kettle whistled in the kitchen.")
    s.suggest(2, " Cars slid on the ice.", "esc")  # rejected, the writer writes their own
    s.type(" Cars slid on the ice, slowly.")
    s.suggest(3, " Then the sun came out.", "partial")  # one word taken, then typing on
    s.type(" wind rose.")
    return s


def test_the_reference_is_the_writers_own_text_after_the_suggestion():
    accepted, rejected, partial = suggestion_records(_session().events)
    assert accepted.outcome == "accepted"
    assert accepted.reference == " The kettle whistled in the kitchen."
    assert rejected.reference == " Cars slid on the ice, slowly."
    assert (partial.outcome, partial.accepted_text, partial.reference) == ("partial", " Then", " wind rose.")


def test_an_accepted_suggestion_is_judged_against_what_followed_it(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    write_lines(folder / "a1.jsonl", _session().events)
    out = tmp_path / "out"
    result = CliRunner().invoke(study_cli, ["curate", "proactive", str(folder), "--out", str(out), "--deterministic-judge"])
    assert result.exit_code == 0, result.output
    with (out / "suggestions.csv").open(encoding="utf-8") as handle:
        rows = {row["suggestion_id"]: row for row in csv.DictReader(handle)}
    # Judged against the kettle, the snow does not overlap: rejected, where a reference that
    # began with " snowed all night long." accepted it by rule 12.
    assert rows["1"]["har"] == "False"
    assert rows["2"]["har"] == "True"  # the writer wrote (nearly) what was suggested
