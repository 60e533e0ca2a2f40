"""A paradigm is a folder (issue 18, item 4): tests/paradigm_helpme/ (a textarea with a "Help
me" button calling a local model) is registered, configured, served, logged, simulated,
exported and reported with no line of the toolkit naming it. If one of these needed a change
in a core module, this test fails: the core would not know the paradigm."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from study import config, paradigms
from study.cli import main
from study.lm.backends import DeterministicBackend
from study.lm.server import serve_in_thread
from study.server import create_app
from study.store import events as event_store
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.paradigm_helpme import NAME, PARADIGM
from tests.server.flow import start


@pytest.fixture
def helpme():
    paradigms.register(PARADIGM)
    yield PARADIGM
    paradigms.unregister(NAME)


@pytest.fixture
def helpme_folder(tmp_path, helpme) -> Path:
    folder = tmp_path / "helpme-study"
    result = CliRunner().invoke(main, ["init", str(folder), "--paradigm", NAME])
    assert result.exit_code == 0, result.output
    toml = folder / "study.toml"
    toml.write_text(toml.read_text().replace("min_seconds = 600", "min_seconds = 1"))
    return folder


def test_no_core_file_names_the_paradigm():
    root = Path(config.__file__).parents[1]
    core = [path for folder in ("study", "templates", "schemas") for path in (root / folder).rglob("*")
            if path.is_file() and path.suffix in (".py", ".js", ".html", ".json", ".toml")]  # fmt: skip
    assert len(core) > 100
    assert [str(p.relative_to(root)) for p in core if NAME in p.read_text(encoding="utf-8")] == []


def test_an_unregistered_paradigm_is_refused_by_studytoml_check(tmp_path, helpme):
    folder = tmp_path / "s"
    CliRunner().invoke(main, ["init", str(folder), "--paradigm", NAME])
    paradigms.unregister(NAME)
    with pytest.raises(config.ConfigError, match=r"conditions\[0\] \('[^']*'\)\.paradigm.*'helpme' is not one of"):
        config.load(folder)


def test_its_sessions_are_served_its_page_and_its_help(helpme_folder, model_url):
    study = config.load(helpme_folder)
    assert {c.paradigm for c in study.conditions} == {NAME}
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=model_url)))
    client = app.test_client()
    session_id = start(client)
    assert client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    assert client.post(f"/s/{session_id}/instructions").status_code == 302
    chosen = client.post(f"/s/{session_id}/prompt", data={"prompt": "shapeshifter"})
    assert chosen.location.endswith(f"/s/{session_id}/helpme")
    # the core's writing page sends the session to its paradigm's
    assert client.get(f"/s/{session_id}/writing").location.endswith(f"/s/{session_id}/helpme")
    page = client.get(f"/s/{session_id}/helpme")
    assert page.status_code == 200 and b'data-testid="helpme-button"' in page.data
    assert client.get("/helpme-static/helpme.js").status_code == 200
    answer = client.post(f"/api/sessions/{session_id}/help", json={"doc": "The door opened and"})
    assert answer.status_code == 200 and answer.json["help"].strip()
    # its request body is checked at the door by the schema in its own folder
    refused = client.post(f"/api/sessions/{session_id}/help", json={"doc": "x", "extra": 1})
    assert refused.status_code == 400 and "extra" in refused.json["error"]
    app.extensions["study.engine"].dispose()


def test_it_is_simulated_logged_exported_and_reported(helpme_folder, tmp_path):
    model, stop = serve_in_thread(DeterministicBackend())
    try:
        runner = CliRunner()
        result = runner.invoke(main, ["simulate", str(helpme_folder), "--writers", "2", "--seed", "3",
                                      "--suggestions-endpoint", model])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "2 simulated session(s) finished, 0 stopped" in result.output
    finally:
        stop()

    study = config.load(helpme_folder)
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        sessions = session_store.all_sessions(connection)
        logs = {s["session_id"]: event_store.records(connection, s["session_id"]) for s in sessions}
    engine.dispose()
    assert len(sessions) == 2 and all(s["stage"] == "complete" for s in sessions)
    asked = sum(1 for log in logs.values() for r in log if r["eventName"] == "suggestion-get")
    assert asked > 0  # "Help me" was pressed, and the core's event API stored the log

    out = tmp_path / "export"
    exported = runner.invoke(main, ["export", str(helpme_folder), "--format", NAME, "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    with open(out / "help.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["session_id"] for r in rows} == set(logs) and sum(int(r["asked"]) for r in rows) == asked
    assert runner.invoke(main, ["curate", "validate", str(out)]).exit_code == 0

    report = tmp_path / "report.html"
    reported = runner.invoke(main, ["report", str(helpme_folder), "--out", str(report)])
    assert reported.exit_code == 0, reported.output
    html = report.read_text()
    assert "Help me" in html and "help asked" in html


def test_a_writer_uses_its_page_in_a_browser(helpme_folder, model_url, browser):
    """Its page and script work as served: typing, Help me, Use it and Finish are logged through
    the core's event API, and the writer goes on to the core's next stage."""
    import threading

    from playwright.sync_api import expect
    from werkzeug.serving import make_server

    study = config.load(helpme_folder)
    study = replace(study, suggestions=replace(study.suggestions, endpoint=model_url))
    app = create_app(study)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"http://127.0.0.1:{server.port}/task?access_code=browser-1")
        page.get_by_role("checkbox").first.check()
        page.get_by_role("button").last.click()
        page.get_by_role("button").last.click()  # the instructions
        page.locator('button[name="prompt"][value="shapeshifter"]').click()
        text = page.get_by_test_id("helpme-text")
        text.click()
        text.press("End")
        text.press_sequentially(" He waited")
        page.get_by_test_id("helpme-button").click()
        expect(page.get_by_test_id("helpme-offer")).to_be_visible()
        page.get_by_test_id("helpme-use").click()
        page.wait_for_timeout(1100)  # the minimum writing time of 1 s
        page.get_by_test_id("finish").click()
        page.wait_for_url("**/evaluation")
    finally:
        context.close()
        server.shutdown()
        thread.join(timeout=5)
    assert errors == []
    engine = app.extensions["study.engine"]
    with reading(engine) as connection:
        (session,) = session_store.all_sessions(connection)
        names = [r["eventName"] for r in event_store.records(connection, session["session_id"])]
    engine.dispose()
    assert names[0] == "system-initialize" and names.count("text-insert") >= len(" He waited") + 1
    assert ["suggestion-get", "suggestion-open", "suggestion-select", "suggestion-close", "text-insert"] == [
        n for n in names if n.startswith("suggestion") or n == "text-insert"][-5:]
    # what the writer typed, then the help they used, is the text they submitted
    final = session["final_text"].rstrip("\n")
    assert " He waited" in final and not final.endswith(" He waited")


def test_its_own_table_of_studytoml_is_checked_and_read(helpme_folder):
    # [helpme] is declared by its folder alone (tests/paradigm_helpme/config.py: its schema and
    # its rules), and read as `study.helpme` as the built-in paradigms' tables are.
    toml = helpme_folder / "study.toml"
    assert config.load(helpme_folder).helpme.button == "Help me"  # no table: its defaults
    toml.write_text(toml.read_text() + '\n[helpme]\nbutton = "Give me a hand"\n')
    assert config.load(helpme_folder).helpme.button == "Give me a hand"
    with_unknown = toml.read_text() + 'colour = "red"\n'
    toml.write_text(with_unknown)
    with pytest.raises(config.ConfigError, match=r"unknown key 'colour' in \[helpme\]"):
        config.load(helpme_folder)
    toml.write_text(with_unknown.replace('colour = "red"\n', "").replace("Give me a hand", "Finish"))
    with pytest.raises(config.ConfigError, match=r"helpme\.button: 'Finish' is the label of another button"):
        config.load(helpme_folder)
