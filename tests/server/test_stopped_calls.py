"""Model calls left without an outcome by a server process that stopped mid-call (kill -9, the
out-of-memory killer; study.server.model_calls.settle_stopped_calls, study.server.serving_process):
a process of the same host settles them as soon as it finds every slot taken, so a crash does
not refuse every suggestion for the time window; a call of another host, or of a process still
running, keeps its slot. tests/scale/test_killed_worker.py kills a real `study serve` worker."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

from sqlalchemy import insert, select

from study import config
from study.server import create_app, serving_process
from study.server.model_calls import NO_OUTCOME, SERVER_STOPPED, in_flight_seconds, settle_stopped_calls
from study.store import create_tables, reading, writing
from study.store.db import suggestion_requests
from tests.server.flow import start, to_writing


def _stopped_process() -> str:
    """A process of this host that ran and was killed, named as a model call's row names one."""
    process = subprocess.Popen(["sleep", "60"])
    started = Path(f"/proc/{process.pid}/stat").read_text().rpartition(")")[2].split()[19]
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return f"{process.pid}:{started}"


def _app_with_one_slot(study_folder, endpoint):
    """The study asking `endpoint`, with one model-call slot for the whole study."""
    toml = study_folder / "study.toml"
    text = toml.read_text().replace('endpoint = ""', f'endpoint = "{endpoint.url}"', 1)
    text, found = re.subn(r"(?m)^concurrent_requests = .*$", "concurrent_requests = 1", text)
    toml.write_text(text if found else text.replace("[suggestions]\n", "[suggestions]\nconcurrent_requests = 1\n", 1))
    app = create_app(config.load(study_folder))
    client = app.test_client()
    session_id = start(client, access_code="writer-1")
    to_writing(client, session_id, prompt="news")
    return app, client, session_id


def _call_in_flight(app, host: str | None, process: str | None, *, seconds_ago: float = 0) -> int:
    with writing(app.extensions["study.engine"]) as connection:
        return connection.execute(insert(suggestion_requests).values(
            session_id="0" * 32, created_at=time.time() - seconds_ago, condition="gpt3", model="m", parameters="{}",
            raw="[]", suggestions="[]", error=NO_OUTCOME, server_host=host, server_process=process,
        )).inserted_primary_key[0]  # fmt: skip


def _outcome(app, request_id: int) -> str | None:
    with reading(app.extensions["study.engine"]) as connection:
        return connection.execute(
            select(suggestion_requests.c.error).where(suggestion_requests.c.id == request_id)
        ).scalar_one()


def _ask(client, session_id: str) -> int:
    return client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "Once upon a time"}).status_code


def test_a_call_of_a_killed_process_of_this_host_frees_its_slot_at_once(study_folder, endpoint_factory):
    endpoint = endpoint_factory()
    app, client, session_id = _app_with_one_slot(study_folder, endpoint)
    left = _call_in_flight(app, serving_process.this_host(), _stopped_process())

    # Counted until its window passed (2 x timeout + 10 s), the row took the study's one slot.
    assert _ask(client, session_id) == 200
    assert endpoint.calls == 1
    assert _outcome(app, left) == SERVER_STOPPED


def test_a_stopped_call_past_its_window_is_left_as_it_was(study_folder, endpoint_factory):
    # Past its window a row holds no slot: the look for stopped processes (on every refusal for
    # want of a slot, once a second) reads the window's rows only, not a long study's whole table.
    endpoint = endpoint_factory()
    app, client, session_id = _app_with_one_slot(study_folder, endpoint)
    window = in_flight_seconds(app.extensions["study"])
    old = _call_in_flight(app, serving_process.this_host(), _stopped_process(), seconds_ago=window + 5)
    assert settle_stopped_calls(app.extensions["study.engine"], app.extensions["study"]) == 0
    assert _outcome(app, old) == NO_OUTCOME
    assert _ask(client, session_id) == 200


def test_a_call_of_another_host_or_of_a_running_process_keeps_its_slot(study_folder, endpoint_factory):
    endpoint = endpoint_factory()
    app, client, session_id = _app_with_one_slot(study_folder, endpoint)
    # Another host's processes cannot be seen from here: its rows keep the time window.
    elsewhere = _call_in_flight(app, "other-host boot 1 pids 2", _stopped_process())
    assert _ask(client, session_id) == 503
    with writing(app.extensions["study.engine"]) as connection:
        connection.execute(suggestion_requests.delete().where(suggestion_requests.c.id == elsewhere))
    # A call of this process itself is still being asked.
    running = _call_in_flight(app, serving_process.this_host(), serving_process.this_process().process)
    time.sleep(1.1)  # past the once-a-second look for stopped processes
    assert _ask(client, session_id) == 503
    assert endpoint.calls == 0
    assert _outcome(app, running) == NO_OUTCOME


def test_a_database_made_before_calls_named_their_process_gets_the_columns_and_keeps_the_window(
    study_folder, endpoint_factory
):
    endpoint = endpoint_factory()
    app, client, session_id = _app_with_one_slot(study_folder, endpoint)
    engine = app.extensions["study.engine"]
    with writing(engine) as connection:
        for column in ("server_host", "server_process"):
            connection.exec_driver_sql(f"ALTER TABLE suggestion_requests DROP COLUMN {column}")
        connection.exec_driver_sql(
            "INSERT INTO suggestion_requests (session_id, created_at, condition, model, parameters, raw,"
            f" suggestions, error) VALUES ('{'0' * 32}', {time.time()}, 'gpt3', 'm', '{{}}', '[]', '[]', ?)",
            (NO_OUTCOME,),
        )
    create_tables(engine)

    # The old row names no process, so nothing can tell it stopped: it keeps its window.
    assert _ask(client, session_id) == 503
    with reading(engine) as connection:
        rows = connection.execute(select(suggestion_requests.c.server_host, suggestion_requests.c.error)).all()
    assert rows == [(None, NO_OUTCOME)]
