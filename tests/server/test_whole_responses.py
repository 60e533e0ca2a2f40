"""The task server hands an answer already in memory to the WSGI server in one piece (a list,
which granian sends at once), and keeps werkzeug's closing iterator where something must run
once the answer is sent (study.server.responses)."""

from __future__ import annotations

from werkzeug.test import EnvironBuilder

from tests.server import flow


def call(app, method: str, path: str, **kwargs):
    """The app's WSGI answer as a server gets it: (status, headers, the iterable itself)."""
    environ = EnvironBuilder(path=path, method=method, **kwargs).get_environ()
    started = {}

    def start_response(status, headers, exc_info=None):
        started.update(status=status, headers=dict(headers))

    body = app.wsgi_app(environ, start_response)
    return started["status"], started["headers"], body


def test_an_answer_in_memory_reaches_the_server_whole_with_its_length(app, client):
    session_id = flow.start(client)
    flow.to_writing(client, session_id)
    status, headers, body = call(app, "GET", f"/s/{session_id}/writing")
    assert status == "200 OK"
    assert type(body) is list
    page = b"".join(body)
    assert int(headers["Content-Length"]) == len(page)
    assert page.startswith(b"<!doctype html>") and page.endswith(b"</html>")
    # A JSON refusal too: an unknown session's event batch.
    status, headers, body = call(app, "POST", f"/api/sessions/{'0' * 32}/events", json={"events": []})
    assert status.startswith("4") and type(body) is list and b"".join(body)


def test_a_head_request_still_gets_no_body(app, client):
    session_id = flow.start(client)
    flow.to_writing(client, session_id)
    status, headers, body = call(app, "HEAD", f"/s/{session_id}/writing")
    assert status == "200 OK"
    assert b"".join(body) == b""
    assert int(headers["Content-Length"]) > 0  # the length a GET's body would have


def test_what_runs_once_an_answer_is_sent_runs_when_the_server_closes_it(app, client):
    ran = []

    @app.after_request
    def later(response):
        response.call_on_close(lambda: ran.append("closed"))
        return response

    status, _, body = call(app, "GET", "/task", query_string={"access_code": "lab-2"})
    assert status.startswith("302")
    assert type(body) is not list and ran == []  # not before the server has sent it
    b"".join(body)
    body.close()
    assert ran == ["closed"]
