"""STUDY_TRUSTED_PROXIES holds under the servers that run it (study.server.proxy): forwarded
headers sent through the real `study serve` (gunicorn) and `study review` (waitress) reach the
app, so the per-address limits count the forwarded client and cookies are Secure behind https;
without the setting, a client's forged headers count nowhere."""

from __future__ import annotations

import re
import sys

import httpx
import pytest

from study import config
from study.review import accounts, logins
from study.server.limits import from_study
from study.store import create_tables, make_engine, writing

from .servers import ServerProcess, free_port

pytestmark = pytest.mark.slow

CLIENT = {"X-Forwarded-For": "198.51.100.23", "X-Forwarded-Proto": "https"}
NEIGHBOUR = {"X-Forwarded-For": "198.51.100.99", "X-Forwarded-Proto": "https"}


def _served(command: str, folder, tmp_path, proxies: str | None) -> ServerProcess:
    port = free_port()
    arguments = [sys.executable, "-m", "study", command, str(folder), "--port", str(port)]
    if command == "serve":
        arguments += ["--workers", "1", "--threads", "4"]
    env = {"STUDY_TRUSTED_PROXIES": proxies} if proxies is not None else {}
    server = ServerProcess(arguments, port, tmp_path / f"{command}.log", env=env)
    server.start(timeout=60)
    return server


@pytest.fixture
def started():
    servers: list[ServerProcess] = []
    yield servers
    for server in servers:
        server.stop()


def _login_cookie(client: httpx.Client, headers: dict) -> str:
    response = client.get("/review/login", headers=headers)
    assert response.status_code == 200
    return next(value for value in response.headers.get_list("set-cookie") if value.startswith("study_review"))


def _starts(client: httpx.Client, headers: dict, count: int) -> list[int]:
    return [client.get("/task", params={"access_code": f"proxy-{n}"}, headers=headers).status_code for n in range(count)]


def test_study_serve_behind_a_trusted_proxy_throttles_the_forwarded_client_and_secures_cookies(study_folder, tmp_path, started):
    limit = from_study(config.load(study_folder)).new_sessions_per_ip_per_hour
    started.append(server := _served("serve", study_folder, tmp_path, "1"))

    with httpx.Client(base_url=server.url, timeout=30) as client:
        answers = _starts(client, CLIENT, limit + 1)
        neighbour = _starts(client, NEIGHBOUR, 1)
        cookie = _login_cookie(client, CLIENT)
        plain = _login_cookie(client, {"X-Forwarded-For": "198.51.100.23"})

    assert answers == [302] * limit + [429]
    assert neighbour == [302]  # another client behind the same proxy is not throttled with it
    assert "Secure" in cookie and "Secure" not in plain


def test_study_serve_without_trusted_proxies_ignores_forged_headers(study_folder, tmp_path, started):
    limit = from_study(config.load(study_folder)).new_sessions_per_ip_per_hour
    started.append(server := _served("serve", study_folder, tmp_path, None))

    with httpx.Client(base_url=server.url, timeout=30) as client:
        answers = _starts(client, CLIENT, limit + 1)
        cookie = _login_cookie(client, CLIENT)

    # The peer is this machine (loopback, never throttled), whatever X-Forwarded-For claims;
    # and X-Forwarded-Proto from a client does not make the server believe in https.
    assert answers == [302] * (limit + 1)
    assert "Secure" not in cookie


def _review_folder(study_folder):
    study = config.load(study_folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    with writing(engine) as connection:
        accounts.add(connection, "ana", "correct horse battery", role="reviewer")
    engine.dispose()
    return study_folder


def _log_in(client: httpx.Client, headers: dict, password: str) -> httpx.Response:
    page = client.get("/review/login", headers=headers)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    # The proxy speaks https to the browser, which sends a Secure cookie back; this client talks
    # plain http to the server as the proxy does, so it hands the cookie on itself.
    cookie = page.headers["set-cookie"].split(";", 1)[0]
    return client.post(
        "/review/login", data={"name": "ana", "password": password, "csrf_token": token},
        headers={**headers, "Cookie": cookie},
    )  # fmt: skip


@pytest.mark.parametrize("proxies", ["1", None], ids=["trusted-proxy", "no-proxy-configured"])
def test_study_review_under_waitress_follows_the_forwarded_client_only_when_told(study_folder, tmp_path, started, proxies):
    started.append(server := _served("review", _review_folder(study_folder), tmp_path, proxies))

    with httpx.Client(base_url=server.url, timeout=30) as client:
        cookie = _login_cookie(client, CLIENT)
        for _ in range(logins.FREE_FAILURES + 1):
            _log_in(client, CLIENT, "wrong guess!")
        throttled = _log_in(client, CLIENT, "correct horse battery").status_code
        neighbour = _log_in(client, NEIGHBOUR, "correct horse battery").status_code

    if proxies:
        assert "Secure" in cookie
        assert (throttled, neighbour) == (429, 302)
    else:
        # Every attempt is the same peer (this machine): the forged addresses do not split it.
        assert "Secure" not in cookie
        assert (throttled, neighbour) == (429, 429)
