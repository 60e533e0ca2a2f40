"""`study report` on a proactive co-writing study (MindCopilot L1-L3) and on its `study export
--format proactive` folder: sessions whose suggestions come from the server's proactive API
(the local model answering over HTTP) and whose logs go through its event API; the report's
per-paradigm figures are `study curate proactive`'s on the same data."""

from __future__ import annotations

import csv
import math
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from tests.curation.conftest import record
from tests.curation.proactive_session import Script
from tests.report.conftest import Tables, number
from tests.server.flow import start, to_writing

PARADIGMS = {"creative-low": "L1", "creative-high": "L2", "argumentative-low": "L3"}
# Per session: its condition and what the writer does with each suggestion (Script.suggest's
# outcomes, plus "modify": accepted, then a word inside it changed).
SESSIONS = (
    ("creative-low", ["accept", "esc", "partial", "accept"]),
    ("creative-low", ["typed", "accept", "stale"]),
    ("creative-high", ["modify", "accept", "esc"]),
    ("creative-high", ["partial", "partial", "modify"]),
    ("argumentative-low", ["accept", "accept", "cursor", "modify"]),
)


@pytest.fixture
def proactive_study(tmp_path: Path, model_url: str) -> Path:
    from study.server import create_app
    from study.store import sessions as session_store
    from study.store import writing

    replacements = {"min_seconds = 600": "min_seconds = 0", 'mode = "completion"\n': 'mode = "chat"\n'}
    for name, paradigm in PARADIGMS.items():
        replacements[f'name = "{name}"\n'] = f'name = "{name}"\nparadigm = "{paradigm}"\n'
    folder = tmp_path / "study"
    write_study_files(folder, replacements=replacements)
    study = config.load(folder)
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=model_url)))
    client = app.test_client()
    for number_, (condition, outcomes) in enumerate(SESSIONS):
        session_id = start(client, access_code=f"writer-{number_}")
        to_writing(client, session_id, prompt="shapeshifter")
        with writing(app.extensions["study.engine"]) as connection:
            session_store.update_session(connection, session_id, condition=condition, paradigm=PARADIGMS[condition])
        script = Script(paradigm=PARADIGMS[condition])
        script.type(" The door opened")
        for outcome in outcomes:
            doc = script.text[:-1]
            response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": doc, "idle_ms": 2000})
            assert response.status_code == 200, response.json
            sid, text = response.json["suggestionId"], response.json["suggestion"]["original"]
            assert len(text.split()) >= 2, text  # so a partial accept takes less than all of it
            stage = response.json["stage"]
            if outcome == "modify":
                script.suggest(sid, text, "accept", stage=stage)
                start_at = script.end - len(text)
                script.edit(script.end - 1, insert="X")  # inside the accepted span
                script.modify(sid, start_at, len(text) + 1)
            else:
                script.suggest(sid, text, outcome, stage=stage)
            script.type(" and then")
        events = [{"seq": seq, **{k: v for k, v in e.items() if k != "eventNum"}}
                  for seq, e in enumerate(script.events)]  # fmt: skip
        response = client.post(f"/api/sessions/{session_id}/events", json={"events": events})
        assert response.status_code == 200, response.json
        finish = {"last_seq": len(events) - 1, "text": script.text}
        assert client.post(f"/s/{session_id}/writing/finish", json=finish).status_code == 200
    app.extensions["study.engine"].dispose()
    return folder


def _report(source: Path, out: Path, *options: str) -> Tables:
    result = CliRunner().invoke(main, ["report", str(source), "--out", str(out), *options])
    assert result.exit_code == 0, result.output
    tables = Tables(out.read_text(encoding="utf-8"))
    tables.html = out.read_text(encoding="utf-8")
    return tables


def _curated(folder: Path, tmp_path: Path, *options: str) -> tuple[Path, dict[str, dict]]:
    exported = tmp_path / "extended"
    result = CliRunner().invoke(main, ["export", str(folder), "--format", "proactive", "--out", str(exported)])
    assert result.exit_code == 0, result.output
    out = tmp_path / ("metrics" + "".join(options).replace("-", ""))
    result = CliRunner().invoke(main, ["curate", "proactive", str(exported), "--out", str(out), *options])
    assert result.exit_code == 0, result.output
    with (out / "paradigms.csv").open(encoding="utf-8") as handle:
        paradigms = {row["paradigm"]: row for row in csv.DictReader(handle)}
    with (out / "suggestions.csv").open(encoding="utf-8") as handle:
        suggestions = list(csv.DictReader(handle))
    for paradigm, row in paradigms.items():
        mine = [s for s in suggestions if s["paradigm"] == paradigm]
        row["partial"] = sum(1 for s in mine if s["outcome"] == "partial")
        accepted = [s for s in mine if s["outcome"] in ("accepted", "accepted_modified", "partial")]
        row["modify"] = 100 * sum(1 for s in accepted if s["outcome"] == "accepted_modified") / len(accepted)
    return exported, paradigms


