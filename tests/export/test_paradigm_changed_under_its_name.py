"""A researcher changes an arm's paradigm in study.toml (L0 -> L1) and keeps its name: `study
serve` refuses while sessions begun with the old one are unfinished; metadata.csv, a release's
arms.json and its card describe each session by the paradigm it ran with; and a session that
did not store its paradigm (begun before it was stored) in an arm known to have changed is
refused by `study export`, naming the arm and the fix."""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner
from sqlalchemy import update

from study import config
from study.cli import main
from study.server import create_app, serving
from study.store import make_engine, reading, writing
from study.store import sessions as session_store
from study.store.db import sessions
from tests.release.test_contact import a_study, build, one_session
from tests.server.flow import finish, start, to_writing


def _set_paradigm(folder, name: str, paradigm: str) -> None:
    path = folder / "study.toml"
    text = path.read_text()
    at = text.index(f'name = "{name}"')
    end = text.find("[[conditions]]", at)
    end = len(text) if end < 0 else end
    block = text[at:end]
    if "paradigm = " in block:
        old = block[block.index("paradigm = "):].splitlines()[0]
        block = block.replace(old, f'paradigm = "{paradigm}"')
    else:
        block = block.replace(f'name = "{name}"', f'name = "{name}"\nparadigm = "{paradigm}"')
    path.write_text(text[:at] + block + text[end:])


def _stored(study) -> list[dict]:
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        found = session_store.all_sessions(connection)
    engine.dispose()
    return found


def test_serve_refuses_while_sessions_begun_with_the_arm_s_old_paradigm_are_unfinished(study_folder, monkeypatch):
    study = config.load(study_folder)
    client = create_app(study, suggestion_engine=object()).test_client()
    session_id = start(client)
    to_writing(client, session_id)
    (session,) = _stored(study)
    was = study.condition(session["condition"]).paradigm
    assert session["paradigm"] == was
    _set_paradigm(study_folder, session["condition"], "L1")
    served = []
    monkeypatch.setattr(serving, "run", lambda app, **options: served.append(app))
    result = CliRunner().invoke(main, ["serve", str(study_folder)])
    assert result.exit_code != 0 and served == []
    assert (f"the entry with name = '{session['condition']}' says paradigm = 'L1', but 1 session(s) not yet "
            f"complete began with paradigm = '{was}'") in result.output  # fmt: skip
    assert f'Fix: restore paradigm = "{was}"' in result.output


def test_metadata_and_the_release_describe_sessions_by_the_paradigm_they_ran_with(tmp_path):
    folder = a_study(tmp_path, declared=True)
    one_session(folder, " The lighthouse keeper counted the ships.")
    study = config.load(folder)
    (session,) = _stored(study)
    arm, was = session["condition"], study.condition(session["condition"]).paradigm
    assert was != "L1"
    _set_paradigm(folder, arm, "L1")  # ghost text from now on, under the same name

    out = tmp_path / "export"
    result = CliRunner().invoke(main, ["export", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    (row,) = csv.DictReader((out / "metadata.csv").open())
    assert row["paradigm"] == was
    # Its log is checked as the paradigm it ran with, not as ghost text's.
    checked = CliRunner().invoke(main, ["curate", "validate", str(folder)])
    assert checked.exit_code == 0, checked.output

    result, directory, _ = build(folder, tmp_path)
    assert result.exit_code == 0, result.output
    arms = {a["name"]: a["paradigm"] for a in json.loads((directory / "arms.json").read_text())["arms"]}
    assert arms[arm] == was
    (released,) = csv.DictReader((directory / "metadata.csv").open())
    assert released["paradigm"] == was


def test_a_session_without_its_paradigm_in_an_arm_that_changed_is_refused_naming_the_arm(client, study_folder, tmp_path):
    codes = ("lab-a", "lab-b", "lab-c", "lab-d")
    for code in codes:
        session_id = start(client, access_code=code)
        to_writing(client, session_id, prompt="shapeshifter")
        finish(client, session_id)
    study = config.load(study_folder)
    by_arm: dict[str, list[str]] = {}
    for session in _stored(study):
        by_arm.setdefault(session["condition"], []).append(session["session_id"])
    arm, ids = next((name, ids) for name, ids in sorted(by_arm.items()) if len(ids) > 1)
    was = study.condition(arm).paradigm
    engine = make_engine(study.database_url)
    with writing(engine) as connection:  # as a session begun before the paradigm was stored
        connection.execute(update(sessions).where(sessions.c.session_id == ids[0]).values(paradigm=None))
    engine.dispose()
    _set_paradigm(study_folder, arm, "L1")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert f"the entry with name = '{arm}' says paradigm = 'L1', but 1 stored session(s) of it ran with '{was}'" in result.output
    assert "1 stored session(s) of it began before each session's paradigm was stored" in result.output
    assert f'Fix: if they ran with \'{was}\', restore paradigm = "{was}"' in result.output
    assert not out.exists() or not any(out.iterdir())
