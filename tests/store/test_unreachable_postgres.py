"""A study's PostgreSQL that goes away while writers type (restarted, stopped, the network
between): a real `study serve` answers the writer's event batch and a new participant's page
503, which the editor retries with its events kept, and logs the database, what happened and the
fix in one line, never a traceback per request nor the password; once PostgreSQL answers again
the browser's resend is stored and nothing acknowledged is lost. The server reaches PostgreSQL
through a forwarder the test closes, as a restart or a network cut looks from the server."""

from __future__ import annotations

import sys
import time

import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.scale.browser import Browser, start_writing
from tests.scale.servers import ServerProcess, free_port
from tests.store.conftest import empty_database
from tests.store.forwarder import Forwarder

pytestmark = pytest.mark.postgres


def _stored(url: str, session_id: str) -> set[int]:
    address = make_url(url)
    with psycopg.connect(host=address.host, port=address.port, user=address.username,
                         dbname=address.database) as connection:  # fmt: skip
        return {seq for (seq,) in connection.execute("SELECT seq FROM events WHERE session_id = %s", (session_id,))}


def test_a_postgresql_that_goes_away_is_answered_503_with_the_fix_and_loses_nothing(study_folder, tmp_path, postgres_url):
    empty_database(postgres_url).dispose()
    address = make_url(postgres_url)
    forwarder = Forwarder(address.host, address.port)
    forwarder.mend()
    # A password in the URL (the throwaway cluster trusts every local connection and ignores it):
    # the log must not show it.
    served = address.set(port=forwarder.port, password="Hunter2-not-to-be-logged").render_as_string(hide_password=False)
    toml = study_folder / "study.toml"
    text = toml.read_text()
    start = text.index("\ndatabase = ")
    toml.write_text(text[:start] + f'\ndatabase = "{served}"' + text[text.index("\n", start + 1):])
    port = free_port()
    server = ServerProcess([sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port),
                            "--workers", "1"], port, tmp_path / "server.log")  # fmt: skip
    server.start()
    try:
        client = httpx.Client(base_url=server.url, timeout=10)
        browser = Browser(client, start_writing(client, "restart-1"))
        browser.typed("Stored before the restart. ")

        forwarder.cut()
        browser.type("Typed while PostgreSQL was away.")
        refused = client.post(f"/api/sessions/{browser.session_id}/events", json={"events": browser.pending})
        page = client.get("/task?access_code=restart-2")

        forwarder.mend()
        for _ in range(50):  # as the editor's outbox: resent until acknowledged
            if not browser.pending:
                break
            if not browser.send():
                time.sleep(0.1)
    finally:
        server.stop()
        forwarder.cut()
    log = server.log_text()

    assert refused.status_code == 503, refused.text
    assert "your work is kept" in refused.json()["error"]
    assert page.status_code == 503 and "try again in a few minutes" in page.text
    assert f"cannot reach the study's database postgresql+psycopg://{address.username}:***@" in log
    assert f"pg_isready -h {address.host} -p {forwarder.port}" in log
    assert "Traceback" not in log
    assert "Hunter2-not-to-be-logged" not in log
    assert browser.acked <= _stored(postgres_url, browser.session_id)
    assert len(browser.acked) == browser.seq