def _cell(value: str) -> float:
    return math.nan if value == "–" else number(value)


def _same(shown: str, curated: str | float) -> bool:
    expected = float(curated) if curated not in ("", "nan") else math.nan
    got = _cell(shown)
    return (math.isnan(expected) and math.isnan(got)) or got == round(expected, 2)


def _check_paradigms(tables: Tables, curated: dict[str, dict], judged: bool) -> None:
    table = tables.sections["proactive"][0]
    heading, rows = table[0], {row[0]: row for row in table[1:]}
    assert set(rows) == {"L1", "L2", "L3", "all"}
    at = heading.index
    columns = {"acceptance macro (%)": "acceptance_macro", "acceptance micro (%)": "acceptance_micro",
               "char edit distance": "char_distance", "word edit distance": "word_distance",
               "partial accepts": "partial", "modify rate (%)": "modify"}  # fmt: skip
    if judged:
        columns |= {"HAR (%)": "har", "KED": "ked"}
    for paradigm, row in curated.items():
        assert rows[paradigm][at("sessions")] == row["sessions"]
        assert rows[paradigm][at("shown")] == row["shown"]
        for heading_, column in columns.items():
            assert _same(rows[paradigm][at(heading_)], row[column]), (paradigm, heading_, rows[paradigm], row)


def _writing(folder: Path, model_url: str, access_code: str, condition: str, paradigm: str):
    """The task server's app for `folder` (asking `model_url`), and one writer's session at the
    writing stage in `condition`, whose paradigm is `paradigm`: (app, client, session_id)."""
    from study.server import create_app
    from study.store import sessions as session_store
    from study.store import writing

    study = config.load(folder)
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=model_url)))
    client = app.test_client()
    session_id = start(client, access_code=access_code)
    to_writing(client, session_id, prompt="shapeshifter")
    with writing(app.extensions["study.engine"]) as connection:
        session_store.update_session(connection, session_id, condition=condition, paradigm=paradigm)
    return app, client, session_id


def test_proactive_study_report_shows_acceptance_and_edits_per_paradigm(proactive_study, tmp_path):
    tables = _report(proactive_study, tmp_path / "report.html")
    exported, curated = _curated(proactive_study, tmp_path)
    assert set(curated) == {"L1", "L2", "L3"}
    _check_paradigms(tables, curated, judged=False)
    heading = tables.sections["proactive"][0][0]
    assert "HAR (%)" not in heading and "KED" not in heading
    text = tables.texts["proactive"]
    assert "HAR" in text and "not computed" in text and "--deterministic-judge" in text
    assert curated["L2"]["partial"] == 2 and number(tables.rows("proactive")["L2"][5]) == 2

    # Per session, by condition: the two L1 sessions' mean acceptance.
    assert '<figure data-plot="proactive"><svg' in tables.html  # acceptance per condition
    per_session = tables.rows("proactive", 1)
    assert per_session["creative-low (L1)"][0] == "2"
    assert per_session["all"][0] == str(len(SESSIONS))

    # The export folder gives the same figures.
    from_export = _report(exported, tmp_path / "export.html")
    _check_paradigms(from_export, curated, judged=False)


def test_with_a_judge_the_report_adds_har_and_ked(proactive_study, tmp_path):
    tables = _report(proactive_study, tmp_path / "report.html", "--deterministic-judge")
    _, curated = _curated(proactive_study, tmp_path, "--deterministic-judge")
    _check_paradigms(tables, curated, judged=True)
    assert any(_cell(tables.rows("proactive")[p][-1]) > 0 for p in ("L2", "L3"))  # modified: KED > 0
    assert "deterministic judge answers by rules" in tables.texts["proactive"]


