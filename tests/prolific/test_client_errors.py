"""Prolific's refusals as the researcher reads them: the status, Prolific's reason and the fix,
never the token."""

from __future__ import annotations

import json

import pytest
from werkzeug.wrappers import Request, Response

from study.prolific.client import Client, ProlificError

from .local_api import serving


@Request.application
def _throttling_api(request):
    body = {"error": {"status": 429, "title": "Too many requests", "detail": "Request was throttled."}}
    return Response(json.dumps(body), status=429, headers={"Retry-After": "30"},
                    content_type="application/json")  # fmt: skip


def test_a_throttled_call_says_how_long_to_wait_before_running_it_again():
    with serving(_throttling_api) as url, pytest.raises(ProlificError) as raised:
        Client(url, "secret-token").get("studies/s1/submissions/")
    message = str(raised.value)
    assert "429" in message and "Request was throttled." in message
    assert "Fix: wait 30 seconds" in message and "run the same command again" in message
    assert "secret-token" not in message


@Request.application
def _web_page(request):
    return Response("<!doctype html><title>Prolific</title>", content_type="text/html")


def test_an_address_that_answers_a_web_page_is_named_with_the_fix_not_a_json_error():
    with serving(_web_page, path="/") as url, pytest.raises(ProlificError) as raised:
        Client(url, "secret-token").get("users/me/")
    message = str(raised.value)
    assert message.startswith("GET users/me/: ") and "not JSON" in message
    assert "Fix: check --api-url (or PROLIFIC_API_URL)" in message
    assert "secret-token" not in message
