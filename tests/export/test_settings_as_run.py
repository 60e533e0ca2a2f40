"""metadata.csv gives each session the decoding settings it ran with (its model calls' parameters,
else its log), never study.toml's of the day of the export: a researcher who raises a
condition's temperature between sessions, keeping its name, and exports sessions whose logs
record no settings finds their calls' values, or an empty cell where nothing recorded one."""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner
from sqlalchemy import select, update

from study import config
from study.cli import main
from study.config_types import HIDDEN_CONTROLS
from study.store import make_engine, writing
from study.store.db import events
from tests.export.served_as_run import a_study, change_arm, serve_one


def forget_log_settings(folder) -> None:
    """Every stored record's decoding settings empty, as in a log that records none (the page
    left them empty and nothing filled them in)."""
    engine = make_engine(config.load(folder).database_url)
    with writing(engine) as connection:
        stored = connection.execute(select(events.c.session_id, events.c.seq, events.c.record)).all()
        for session_id, seq, record in stored:
            blank = json.dumps({**json.loads(record), **{key: "" for key in HIDDEN_CONTROLS}})
            mine = (events.c.session_id == session_id) & (events.c.seq == seq)
            connection.execute(update(events).where(mine).values(record=blank))
    engine.dispose()


def served(folder) -> None:
    """The three sessions of `creative-high` (temperature 0.75, frequency penalty 1): the first
    two stored with logs that record no settings, the first with no model call, the second with
    one; then study.toml raises it to 0.9 and 0.5, and a third session runs with that."""
    serve_one(folder, "A1NOCALLWRITER", asks=False)
    serve_one(folder, "A2ASKEDWRITER", asks=True)
    forget_log_settings(folder)
    change_arm(folder, "temperature = 0.75", "temperature = 0.9")
    change_arm(folder, "frequency_penalty = 1", "frequency_penalty = 0.5")
    serve_one(folder, "A3LATERWRITER", asks=False)


def test_metadata_gives_each_session_the_settings_it_ran_with_and_nothing_where_nothing_recorded_them(tmp_path, model_url):
    folder = a_study(tmp_path, model_url)
    served(folder)
    out = tmp_path / "out"

    result = CliRunner().invoke(main, ["export", str(folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    with open(out / "metadata.csv", newline="") as handle:
        rows = {row["worker_id"]: row for row in csv.DictReader(handle)}
    ran = {worker: (row["condition"], row["temperature"], row["frequency_penalty"]) for worker, row in rows.items()}
    assert ran == {
        "A1NOCALLWRITER": ("creative-high", "", ""),  # nothing stored says: not study.toml's 0.9
        "A2ASKEDWRITER": ("creative-high", "0.75", "1"),  # what its call was sent with
        "A3LATERWRITER": ("creative-high", "0.9", "0.5"),  # its log, as the server filled it in
    }