def test_a_judge_that_cannot_be_reached_is_an_error_and_no_report(proactive_study, tmp_path):
    out = tmp_path / "report.html"
    # A proxy that takes a user:password in the address: the error names the address without it.
    endpoint = "http://judge:hunter2@127.0.0.1:9/v1"
    result = CliRunner().invoke(main, ["report", str(proactive_study), "--out", str(out),
                                       "--judge-endpoint", endpoint, "--judge-model", "m"])
    assert result.exit_code == 1 and "cannot reach the judge endpoint at http://127.0.0.1:9/v1" in result.output
    assert "hunter2" not in result.output
    assert not out.exists() and not list(tmp_path.glob("*.partial"))


def test_an_assistant_panels_response_pasted_into_the_text_is_the_assistants_in_the_report(tmp_path, model_url):
    # The paper's L0 ([proactive] l0 = "assistant"): the writer pastes the panel's response.
    # The strict CoAuthor logs the report's statistics read have no chat-receive; the report
    # must still read the pasted response as the assistant's, as `study mturk review` does.
    folder = tmp_path / "study"
    write_study_files(folder, replacements={
        "min_seconds = 600": 'min_seconds = 0\noutside_paste = "flag"',
        'name = "creative-low"\n': 'name = "creative-low"\nparadigm = "L0"\n',
        'name = "creative-high"\n': 'name = "creative-high"\nparadigm = "L1"\n',
        "\n[texts]\nconsent": '\n[proactive]\nl0 = "assistant"\n\n[texts]\nconsent',
    })  # fmt: skip
    app, client, session_id = _writing(folder, model_url, "writer-0", "creative-low", "L0")
    asked = client.post(f"/api/sessions/{session_id}/assistant", json={"request": "A sentence, please.", "doc": "x"})
    assert asked.status_code == 200, asked.json
    chat_id, response = asked.json["chatId"], asked.json["response"]
    assert len(response.strip()) >= 20
    script = Script(paradigm="L0").type(" The door opened.")
    script.add(record("chat-send"), text="A sentence, please.")
    script.add(record("chat-receive", "api"), chatId=chat_id, text=response)
    script.edit(script.end, insert=" " + response, paste=True, chatId=chat_id)
    events = [{"seq": seq, **{k: v for k, v in e.items() if k != "eventNum"}} for seq, e in enumerate(script.events)]
    assert client.post(f"/api/sessions/{session_id}/events", json={"events": events}).status_code == 200
    finish = {"last_seq": len(events) - 1, "text": script.text}
    assert client.post(f"/s/{session_id}/writing/finish", json=finish).status_code == 200
    app.extensions["study.engine"].dispose()

    tables = _report(folder, tmp_path / "report.html")
    section = tables.html.split('<section id="origin">')[1].split("</section>")[0]
    assert "Sessions with text from outside" not in section
    rows = {row[0]: row for row in tables.sections["origin"][0]}
    assert _cell(rows["creative-low"][4]) == 0 and rows["creative-low"][-1] == "0"  # outside (%), sessions


def test_a_session_shown_no_suggestion_is_said_to_be_left_out_of_acceptance_not_counted_0(tmp_path):
    # An L1 writer who never paused long enough for a suggestion: MindCopilot's acceptance (of
    # the suggestions shown) does not apply, and the report left the session out of Table 3's
    # and the collaboration section's acceptance while both said a session without a query
    # counts 0.
    from tests.curation.conftest import write_lines

    folder = tmp_path / "export"
    folder.mkdir()
    took = Script(paradigm="L1").type("Snow fell.")
    took.suggest(1, " It was cold.", "accept")
    refused = Script(paradigm="L1").type("Snow fell.")
    refused.suggest(1, " It was dark.", "esc")
    never = Script(paradigm="L1").type("Snow fell and fell.")
    for name, script in (("took", took), ("refused", refused), ("never", never)):
        write_lines(folder / f"{name}.jsonl", script.events)
    (folder / "sessions.csv").write_text("session_id,paradigm,condition\n"
                                         "took,L1,c\nrefused,L1,c\nnever,L1,c\n")  # fmt: skip
    tables = _report(folder, tmp_path / "r.html")
    assert number(tables.rows("collaboration")["c"][1]) == 50.0  # (100 + 0) / 2, not / 3
    for section in ("collaboration", "table3"):
        assert "1 session(s) of a MindCopilot arm were shown no suggestion" in tables.texts[section]
        assert "left out of the acceptance means, not counted as 0" in tables.texts[section]


