"""`study simulate` in a within-subjects study: each simulated writer writes in every arm of
their list, in their Latin-square row's order, following the completion page's link to the
next part, so a pilot exercises the design and its release pairs each writer's arms."""

from __future__ import annotations

import csv
from collections import defaultdict

from click.testing import CliRunner
from sqlalchemy import select

from study import config
from study.cli import main, write_study_files
from study.server.within import latin_square
from study.simulate.coverage import default_writers, scope
from study.store import make_engine, reading
from study.store import sessions as session_store
from study.store.simulated import simulated_sessions
from tests.conftest import CONTACT
from tests.report.conftest import Tables
from tests.server.study_edits import keep_prompts

ARMS = ["no-ai", "next-sentence", "next-paragraph"]  # the dhillon design, in study.toml order


def _dhillon(tmp_path):
    folder = tmp_path / "dhillon"
    write_study_files(folder, design="dhillon", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    return folder


def test_each_simulated_writer_writes_in_every_arm_in_their_row_s_order(tmp_path, suggestion_model):
    folder = _dhillon(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["simulate", str(folder), "--writers", "3",
                                  "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "9 simulated session(s) finished, 0 stopped" in result.output

    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        sessions = session_store.all_sessions(connection)
        marked = {row.session_id for row in connection.execute(select(simulated_sessions))}
    engine.dispose()
    assert len(sessions) == 9 and all(s["stage"] == "complete" for s in sessions)
    assert marked == {s["session_id"] for s in sessions}
    orders = defaultdict(list)
    for s in sorted(sessions, key=lambda s: s["created_at"]):
        orders[s["access_code"]].append(s["condition"])
    # Three writers, the first three rows of Williams' design: every arm once per writer, once
    # per position (the next three writers would take their mirror images).
    assert sorted(orders.values()) == sorted([ARMS[i] for i in row] for row in latin_square(3)[:3])

    # The release pairs them: each writer's pseudonym has a session in every arm.
    from study.release.keys import init_keyfile

    (tmp_path / "keys").mkdir()
    key = init_keyfile(tmp_path / "keys" / "study.key")
    out = tmp_path / "releases"
    built = runner.invoke(main, ["release", "build", str(folder), "--version", "1.0.0",
                                 "--out", str(out), "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert built.exit_code == 0, built.output
    rows = list(csv.DictReader(open(out / "dhillon-1.0.0" / "metadata.csv", encoding="utf-8")))
    arms_of = defaultdict(set)
    for row in rows:
        arms_of[row["worker_id"]].add(row["condition"])
    assert len(arms_of) == 3 and all(arms == set(ARMS) for arms in arms_of.values())

    # And the study's report sets each writer's arms next to each other.
    report = tmp_path / "report.html"
    assert runner.invoke(main, ["report", str(folder), "--out", str(report)]).exit_code == 0
    tables = Tables(report.read_text(encoding="utf-8"))
    assert tables.rows("within")["all"][3:] == ["3", "3", "0"]  # began, completed every arm, part-way
    paired = tables.rows("within", 1)
    assert [paired[f"{later} - {earlier}"][0] for earlier, later in
            (("no-ai", "next-sentence"), ("no-ai", "next-paragraph"), ("next-sentence", "next-paragraph"))] == ["3"] * 3
    assert {row[0] for arms, row in tables.rows("arms", 1).items() if arms != "arms"} == {"paired"}


def test_a_within_subjects_pilot_is_whole_latin_squares_of_writers_by_default(tmp_path):
    study = config.load(_dhillon(tmp_path))
    writers = default_writers(study, scope(study))
    assert writers % 6 == 0  # every row of Williams' design for three arms (six rows) as often
    assert writers * 3 >= len(study.prompts)  # a session for every prompt


def test_a_within_subjects_pilot_with_few_prompts_still_takes_every_row_of_an_odd_square(tmp_path):
    # Three arms and three prompts: one writer per prompt would do, but the six rows of Williams'
    # design for three arms (each and its mirror image) need six writers to balance carry-over.
    folder = _dhillon(tmp_path)
    keep_prompts(folder, 3)
    study = config.load(folder)
    assert default_writers(study, scope(study)) == 6


def test_with_arms_in_two_genres_a_simulated_writer_writes_in_every_arm_of_both(tmp_path, suggestion_model):
    # `study init`'s four conditions (two per genre) assigned within subjects: once a writer's
    # arms of one genre are written, the completion page offers another session, whose prompt
    # page lists the other genre's prompts only (study.server.within.open_genres).
    folder = tmp_path / "two-genres"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    toml = folder / config.CONFIG_NAME
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[design]\nassignment = "within"\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "2",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "8 simulated session(s) finished, 0 stopped" in result.output
    study = config.load(folder)
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        sessions = session_store.all_sessions(connection)
    engine.dispose()
    arms_of = defaultdict(list)
    for s in sessions:
        arms_of[s["access_code"]].append(s["condition"])
    assert len(arms_of) == 2
    assert all(sorted(arms) == sorted(c.name for c in study.conditions) for arms in arms_of.values())


def test_a_within_subjects_pilot_smaller_than_a_square_names_the_rows_no_writer_took(tmp_path, suggestion_model):
    """Two writers write every arm, in two of the six orders of Williams' design over three arms:
    the run named the prompts it left out but not the orders, which more writers would pilot."""
    folder = _dhillon(tmp_path)
    result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "2",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert ("No writer yet has written every arm in Latin-square rows of 'creative': 2, 3, 4, 5 (of 6). "
            "Run more writers (--writers; whole squares use every row as often) to pilot them.") in result.output  # fmt: skip
    # The next four writers take the other rows: the square is whole.
    again = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "4",
                                      "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert "Latin-square rows" not in again.output, again.output
