"""A study's PostgreSQL database that stops taking writes while writers type (the cluster set
read-only, a standby after a failover): a real `study serve` answers the writer's event batch
503, which the editor retries, and logs the database, the cause and the fix in one line, not a
traceback. Its event batches are written on psycopg itself (study.store.group_commit), so the
driver's own error reaches the server unwrapped."""

from __future__ import annotations

import sys

import httpx
import pytest
from sqlalchemy.engine import make_url

from tests.scale.browser import Browser, start_writing
from tests.scale.servers import ServerProcess, free_port
from tests.store.conftest import empty_database

pytestmark = pytest.mark.postgres


def _serve(study_folder, tmp_path, url: str) -> ServerProcess:
    toml = study_folder / "study.toml"
    text = toml.read_text()
    start = text.index("\ndatabase = ")
    end = text.index("\n", start + 1)
    toml.write_text(text[:start] + f'\ndatabase = "{url}"' + text[end:])
    port = free_port()
    server = ServerProcess([sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port),
                            "--workers", "1"], port, tmp_path / "server.log")  # fmt: skip
    server.start()
    return server


def test_a_read_only_postgresql_refuses_event_batches_with_the_database_and_the_fix(study_folder, tmp_path, postgres_url):
    empty_database(postgres_url).dispose()
    server = _serve(study_folder, tmp_path, postgres_url)
    try:
        client = httpx.Client(base_url=server.url, timeout=10)
        browser = Browser(client, start_writing(client, "standby-1"))
        browser.type("Stored before the failover. ")
        while browser.pending:
            assert browser.send()
    finally:
        server.stop()

    # The same database, every transaction read-only: as a standby takes them.
    read_only = make_url(postgres_url).update_query_dict({"options": "-c default_transaction_read_only=on"})
    server = _serve(study_folder, tmp_path, read_only.render_as_string(hide_password=False))
    try:
        client = httpx.Client(base_url=server.url, timeout=10)
        browser.client = client
        browser.type("Typed after it.")
        refused = client.post(f"/api/sessions/{browser.session_id}/events", json={"events": browser.pending})
    finally:
        server.stop()
    log = server.log_text()

    assert refused.status_code == 503, refused.text
    assert "your work is kept" in refused.json()["error"]
    assert "cannot write the study's database postgresql+psycopg://" in log
    assert "it takes no writes" in log and "Fix: " in log
    assert "Traceback" not in log