def test_arms_changed_to_another_paradigm_in_study_toml_are_reported_as_they_ran(proactive_study, tmp_path):
    from tests.export.test_paradigm_changed_under_its_name import _set_paradigm

    before = _report(proactive_study, tmp_path / "before.html")
    for name in PARADIGMS:  # every ghost-text arm's name kept for Tab lists from now on
        _set_paradigm(proactive_study, name, "tab")
    after = _report(proactive_study, tmp_path / "after.html")
    assert after.sections["proactive"][0] == before.sections["proactive"][0]
    assert {"L1", "L2", "L3", "all"} <= set(after.rows("proactive"))


def test_the_report_of_a_proactive_export_names_the_table_it_read(proactive_study, tmp_path):
    """It said it read "the release's per-genre sheets sessions.csv ... (genre from the file
    name)": the export's sessions.csv is one table with a genre column, not a release's sheets."""
    exported = tmp_path / "extended"
    result = CliRunner().invoke(main, ["export", str(proactive_study), "--format", "proactive", "--out", str(exported)])
    assert result.exit_code == 0, result.output
    said = "metadata from {} (the export's table of proactive sessions)"
    result = CliRunner().invoke(main, ["report", str(exported), "--out", str(tmp_path / "report.html")])
    assert result.exit_code == 0, result.output
    assert f"Read {said.format(exported / 'sessions.csv')}." in result.output
    overview = Tables((tmp_path / "report.html").read_text(encoding="utf-8")).texts["overview"]
    assert f"Read {said.format('extended/sessions.csv')}." in overview  # relative to the report
    assert "per-genre" not in result.output + overview


def test_the_report_of_an_all_export_measures_the_finished_sessions_and_says_how_many_it_left_out(
        proactive_study, tmp_path, model_url):
    # A writer who accepted a suggestion and left without finishing: `--all` exports the session,
    # but MindCopilot's figures are of sessions that were written to the end.
    app, client, session_id = _writing(proactive_study, model_url, "writer-who-left", "creative-low", "L1")
    script = Script(paradigm="L1")
    script.type(" The door opened")
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": script.text[:-1], "idle_ms": 2000})
    script.suggest(response.json["suggestionId"], response.json["suggestion"]["original"], "accept",
                   stage=response.json["stage"])  # fmt: skip
    events = [{"seq": seq, **{k: v for k, v in e.items() if k != "eventNum"}} for seq, e in enumerate(script.events)]
    assert client.post(f"/api/sessions/{session_id}/events", json={"events": events}).status_code == 200
    app.extensions["study.engine"].dispose()
    exported = tmp_path / "everything"
    result = CliRunner().invoke(main, ["export", str(proactive_study), "--format", "proactive", "--all",
                                       "--out", str(exported)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (exported / f"{session_id}.jsonl").is_file()

    from_folder = _report(proactive_study, tmp_path / "folder.html")
    from_export = _report(exported, tmp_path / "export.html")

    # The per-paradigm table and Table 5 (the section's first and last tables) read as on the folder.
    assert from_export.sections["proactive"][0] == from_folder.sections["proactive"][0]
    assert from_export.sections["proactive"][-1] == from_folder.sections["proactive"][-1]
    said = from_export.texts["proactive"]
    assert "1 unfinished session(s) in the folder" in said and "left out" in said
    assert "unfinished session" not in from_folder.texts["proactive"]


def test_the_report_of_a_plain_export_beside_a_control_arm_measures_its_ghost_text_arms(proactive_study, tmp_path):
    """With a control (or chat) arm beside ghost text, `study export` puts the ghost-text arms'
    extended logs in OUT/proactive/ (README, "Paradigms as arms"). The export's report reads
    them there, so it has MindCopilot's section and acceptance as the study folder's report."""
    toml = proactive_study / "study.toml"
    control = '\n[[conditions]]\nname = "no-ai"\ngenre = "creative"\nparadigm = "none"\n'
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace("\n[[conditions]]\n", control + "\n[[conditions]]\n", 1), encoding="utf-8")
    exported = tmp_path / "export"
    result = CliRunner().invoke(main, ["export", str(proactive_study), "--out", str(exported)])
    assert result.exit_code == 0, result.output
    assert (exported / "proactive" / "sessions.csv").is_file(), result.output

    export = _report(exported, tmp_path / "export.html")
    study = _report(proactive_study, tmp_path / "study.html")
    assert export.sections["proactive"] == study.sections["proactive"]
    assert export.rows("collaboration") == study.rows("collaboration")
