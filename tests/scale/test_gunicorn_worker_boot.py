"""A gunicorn of the README's recipe whose worker boots while PostgreSQL does not answer (a
worker recycled or killed during a restart or a failover) waits for it and boots, with a line in
the log naming the database (password hidden) and that it waits, where gunicorn's master halted
the whole server ("Worker failed to boot") and every writer lost it. A database that answers
but refuses the study (a wrong password, a missing database) still fails the boot at once, with
its fix. gunicorn reaches PostgreSQL through a forwarder the test cuts and mends."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.store.conftest import password_database  # noqa: F401 - the fixture
from tests.store.forwarder import Forwarder

from .browser import Browser, start_writing
from .conftest import new_postgres_database  # noqa: F401 - the fixture
from .test_gunicorn_config import gunicorn

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

WAITS = "does not answer"
PASSWORD = "Hunter2-not-to-be-logged"


def served_from(study_folder: Path, url: str) -> None:
    toml = study_folder / "study.toml"
    toml.write_text(toml.read_text().replace('database = ""', f'database = "{url}"', 1))


def until(found, server, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not found():
        assert server.process.poll() is None, f"gunicorn exited before {what}:\n{server.log_text()}"
        assert time.monotonic() < deadline, f"never {what}:\n{server.log_text()}"
        time.sleep(0.1)


def stored(url: str, session_id: str) -> set[int]:
    address = make_url(url)
    with psycopg.connect(host=address.host, port=address.port, user=address.username,
                         dbname=address.database) as connection:  # fmt: skip
        return {seq for (seq,) in connection.execute("SELECT seq FROM events WHERE session_id = %s", (session_id,))}


def test_a_worker_killed_while_postgresql_restarts_waits_for_it_and_gunicorn_goes_on_serving(
    study_folder, new_postgres_database, tmp_path  # noqa: F811
):
    address = make_url(new_postgres_database)
    forwarder = Forwarder(address.host, address.port)
    forwarder.mend()
    # A password in the URL (the throwaway cluster trusts local connections and ignores it).
    served_from(study_folder, address.set(port=forwarder.port, password=PASSWORD).render_as_string(hide_password=False))
    server = gunicorn(study_folder, tmp_path / "gunicorn.log", "-w", "1")
    server.start(timeout=60)
    try:
        client = httpx.Client(base_url=server.url, timeout=10)
        browser = Browser(client, start_writing(client, "boot-1"))
        browser.typed("Stored before the restart. ")
        (worker,) = re.findall(r"Booting worker with pid: (\d+)", server.log_text())

        forwarder.cut()
        os.kill(int(worker), signal.SIGKILL)  # as max_requests or the OOM killer ends one
        until(lambda: WAITS in server.log_text(), server, "the new worker waited")
        browser.type("Typed while PostgreSQL restarted.")
        forwarder.mend()
        until(lambda: browser.send() and not browser.pending, server, "the writer's events were stored")
        alive = server.process.poll() is None
    finally:
        server.stop()
        forwarder.cut()
    log = server.log_text()

    assert alive, log
    assert "Worker failed to boot" not in log
    assert f"the study's database postgresql+psycopg://{address.username}:***@127.0.0.1:{forwarder.port}/" in log
    assert "Waiting up to 60 s for it" in log
    assert PASSWORD not in log
    assert browser.acked <= stored(new_postgres_database, browser.session_id)
    assert len(browser.acked) == browser.seq


@pytest.mark.parametrize("refused", ["wrong password", "missing database"])
def test_a_postgresql_that_refuses_the_study_still_stops_gunicorn_at_once_with_the_fix(
    study_folder, password_database, tmp_path, refused  # noqa: F811
):
    url, password = password_database
    if refused == "wrong password":
        url, expected = url.set(password="not-" + password), "Fix: correct the password in [study] database"
    else:
        url, expected = url.set(database="no_such_study"), "Fix: create it (createdb"
    served_from(study_folder, url.render_as_string(hide_password=False))
    server = gunicorn(study_folder, tmp_path / "gunicorn.log", "-w", "1")
    server.launch()
    try:
        # Well within the wait a database that does not answer gets.
        server.process.wait(timeout=30)
    finally:
        server.stop()
    log = server.log_text()

    assert server.process.returncode != 0
    assert expected in log and "Worker failed to boot" in log
    assert WAITS not in log
