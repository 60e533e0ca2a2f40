"""Two `study serve` processes on one study database (and one Redis) keep one limit: the
new-session throttle per address, the study-wide model-call slots and the model calls per
minute count every process's requests (study.server.limit_store), and a limit store that does
not answer is named with the fix."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from sqlalchemy import func, select

from study.store import make_engine, reading, writing
from study.store.db import sessions, start_throttle

from .browser import start_writing
from .servers import ServerProcess, free_port

pytestmark = pytest.mark.slow

ADDRESS = {"X-Forwarded-For": "198.51.100.7"}  # one participant's address, via a trusted proxy


def configure(folder, endpoint_url: str = "", **keys) -> None:
    toml = folder / "study.toml"
    text = toml.read_text().replace('endpoint = ""', f'endpoint = "{endpoint_url}"', 1)
    for section_key, value in keys.items():
        section, key = section_key.split("__")
        text, found = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
        if not found:
            text = text.replace(f"[{section}]\n", f"[{section}]\n{key} = {value}\n", 1)
    toml.write_text(text)


def two_servers(folder, tmp_path, env: dict) -> list[ServerProcess]:
    """Two `study serve` processes started together, as a launch's hosts are."""
    servers = []
    for name in ("a", "b"):
        port = free_port()
        server = ServerProcess(
            [sys.executable, "-m", "study", "serve", str(folder), "--port", str(port), "--workers", "1"],
            port, tmp_path / f"server-{name}.log", env={"STUDY_TRUSTED_PROXIES": "1", **env},
        )
        server.launch()
        servers.append(server)
    try:
        for server in servers:
            server.wait_until_up()
    except RuntimeError:
        for server in servers:
            server.stop()
        raise
    return servers


@pytest.fixture
def stop_all():
    started = []
    yield started
    for servers in started:
        for server in servers:
            server.stop()


@pytest.mark.parametrize("store", ["database", "redis"])
def test_one_address_has_one_start_limit_across_two_servers(study_folder, tmp_path, request, stop_all, store):
    configure(study_folder, session__new_sessions_per_ip_per_hour=3)
    env = {"STUDY_REDIS_URL": request.getfixturevalue("redis_url")} if store == "redis" else {}
    servers = two_servers(study_folder, tmp_path, env)
    stop_all.append(servers)

    statuses = [
        httpx.get(f"{servers[i % 2].url}/task?access_code=bot-{i}", headers=ADDRESS).status_code
        for i in range(5)
    ]
    # Each server alone would have let 3 through: 6 in all.
    assert statuses == [302, 302, 302, 429, 429]
    other = httpx.get(f"{servers[1].url}/task?access_code=bot-9", headers={"X-Forwarded-For": "198.51.100.8"})
    assert other.status_code == 302


DATABASES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def database_keys(database: str, request) -> dict:
    """study.toml keys for `configure`: nothing for SQLite (study.db), else a new PostgreSQL database."""
    if database == "sqlite":
        return {}
    return {"study__database": f'"{request.getfixturevalue("new_postgres_database")}"'}


@pytest.mark.parametrize("database", DATABASES)
def test_model_call_slots_and_the_minute_cap_are_one_across_two_servers(study_folder, tmp_path, endpoint_factory, stop_all, database, request):
    endpoint = endpoint_factory(delay=1.5)
    configure(study_folder, endpoint.url, suggestions__concurrent_requests=1,
              suggestions__model_calls_per_minute=3, suggestions__max_requests_per_minute=10,
              **database_keys(database, request))  # fmt: skip
    servers = two_servers(study_folder, tmp_path, {})
    stop_all.append(servers)
    sessions = []
    for i, server in enumerate(servers):
        with httpx.Client(base_url=server.url, timeout=10) as client:
            sessions.append(start_writing(client, f"writer-{i}"))

    def ask(i: int) -> int:
        url = f"{servers[i % 2].url}/api/sessions/{sessions[i % 2]}/suggestions"
        return httpx.post(url, json={"doc": "Once upon a time"}, timeout=30).status_code

    with ThreadPoolExecutor(2) as pool:
        at_once = sorted(pool.map(ask, range(2)))
    # One slot for the study: the second server's request is refused while the first is asked.
    assert at_once == [200, 503]
    assert endpoint.calls == 1
    later = [ask(i) for i in range(3)]
    assert later == [200, 200, 429]  # three calls a minute for the study, whichever server
    assert endpoint.calls == 3


@pytest.mark.parametrize("database", DATABASES)
def test_one_sessions_requests_per_minute_are_one_limit_across_two_servers(study_folder, tmp_path, endpoint_factory, stop_all, database, request):
    endpoint = endpoint_factory()
    configure(study_folder, endpoint.url, suggestions__max_requests_per_minute=2,
              **database_keys(database, request))  # fmt: skip
    servers = two_servers(study_folder, tmp_path, {})
    stop_all.append(servers)
    with httpx.Client(base_url=servers[0].url, timeout=10) as client:
        session_id = start_writing(client, "writer-1")

    def ask(server) -> int:
        url = f"{server.url}/api/sessions/{session_id}/suggestions"
        return httpx.post(url, json={"doc": "Once upon a time"}, timeout=30).status_code

    # Each server alone would allow two a minute: the session gets two in all, then 429 on either.
    assert [ask(servers[i % 2]) for i in range(4)] == [200, 200, 429, 429]
    assert endpoint.calls == 2


