"""`study serve` says, once at its start, what `study mturk post` says of the preregistration
record (study.plan.launch); a warning only: a study already running starts all the same."""

from __future__ import annotations

from click.testing import CliRunner

from study import config
from study.cli import main
from study.server import serving
from study.store import create_tables, make_engine
from tests.judging.finished import finish_sessions
from tests.plan.conftest import edit


def _serve(folder, monkeypatch):
    served = []
    monkeypatch.setattr(serving, "run", lambda app, **options: served.append(app))
    result = CliRunner().invoke(main, ["serve", str(folder)])
    assert result.exit_code == 0, result.output
    assert len(served) == 1  # it started
    return result


def test_serving_warns_of_a_missing_record_and_of_a_study_changed_since_it(planned, monkeypatch):
    first = _serve(planned, monkeypatch)
    assert first.stderr.count("has no preregistration record") == 1
    assert f"Fix: study preregister {planned} (before anyone starts)" in first.stderr
    assert "Serving '" in first.stdout

    assert CliRunner().invoke(main, ["preregister", str(planned)]).exit_code == 0
    assert "preregistration" not in _serve(planned, monkeypatch).stderr

    edit(planned, lambda data: data["session"].update(min_seconds=120))
    changed = _serve(planned, monkeypatch)
    assert "differs from its preregistration record in 1 place(s) (session.min_seconds: 0 -> 120)" in changed.stderr
    assert "Fix: undo the change before serving participants" in changed.stderr


def test_a_study_running_without_a_record_still_starts_and_is_not_sent_to_a_record_too_late(planned, monkeypatch):
    study = config.load(planned)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, ["An early writer's story."])
    engine.dispose()
    restarted = _serve(planned, monkeypatch)
    assert "has no preregistration record, and 1 participant session(s) have already started" in restarted.stderr
    assert "study preregister" not in restarted.stderr
