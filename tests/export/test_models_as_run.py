"""models.csv and a proactive export's sessions.csv name the model each session's calls were sent
with, never study.toml's of the day of the export: a researcher who swaps a condition's model
between rounds (keeping its name) does not see an earlier session that never asked for a
suggestion credited with the new model, in the export or in `study report` of it; a session
asked two models (swapped while it ran) names each once; and a session is described by the
paradigm it ran with when its arm has since become a control arm."""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner

from study import config
from study.cli import main
from study.store import make_engine, reading, writing
from study.store import sessions as session_store
from study.store.db import suggestion_requests
from tests.export.served_as_run import ARM, SWAPPED, a_study, change_arm, serve_one

# ARM's settings in `study init`'s study.toml: what a control arm may not have (study.control_arm).
ARM_SETTINGS = ('mode = "completion"\nmodel = "davinci-002"\nn = 5\nmax_tokens = 30\ntemperature = 0.75\n'
                "top_p = 1\npresence_penalty = 0\nfrequency_penalty = 1\n")  # fmt: skip


def by_worker(folder, table) -> dict[str, dict]:
    """The rows of an exported table (keyed by session id) by the worker who wrote each session."""
    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        worker = {s["session_id"]: s["worker_id"] for s in session_store.all_sessions(connection)}
    engine.dispose()
    with open(table, newline="", encoding="utf-8") as handle:
        return {worker[row["session_id"]]: row for row in csv.DictReader(handle)}


def swapped_after_a_session_that_never_asked(folder) -> None:
    """The first writer never presses Tab, the second asks davinci-002; then study.toml swaps
    ARM's model."""
    serve_one(folder, "A1NOCALLWRITER", asks=False)
    serve_one(folder, "A2ASKEDWRITER", asks=True)
    change_arm(folder, 'model = "davinci-002"', f'model = "{SWAPPED}"')


def models_row(condition: str, configured: str, answered: str) -> str:
    """A row of `study report`'s table of models (condition, configured model, answered by)."""
    return f"<tr><td>{condition}</td><td>{configured}</td><td>{answered}</td></tr>"


def test_models_csv_leaves_the_model_empty_for_a_session_that_asked_none_and_the_report_agrees(tmp_path, model_url):
    folder = a_study(tmp_path, model_url)
    swapped_after_a_session_that_never_asked(folder)
    out = tmp_path / "out"

    result = CliRunner().invoke(main, ["export", str(folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    rows = by_worker(folder, out / "models.csv")
    assert {worker: (r["condition"], r["model"], r["answered_model"]) for worker, r in rows.items()} == {
        "A1NOCALLWRITER": (ARM, "", ""),  # nothing records a model: not study.toml's SWAPPED
        "A2ASKEDWRITER": (ARM, "davinci-002", "deterministic"),
    }
    # The report of the export (from models.csv) and of the study (from its calls) say the same.
    for source in (out, folder):
        report = tmp_path / f"report-{source.name}.html"
        result = CliRunner().invoke(main, ["report", str(source), "--out", str(report)])
        assert result.exit_code == 0, result.output
        html = report.read_text(encoding="utf-8")
        assert models_row(ARM, "davinci-002", "deterministic") in html, source
        assert SWAPPED not in html, source


def test_proactive_sessions_csv_leaves_the_model_empty_for_a_session_that_asked_none(tmp_path, model_url):
    # A MindCopilot study: creative-low gives ghost text; ARM's writers have the Tab list (L0).
    folder = a_study(tmp_path, model_url, **{'name = "creative-low"\n': 'name = "creative-low"\nparadigm = "L1"\n'})
    swapped_after_a_session_that_never_asked(folder)
    out = tmp_path / "proactive"

    result = CliRunner().invoke(main, ["export", str(folder), "--format", "proactive", "--out", str(out)])

    assert result.exit_code == 0, result.output
    rows = by_worker(folder, out / "sessions.csv")
    assert {worker: (r["condition"], r["paradigm"], r["model"], r["answered_model"]) for worker, r in rows.items()} == {
        "A1NOCALLWRITER": (ARM, "L0", "", ""),
        "A2ASKEDWRITER": (ARM, "L0", "davinci-002", "deterministic"),
    }
    report = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(out), "--out", str(report)])
    assert result.exit_code == 0, result.output
    html = report.read_text(encoding="utf-8")
    assert models_row(ARM, "davinci-002", "deterministic") in html and SWAPPED not in html


def test_models_csv_keeps_the_model_of_a_session_whose_arm_became_a_control_arm(tmp_path, model_url):
    """The arm's writers had the Tab list; study.toml then makes it a control arm under the same
    name. Its session ran with a model, and models.csv (like metadata.csv) says so."""
    folder = a_study(tmp_path, model_url)
    serve_one(folder, "A1ASKEDWRITER", asks=True)
    change_arm(folder, ARM_SETTINGS, 'paradigm = "none"\n')
    assert config.load(folder).condition(ARM).paradigm == "none"
    out = tmp_path / "out"

    result = CliRunner().invoke(main, ["export", str(folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    (metadata,) = by_worker(folder, out / "metadata.csv").values()
    assert (metadata["condition"], metadata["paradigm"]) == (ARM, "L0")
    (row,) = by_worker(folder, out / "models.csv").values()
    assert (row["condition"], row["model"], row["answered_model"]) == (ARM, "davinci-002", "deterministic")


def asked_again_with(folder, worker: str, model: str) -> None:
    """`worker`'s session asks once more, with `model`: study.toml swapped the model and the
    server restarted while they wrote (the call as the server stores it, but for its model)."""
    engine = make_engine(config.load(folder).database_url)
    with writing(engine) as connection:
        (session,) = [s for s in session_store.all_sessions(connection) if s["worker_id"] == worker]
        call = dict(connection.execute(suggestion_requests.select().where(
            suggestion_requests.c.session_id == session["session_id"])).mappings().first())  # fmt: skip
        sent = {**json.loads(call.pop("parameters")), "model": model}
        call.pop("id")
        connection.execute(suggestion_requests.insert().values(**call, parameters=json.dumps(sent)))
    engine.dispose()


def test_a_session_that_asked_two_models_has_both_and_the_report_names_each_once(tmp_path, model_url):
    folder = a_study(tmp_path, model_url)
    serve_one(folder, "A1ASKEDWRITER", asks=True)
    serve_one(folder, "A2TWOMODELSWRITER", asks=True)
    asked_again_with(folder, "A2TWOMODELSWRITER", SWAPPED)
    out = tmp_path / "out"

    result = CliRunner().invoke(main, ["export", str(folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    rows = by_worker(folder, out / "models.csv")
    assert {worker: r["model"] for worker, r in rows.items()} == {
        "A1ASKEDWRITER": "davinci-002", "A2TWOMODELSWRITER": f"davinci-002; {SWAPPED}"}
    for source in (out, folder):  # the export's models.csv, and the study's calls
        report = tmp_path / f"report-{source.name}.html"
        result = CliRunner().invoke(main, ["report", str(source), "--out", str(report)])
        assert result.exit_code == 0, result.output
        assert models_row(ARM, f"davinci-002; {SWAPPED}", "deterministic") in report.read_text(encoding="utf-8"), source
