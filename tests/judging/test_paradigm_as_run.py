"""A researcher changes an arm's paradigm in study.toml under the same name after its texts were
judged: `study judging export` still names each rated session's paradigm as it ran, and refuses,
naming the arm, where a session did not store the paradigm it ran with."""

from __future__ import annotations

import csv
import time

from click.testing import CliRunner
from sqlalchemy import update

from study import config
from study.cli import main
from study.store import create_tables, make_engine, writing
from study.store.db import sessions
from study.store.judging import judging_items, judging_ratings, judging_tasks
from tests.export.test_paradigm_changed_under_its_name import _set_paradigm
from tests.judging.finished import finish_sessions, set_section

TEXTS = ["The tide came in.", "The lamp went out.", "A gull sat on the rail.", "Fog hid the rocks.",
         "The keeper wound the clock.", "Rain on the glass.", "A bell rang twice.", "The boat came home."]


def _judged(folder) -> tuple[config.Study, list[str]]:
    """Eight finished sessions (two per arm), each text rated once by one judge in a submitted task."""
    set_section(folder, "judging", {"unit": "document", "k": 1, "items_per_task": 8, "reward": "$0.60"})
    study = config.load(folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    ids = finish_sessions(engine, study, TEXTS)
    now = time.time()
    with writing(engine) as connection:
        connection.execute(judging_tasks.insert().values(task_id="T1", pass_no=0, number=0, judge="AJUDGE0",
                                                         claimed_at=now, submitted_at=now))  # fmt: skip
        for number, session_id in enumerate(ids):
            item = f"I{number}"
            connection.execute(judging_items.insert().values(item_id=item, session_id=session_id, unit="document",
                                                             position=0, text=TEXTS[number], created_at=now))  # fmt: skip
            connection.execute(judging_ratings.insert().values(task_id="T1", item_id=item, score=4, rated_at=now))
    engine.dispose()
    return study, ids


def test_the_ratings_name_the_paradigm_each_session_ran_with(study_folder, tmp_path):
    study, ids = _judged(study_folder)
    arm = study.conditions[0]
    assert arm.paradigm != "L1"
    _set_paradigm(study_folder, arm.name, "L1")  # ghost text from now on, under the same name

    out = tmp_path / "ratings"
    result = CliRunner().invoke(main, ["judging", "export", str(study_folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    ratings = list(csv.DictReader((out / "judging_ratings.csv").open()))
    of_arm = [r for r in ratings if r["condition"] == arm.name]
    assert of_arm and {r["paradigm"] for r in of_arm} == {arm.paradigm}
    per_session = list(csv.DictReader((out / "judging_sessions.csv").open()))
    assert {r["paradigm"] for r in per_session if r["condition"] == arm.name} == {arm.paradigm}


def test_a_rated_session_without_its_paradigm_in_an_arm_that_changed_is_refused(study_folder, tmp_path):
    study, ids = _judged(study_folder)
    arm = study.conditions[0]
    mine = ids[:: len(study.conditions)]
    assert len(mine) > 1
    engine = make_engine(study.database_url)
    with writing(engine) as connection:  # as a session begun before the paradigm was stored
        connection.execute(update(sessions).where(sessions.c.session_id == mine[0]).values(paradigm=None))
    engine.dispose()
    _set_paradigm(study_folder, arm.name, "L1")

    out = tmp_path / "ratings"
    result = CliRunner().invoke(main, ["judging", "export", str(study_folder), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert (f"the entry with name = '{arm.name}' says paradigm = 'L1', but 1 stored session(s) of it ran "
            f"with '{arm.paradigm}'") in result.output  # fmt: skip
    assert not (out / "judging_ratings.csv").exists()