def test_an_unreachable_redis_stops_study_serve_with_the_fix(study_folder):
    url = f"redis://127.0.0.1:{free_port()}/0"
    result = subprocess.run(
        [sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(free_port())],
        env={**os.environ, "STUDY_REDIS_URL": url}, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode != 0
    assert f"STUDY_REDIS_URL={url}: Redis does not answer" in result.stderr
    assert "unset STUDY_REDIS_URL" in result.stderr


@pytest.mark.parametrize("url", [
    "redis://:hunter2@127.0.0.1:{port}/0",
    "redis://127.0.0.1:{port}/0?password=hunter2",  # redis-py takes it from the query too
    "unix:///tmp/no-redis-{port}.sock?db=0&password=hunter2",  # a socket's only way to give one
])
def test_the_redis_password_is_never_printed_in_the_error(study_folder, url):
    url = url.format(port=free_port())
    result = subprocess.run(
        [sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(free_port())],
        env={**os.environ, "STUDY_REDIS_URL": url}, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode != 0
    assert "Redis does not answer" in result.stderr, result.stderr
    assert "hunter2" not in result.stderr and "***" in result.stderr, result.stderr


def test_a_redis_that_stops_refuses_new_sessions_and_says_why_in_the_log(study_folder, tmp_path, redis_url, stop_all):
    import redis

    servers = two_servers(study_folder, tmp_path, {"STUDY_REDIS_URL": redis_url})
    stop_all.append(servers)
    assert httpx.get(f"{servers[0].url}/task?access_code=a-1", headers=ADDRESS).status_code == 302
    try:
        redis.Redis.from_url(redis_url).shutdown(nosave=True)
    except redis.ConnectionError:
        pass  # the server closes the connection as it stops
    refused = httpx.get(f"{servers[0].url}/task?access_code=a-2", headers=ADDRESS)
    assert refused.status_code == 503
    assert "try again in a few minutes" in refused.text
    assert "STUDY_REDIS_URL" in servers[0].log_text() and "Redis does not answer" in servers[0].log_text()


@pytest.mark.postgres
def test_a_burst_of_starts_from_one_address_on_two_hosts_with_postgresql_gets_exactly_the_limit(
    study_folder, tmp_path, new_postgres_database, stop_all
):
    # PostgreSQL does not queue writers as SQLite does: two hosts counting the same address at
    # the same moment must still not both take the last place.
    configure(study_folder, session__new_sessions_per_ip_per_hour=4,
              study__database=f'"{new_postgres_database}"')  # fmt: skip
    servers = two_servers(study_folder, tmp_path, {})
    stop_all.append(servers)

    def start(i: int) -> int:
        url = f"{servers[i % 2].url}/task?access_code=burst-{i}"
        return httpx.get(url, headers=ADDRESS, timeout=30).status_code

    for _ in range(3):  # three bursts: the first fills the hour, the others find it full
        with ThreadPoolExecutor(16) as pool:
            statuses = list(pool.map(start, range(16)))
        assert statuses.count(302) + statuses.count(429) == 16
        if statuses.count(302):
            assert statuses.count(302) == 4, statuses
    engine = make_engine(new_postgres_database)
    with reading(engine) as connection:
        counted = connection.execute(select(func.count()).select_from(start_throttle)).scalar_one()
        started = connection.execute(select(func.count()).select_from(sessions)).scalar_one()
    engine.dispose()
    assert counted == started == 4


@pytest.mark.parametrize("database", DATABASES)
def test_a_burst_of_wrong_passwords_across_two_servers_gets_the_free_failures_only(study_folder, tmp_path, stop_all, database, request):
    from study import config
    from study.review import accounts, logins
    from study.review.web.auth import LOGIN_COOKIE

    configure(study_folder, **database_keys(database, request))
    servers = two_servers(study_folder, tmp_path, {})
    stop_all.append(servers)
    engine = make_engine(config.load(study_folder).database_url)
    with writing(engine) as connection:
        accounts.add(connection, "ada", "a long enough password", role="researcher")
    engine.dispose()

    def guess(i: int) -> int:
        # The login form's token travels as a cookie and a field, which must match.
        response = httpx.post(
            f"{servers[i % 2].url}/review/login", data={"name": "ada", "password": f"guess {i}", "csrf_token": "t"},
            cookies={LOGIN_COOKIE: "t"}, headers=ADDRESS, timeout=60,
        )  # fmt: skip
        return response.status_code

    with ThreadPoolExecutor(12) as pool:
        statuses = list(pool.map(guess, range(12)))
    # Only the free failures are checked; the rest wait for the backoff, whichever server.
    assert statuses.count(401) == logins.FREE_FAILURES, statuses
    assert statuses.count(429) == 12 - logins.FREE_FAILURES


def test_study_serve_says_at_start_that_it_counts_in_redis_without_its_password(study_folder, tmp_path, redis_url):
    # The test's Redis lets every password in for its default user (no requirepass).
    with_password = redis_url.replace("redis://", "redis://default:hunter2@", 1)
    port = free_port()
    server = ServerProcess([sys.executable, "-m", "study", "serve", str(study_folder), "--port", str(port),
                            "--workers", "1"], port, tmp_path / "server.log",
                           env={"STUDY_REDIS_URL": with_password})  # fmt: skip
    server.start()
    server.stop()
    log = server.log_text()

    shown = redis_url.replace("redis://", "redis://default:***@", 1)
    assert f"New sessions per address are counted in Redis at {shown} (STUDY_REDIS_URL)" in log, log
    assert "hunter2" not in log
