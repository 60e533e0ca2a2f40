"""`study simulate` answers a writing study's surveys as a person would from the page: a slider
once moved, a text with its word minimum, a follow-up question its answer reveals."""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner

from study import config
from study.cli import main
from study.store import make_engine, reading
from study.store import surveys as survey_store
from study.store import sessions as session_store

SURVEYS = """
[[surveys]]
name = "background"
placement = "before_writing"
[[surveys.items]]
id = "confidence"
type = "slider"
text = "How confident are you as a writer?"
min = 1
max = 10
[[surveys.items]]
id = "habits"
type = "text"
text = "How do you usually write?"
min_words = 12
"""


def test_a_writing_study_whose_survey_has_a_slider_and_a_word_minimum_is_piloted_to_the_end(
    pilot_folder, suggestion_model
):
    # A page a person answers by moving the slider and writing enough words: the simulator used
    # to send neither, and every writer stopped at the survey ("Move the slider to give a rating").
    toml = pilot_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + SURVEYS, encoding="utf-8")
    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "1",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 simulated session(s) finished, 0 stopped" in result.output

    engine = make_engine(config.load(pilot_folder).database_url)
    with reading(engine) as connection:
        (session,) = session_store.all_sessions(connection)
        background = survey_store.get(connection, session["session_id"], "background")
    engine.dispose()
    assert session["stage"] == "complete" and session["verification_code"]
    assert background["submitted_at"] and 1 <= background["answers"]["confidence"] <= 10
    assert len(background["answers"]["habits"].split()) >= 12
    assert "confidence" in json.loads(session["survey"])


def test_a_simulated_writers_survey_answers_are_told_from_a_persons_by_the_session_id(
    pilot_folder, suggestion_model, tmp_path
):
    """survey.csv and surveys.json carry no `simulated` column on purpose: it could clash with a
    question of that id, and a release built from an export reads every column of survey.csv as
    a question it publishes. A session's answers are a simulated writer's when its session_id is
    `simulated=true` in metadata.csv, in the export and in the release alike (the release gives
    both tables the same released ids); the report says its survey figures hold them."""
    from study.release.keys import init_keyfile
    from study.server import create_app
    from tests.server.flow import finish, start, to_writing

    toml = pilot_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("min_seconds = 1", "min_seconds = 0"), encoding="utf-8")
    app = create_app(config.load(pilot_folder), suggestion_engine=object())
    client = app.test_client()
    person = start(client, access_code="lab-1")
    to_writing(client, person, prompt="shapeshifter")
    finish(client, person)  # ownership 6, satisfaction 5, reuse 7
    app.extensions["study.engine"].dispose()
    runner = CliRunner()
    result = runner.invoke(main, ["simulate", str(pilot_folder), "--writers", "1", "--beside-people",
                                  "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output

    def answers_by_kind(folder) -> dict[str, list[dict]]:
        with (folder / "metadata.csv").open(encoding="utf-8") as handle:
            simulated = {row["session_id"]: row["simulated"] for row in csv.DictReader(handle)}
        with (folder / "survey.csv").open(encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            assert "simulated" not in reader.fieldnames  # no marker read as a question
            rows = list(reader)
        kinds: dict[str, list[dict]] = {}
        for row in rows:
            kinds.setdefault(simulated[row.pop("session_id")], []).append(row)
        return kinds

    exported = tmp_path / "export"
    assert runner.invoke(main, ["export", str(pilot_folder), "--out", str(exported)]).exit_code == 0
    kinds = answers_by_kind(exported)
    assert [{k: row[k] for k in ("ownership", "satisfaction", "reuse")} for row in kinds["false"]] == [
        {"ownership": "6", "satisfaction": "5", "reuse": "7"}
    ]
    assert len(kinds["true"]) == 1
    typed = json.loads((exported / "surveys.json").read_text(encoding="utf-8"))["responses"]
    assert {r["session_id"] for r in typed} == set(_ids(exported))  # the same join
    assert all("simulated" not in r and "simulated" not in r["answers"] for r in typed)

    (tmp_path / "keys").mkdir()
    key = init_keyfile(tmp_path / "keys" / "study.key")
    built = runner.invoke(main, ["release", "build", str(pilot_folder), "--version", "1.0.0",
                                 "--out", str(tmp_path / "releases"), "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert built.exit_code == 0, built.output
    release = tmp_path / "releases" / "coauthor-1.0.0"
    assert {kind: len(rows) for kind, rows in answers_by_kind(release).items()} == {"false": 1, "true": 1}
    assert answers_by_kind(release)["false"][0]["ownership"] == "6"

    report = tmp_path / "release.html"
    assert runner.invoke(main, ["report", str(release), "--out", str(report)]).exit_code == 0
    html = report.read_text(encoding="utf-8")
    assert "1 of 2 sessions were written by simulated writers" in html
    assert "They are in every figure of this report but the planned comparisons" in html


def _ids(folder) -> list[str]:
    with (folder / "metadata.csv").open(encoding="utf-8") as handle:
        return [row["session_id"] for row in csv.DictReader(handle)]
