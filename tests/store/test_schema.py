"""study.store.schema.create_tables: processes started together on a new study database all find
their tables (a launch's `study serve` processes, a status command beside them)."""

from __future__ import annotations

import subprocess
import sys
import time

from sqlalchemy import inspect

from study.store import make_engine
from study.store.db import metadata

# Each process loads everything first, says so, then creates the tables once told to go, so
# that all of them look for the tables at the same moment.
CHILD = """
import pathlib, sys, time
from study.store import create_tables, make_engine
engine = make_engine(sys.argv[1])
folder = pathlib.Path(sys.argv[2])
(folder / f"ready-{sys.argv[3]}").touch()
while not (folder / "go").exists():
    time.sleep(0.0005)
create_tables(engine)
"""


def test_four_processes_started_together_on_a_new_sqlite_database_all_find_their_tables(tmp_path):
    url = f"sqlite:///{tmp_path / 'study.db'}"
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD, url, str(tmp_path), str(n)], stderr=subprocess.PIPE, text=True)
        for n in range(4)
    ]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("ready-*"))) < len(children) and time.monotonic() < deadline:
        time.sleep(0.01)
    (tmp_path / "go").touch()
    errors = [child.communicate(timeout=60)[1] for child in children]  # read to the end: none blocks on a full pipe
    assert [error for child, error in zip(children, errors) if child.returncode != 0] == []

    engine = make_engine(url)
    assert set(inspect(engine).get_table_names()) >= {table.name for table in metadata.sorted_tables}
    engine.dispose()


def test_a_database_made_before_missing_events_opens_and_keeps_its_sessions(engine):
    # A study database from before sessions.missing_events (declared NOT NULL, default 0), holding
    # a session: starting the new version adds the column, and the session reads as nothing lost.
    from study.store import create_tables, reading, writing
    from study.store import sessions as session_store

    with writing(engine) as connection:
        connection.exec_driver_sql("ALTER TABLE sessions DROP COLUMN missing_events")
        connection.exec_driver_sql(
            "INSERT INTO sessions (session_id, stage, created_at, final_text)"
            " VALUES ('0123456789abcdef0123456789abcdef', 'complete', 1800000000.0, 'Once upon a time.')"
        )
    create_tables(engine)
    create_tables(engine)  # and again, finding it there
    with reading(engine) as connection:
        session = session_store.get(connection, "0123456789abcdef0123456789abcdef")
    assert (session["final_text"], session["missing_events"]) == ("Once upon a time.", 0)


# Every module of the toolkit imported, then the tables declared on the store's metadata.
EVERY_MODULE = """
import importlib, pkgutil, study
for found in pkgutil.walk_packages(study.__path__, "study."):
    if not found.name.endswith(("__main__", "wsgi")):  # a CLI run; a gunicorn entry needing STUDY_DIR
        importlib.import_module(found.name)
from study.store.db import metadata
print("\\n".join(metadata.tables))
"""

ONLY_THE_STORE = """
import sqlite3, sys
from study.store import create_tables, make_engine
from study.store.db import metadata
create_tables(make_engine(sys.argv[1]))
print("\\n".join(metadata.tables))
print("--")
print("\\n".join(row[0] for row in sqlite3.connect(sys.argv[2]).execute("SELECT name FROM sqlite_master WHERE type = 'table'")))
"""


def test_a_process_that_imports_only_the_store_creates_every_table_the_toolkit_declares(tmp_path):
    # Each area declares its tables in its own module (study.store.review_tables, chat_tables,
    # surveys, ...). A server or `study copy-database` may have imported no more than study.store
    # when it creates or copies the tables: a table whose module the store does not import itself
    # would be missing from a new database, and left behind by a copy.
    def run(code: str, *args: str) -> str:
        done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    declared = run(EVERY_MODULE).split()
    listed, created = run(ONLY_THE_STORE, f"sqlite:///{tmp_path / 'study.db'}", str(tmp_path / "study.db")).split("--")
    assert listed.split() == declared  # the same tables, in the same order
    assert sorted(created.split()) == sorted(declared)
