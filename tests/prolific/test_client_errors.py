"""Prolific's refusals as the researcher reads them: the status, Prolific's reason and the fix,
never the token."""

from __future__ import annotations

import json
import threading

import pytest
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from study.prolific.client import Client, ProlificError


@Request.application
def _throttling_api(request):
    body = {"error": {"status": 429, "title": "Too many requests", "detail": "Request was throttled."}}
    return Response(json.dumps(body), status=429, headers={"Retry-After": "30"},
                    content_type="application/json")  # fmt: skip


def test_a_throttled_call_says_how_long_to_wait_before_running_it_again():
    server = make_server("127.0.0.1", 0, _throttling_api, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = Client(f"http://127.0.0.1:{server.port}/api/v1/", "secret-token")
        with pytest.raises(ProlificError) as raised:
            client.get("studies/s1/submissions/")
    finally:
        server.shutdown()
    message = str(raised.value)
    assert "429" in message and "Request was throttled." in message
    assert "Fix: wait 30 seconds" in message and "run the same command again" in message
    assert "secret-token" not in message
