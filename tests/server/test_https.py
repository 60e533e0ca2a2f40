"""Served over https behind the README's reverse proxy (study.server.proxy), every answer tells
the browser to keep to https (Strict-Transport-Security) and the reviewers' cookies are Secure,
HttpOnly and SameSite; over plain http, as `study demo` on localhost is, no HSTS is sent, which
would make the browser refuse http://localhost for a year."""

from __future__ import annotations

import pytest

from study.server import create_app

FORWARDED_HTTPS = {"X-Forwarded-For": "203.0.113.5", "X-Forwarded-Proto": "https"}
# What a writer reaches with an access code, a judge, the reviewers' login, a mistyped link.
PAGES = ["/task?access_code=hsts-check", "/judge?access_code=hsts-check", "/review/login", "/no-such-page"]


def _answers(client, headers: dict) -> dict[str, object]:
    answers = {url: client.get(url, headers=headers) for url in PAGES}
    entered = answers[PAGES[0]]
    assert entered.status_code == 302, entered.data
    answers["consent page"] = client.get(entered.location, headers=headers)
    assert answers["consent page"].status_code == 200
    return answers


@pytest.fixture
def proxied(study, monkeypatch):
    monkeypatch.setenv("STUDY_TRUSTED_PROXIES", "1")
    return create_app(study, suggestion_engine=object())


def test_behind_a_trusted_https_proxy_every_answer_carries_hsts(proxied):
    answers = _answers(proxied.test_client(), FORWARDED_HTTPS)
    assert {url: r.headers.get("Strict-Transport-Security") for url, r in answers.items()} == {
        url: "max-age=31536000" for url in answers
    }
    cookies = answers["/review/login"].headers.getlist("Set-Cookie")
    assert cookies and all(
        "; Secure" in c and "; HttpOnly" in c and "; SameSite=Strict" in c for c in cookies
    ), cookies


def test_plain_http_on_localhost_sends_no_hsts(client):
    answers = _answers(client, {})
    assert [url for url, r in answers.items() if "Strict-Transport-Security" in r.headers] == []


def test_a_client_claiming_https_without_a_trusted_proxy_gets_no_hsts(client):
    # X-Forwarded-Proto from a client talking to the server directly is not believed.
    answers = _answers(client, FORWARDED_HTTPS)
    assert [url for url, r in answers.items() if "Strict-Transport-Security" in r.headers] == []


def test_https_declared_by_the_operator_sends_hsts(client, monkeypatch):
    # STUDY_SECURE_COOKIES=1: a proxy serving https that sends no X-Forwarded-Proto.
    monkeypatch.setenv("STUDY_SECURE_COOKIES", "1")
    assert client.get("/review/login").headers.get("Strict-Transport-Security") == "max-age=31536000"
