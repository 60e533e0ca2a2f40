"""`study simulate`: simulated writers take the real participant's path over HTTP, and their
sessions go through export, validation and the report like real ones, marked simulated."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from study import config
from study.cli import main
from study.store import make_engine, reading
from study.store import events as event_store
from study.store import sessions as session_store
from study.store.db import suggestion_requests
from study.store.simulated import simulated_sessions
from tests.simulate.conftest import SCRIPTED_TEXT


def _database(folder):
    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        sessions = session_store.all_sessions(connection)
        marks = {r.session_id: r for r in connection.execute(select(simulated_sessions))}
        requests = connection.execute(select(suggestion_requests)).all()
        records = {s["session_id"]: event_store.records(connection, s["session_id"]) for s in sessions}
    engine.dispose()
    return sessions, marks, requests, records


def _simulate_at_server_of(study, pilot_folder):
    """`study simulate PILOT_FOLDER --url` at a server of `study` running for the call."""
    import threading

    from werkzeug.serving import make_server

    from study.server import create_app

    server = make_server("127.0.0.1", 0, create_app(study, suggestion_engine=object()), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        return CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "1", "--url",
                                         f"http://127.0.0.1:{server.port}"])  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_simulated_writers_complete_the_path_and_the_pipeline_treats_and_marks_them(
    pilot_folder, suggestion_model, tmp_path
):
    runner = CliRunner()
    result = runner.invoke(main, ["simulate", str(pilot_folder), "--writers", "3",
                                  "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3 simulated session(s) finished, 0 stopped" in result.output
    # the deterministic model never answers in JSON: every decision fell back, and it says so
    assert "Decisions read from the model's answers: 0 of" in result.output

    sessions, marks, requests, records = _database(pilot_folder)
    assert len(sessions) == 3 and all(s["stage"] == "complete" for s in sessions)
    assert all(s["verification_code"] and json.loads(s["survey"]) for s in sessions)
    assert set(marks) == {s["session_id"] for s in sessions}
    assert {m.persona for m in marks.values()} >= {"a careful native English speaker who "
                                                   "prefers their own words and asks the AI "
                                                   "mostly when stuck"}  # fmt: skip
    # suggestions came through the real suggestions API, logged by the server
    assert requests and {r.session_id for r in requests} <= set(marks)
    accepted = sum(1 for rs in records.values() for r in rs if r["eventName"] == "suggestion-select")
    assert accepted > 0

    out = tmp_path / "export"
    assert runner.invoke(main, ["export", str(pilot_folder), "--out", str(out)]).exit_code == 0
    rows = list(csv.DictReader(open(out / "metadata.csv")))
    assert len(rows) == 3 and {r["simulated"] for r in rows} == {"true"}
    validated = runner.invoke(main, ["curate", "validate", str(out), "--json"])
    assert validated.exit_code == 0, validated.output
    checked = json.loads(validated.output)["sessions"]
    assert len(checked) == 3 and all(c["errors"] == 0 and c["warnings"] == 0 for c in checked)
    assert {c["format"] for c in checked} == {"coauthor-2021"}

    report = tmp_path / "report.html"
    assert runner.invoke(main, ["report", str(pilot_folder), "--out", str(report)]).exit_code == 0
    html = report.read_text()
    assert "3 of 3 sessions were written by simulated writers" in html
    status = runner.invoke(main, ["status", str(pilot_folder)])
    assert "Simulated sessions (study simulate, not people): 3" in status.output


def test_a_model_that_answers_in_json_drives_every_decision(pilot_folder, suggestion_model, writers_model):
    result = CliRunner().invoke(main, [
        "simulate", str(pilot_folder), "--writers", "2", "--suggestions-endpoint", suggestion_model,
        "--llm-url", writers_model, "--llm-model", "scripted-writer",
        "--persona", "a retired sailor", "--intent", "write a sea {noun}",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    sessions, marks, _, records = _database(pilot_folder)
    assert "Decisions read from the model's answers: " in result.output
    by_model, total = (int(x) for x in result.output.split("answers: ")[1].split(";")[0].split(" of "))
    assert by_model == total > 0
    assert {m.persona for m in marks.values()} == {"a retired sailor"}
    assert {m.intent for m in marks.values()} == {"write a sea {noun}"}
    for session in sessions:
        log = records[session["session_id"]]
        names = [r["eventName"] for r in log]
        # the writer's own sentence, then Tab, then the second suggestion (one step down)
        assert SCRIPTED_TEXT in session["final_text"]
        first_open = names.index("suggestion-open")
        assert names[first_open + 1 : first_open + 3] == ["suggestion-down", "suggestion-select"]
        # The select names the item taken in both indices, as the page's does.
        select = log[first_open + 2]
        assert (select["currentSuggestionIndex"], select["currentHoverIndex"]) == (1, 1)
        chosen = log[first_open]["currentSuggestions"][1]["original"]
        assert chosen in session["final_text"]
        assert json.loads(session["survey"])["ownership"] == 6  # the model's answer, stored
        assert json.loads(session["survey"])["native_speaker"] == "No"


def test_a_running_server_of_another_study_is_refused(pilot_folder, tmp_path, suggestion_model):
    import threading

    from werkzeug.serving import make_server

    from study.cli import write_study_files
    from study.server import create_app

    other = tmp_path / "other"
    write_study_files(other)
    toml = other / "study.toml"
    toml.write_text(toml.read_text().replace('name = "', 'name = "other-', 1))
    server = make_server("127.0.0.1", 0, create_app(config.load(other)), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--url",
                                           f"http://127.0.0.1:{server.port}"])  # fmt: skip
    finally:
        server.shutdown()
        thread.join()
    assert result.exit_code != 0
    assert "not '" in result.output and "must match" in result.output
    sessions, *_ = _database(pilot_folder)
    assert sessions == []


def test_a_release_of_a_piloted_study_marks_the_simulated_sessions(
    pilot_folder, suggestion_model, tmp_path
):
    from study.release.keys import init_keyfile

    runner = CliRunner()
    result = runner.invoke(main, ["simulate", str(pilot_folder), "--writers", "2",
                                  "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    (tmp_path / "keys").mkdir()
    key = init_keyfile(tmp_path / "keys" / "study.key")
    out = tmp_path / "releases"
    built = runner.invoke(main, ["release", "build", str(pilot_folder), "--version", "1.0.0",
                                 "--out", str(out), "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert built.exit_code == 0, built.output
    directory = out / "coauthor-1.0.0"
    rows = list(csv.DictReader(open(directory / "metadata.csv")))
    assert len(rows) == 2 and {r["simulated"] for r in rows} == {"true"}
    assert "2 of these sessions were written by simulated writers" in (directory / "README.md").read_text()
    # and the report of the release says so too
    report = tmp_path / "release.html"
    assert runner.invoke(main, ["report", str(directory), "--out", str(report)]).exit_code == 0
    assert "2 of 2 sessions were written by simulated writers" in report.read_text()


def test_writers_join_a_server_already_running_for_the_study_even_when_it_assigns_prompts(
    pilot_folder, suggestion_model
):
    import threading
    from dataclasses import replace

    from werkzeug.serving import make_server

    from study.server import create_app

    toml = pilot_folder / "study.toml"
    toml.write_text(toml.read_text().replace('prompt_selection = "choose"', 'prompt_selection = "assign"'))
    study = config.load(pilot_folder)
    study = replace(study, suggestions=replace(study.suggestions, endpoint=suggestion_model))
    server = make_server("127.0.0.1", 0, create_app(study), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "2",
                                           "--url", f"http://127.0.0.1:{server.port}/"])  # fmt: skip
    finally:
        server.shutdown()
        thread.join()
    assert result.exit_code == 0, result.output
    assert "prompt (assigned by the study)" in result.output
    sessions, marks, requests, _ = _database(pilot_folder)
    assert len(sessions) == 2 and all(s["stage"] == "complete" and s["prompt_code"] for s in sessions)
    assert set(marks) == {s["session_id"] for s in sessions}


def test_a_run_whose_suggestions_all_failed_says_so_and_how_to_fix_it(pilot_folder):
    """Writers finish even when the suggestion model is unreachable (as a person would); the
    summary must not read like a normal pilot."""
    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "2", "--seed", "1",
                                       "--suggestions-endpoint", "http://127.0.0.1:1/v1"])  # fmt: skip
    assert "queries (" in result.output and " failed)" in result.output
    assert "Every suggestion request failed" in result.output and "--suggestions-endpoint" in result.output


def test_a_writers_model_url_without_its_scheme_is_refused_before_any_session(pilot_folder, suggestion_model, writers_model):
    """`--llm-url localhost:8001/v1` (http:// left out): one line naming the flag and the fix,
    and no session left in the study's database unmarked, to be taken for a person's."""
    without_scheme = writers_model.split("://", 1)[1]
    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "1",
                                       "--suggestions-endpoint", suggestion_model,
                                       "--llm-url", without_scheme])  # fmt: skip
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "--llm-url" in result.output and f"http://{without_scheme}" in result.output
    assert not (pilot_folder / "study.db").exists()  # refused before the database was made


def test_a_running_server_of_another_study_of_the_same_name_is_refused(pilot_folder, tmp_path, suggestion_model):
    """Every `study init` study is named "coauthor" until renamed: a pilot copy's `--url` at the
    real study's server must not put unmarked simulated sessions in the real study's database."""
    from study.cli import write_study_files

    launched = tmp_path / "launched"
    write_study_files(launched, replacements={"min_seconds = 600": "min_seconds = 1"})  # the same name, its own id
    assert config.load(launched).name == config.load(pilot_folder).name
    assert config.load(launched).id != config.load(pilot_folder).id
    result = _simulate_at_server_of(config.load(launched), pilot_folder)
    assert result.exit_code == 1, result.output
    assert "must match" in result.output
    launched_sessions, *_ = _database(launched)
    assert launched_sessions == []


@pytest.mark.parametrize("served", ["a copy of the folder", "study demo --dir"])
def test_a_running_server_of_this_study_storing_into_another_database_is_refused(served, pilot_folder, tmp_path):
    """README's advice is to pilot in a copy of the folder, and a copy keeps study.toml's id, so
    the launched study's server answers /healthz with the pilot's name and id; `study demo --dir`
    serves the folder's own study into demo.db. Pointed at either with --url, the writers' sessions
    were stored there unmarked (to be taken for people's), while the marks went to this folder's
    database, naming sessions it did not hold, and the run ended "finished"."""
    import shutil
    from dataclasses import replace

    if served == "a copy of the folder":
        launched = tmp_path / "launched"
        shutil.copytree(pilot_folder, launched)  # as `cp -r`: the same name and id
        study = config.load(launched)
        assert (study.name, study.id) == (config.load(pilot_folder).name, config.load(pilot_folder).id)
    else:
        study = replace(config.load(pilot_folder), database_url=f"sqlite:///{pilot_folder / 'demo.db'}")
    result = _simulate_at_server_of(study, pilot_folder)
    assert result.exit_code == 1, result.output
    assert "stores its sessions in another database than this folder's" in result.output
    assert "no writer entered" in result.output and "Fix: drop --url" in result.output
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        assert session_store.all_sessions(connection) == []  # nothing stored there, unmarked
    engine.dispose()
    sessions, marks, *_ = _database(pilot_folder)
    assert sessions == [] and marks == {}


def test_a_study_people_have_sessions_in_is_refused_before_any_writer(pilot_folder, suggestion_model):
    """Pointed at a launched study (a researcher who did not pilot a copy), simulated writers
    took the prompts, arms and rows the balancing would have given the next people, and sat
    among their sessions. A second pilot of a pilot's folder is not refused: see the next test."""
    from study.server import create_app
    from tests.server.flow import start, to_writing

    client = create_app(config.load(pilot_folder), suggestion_engine=object()).test_client()
    to_writing(client, start(client, access_code="lab-1"), prompt="shapeshifter")
    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "1",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 1, result.output
    assert (f"{pilot_folder / 'study.toml'}: its database (sqlite:///{pilot_folder / 'study.db'}) holds 1 "
            "session(s) of people (not written by study simulate)") in result.output  # fmt: skip
    assert "Fix: pilot a copy of this folder without its study.db" in result.output
    assert "writer 0" not in result.output
    sessions, marks, *_ = _database(pilot_folder)
    assert len(sessions) == 1 and marks == {}
    # On purpose (simulated sessions beside people's): the flag the refusal names.
    assert "add --beside-people" in result.output
    beside = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "1", "--beside-people",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert beside.exit_code == 0, beside.output
    sessions, marks, *_ = _database(pilot_folder)
    assert len(sessions) == 2 and len(marks) == 1


def test_a_pilot_run_twice_adds_to_its_own_sessions(pilot_folder, suggestion_model):
    for _ in range(2):
        result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "1",
                                           "--suggestions-endpoint", suggestion_model])  # fmt: skip
        assert result.exit_code == 0, result.output
    sessions, marks, *_ = _database(pilot_folder)
    assert len(sessions) == 2 and set(marks) == {s["session_id"] for s in sessions}


def test_requests_a_per_minute_limit_refused_are_counted_with_the_servers_reason(pilot_folder, suggestion_model):
    """A pilot whose writers ran into [suggestions] max_requests_per_minute: the summary says
    how many requests showed nothing and why, not only a count per writer that reads as a model
    with nothing to suggest."""
    toml = pilot_folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("max_requests_per_minute = 30",
                                                             "max_requests_per_minute = 1"), encoding="utf-8")  # fmt: skip
    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "1", "--seed", "2", "--persona",
                                       "a hurried crowd worker who wants to finish quickly and accepts most suggestions",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if "showed the writer nothing" in line)
    assert "x HTTP 429: " in line, line
    assert "Every suggestion request failed" not in result.output
