"""What the task server answers a malformed request is what /api/openapi.json says it answers
(README, "Request contracts"): a page form the door refuses is a short HTML page, and a path
that names no session is a 404 — both described, with the content type the server sends."""

from __future__ import annotations

from tests.server.flow import start

UNKNOWN = "0" * 32


def _operation(client, path: str, method: str) -> dict:
    return client.get("/api/openapi.json").json["paths"][path][method]


def test_a_refused_page_form_answers_in_a_content_type_its_description_names(client):
    session_id = start(client)
    refused = client.post(f"/s/{session_id}/consent", data={"consent": "yes", "utm_source": "x"})
    assert refused.status_code == 400 and "utm_source" in refused.get_data(as_text=True)

    described = _operation(client, "/s/{session_id}/consent", "post")["responses"]
    assert "400" in described
    assert refused.mimetype in described["400"]["content"], (refused.mimetype, described["400"])


def test_a_path_naming_no_session_answers_a_described_404(client):
    for method, path, url, kwargs in [
        ("get", "/api/sessions/{session_id}/state", f"/api/sessions/{UNKNOWN}/state", {}),
        ("post", "/api/sessions/{session_id}/suggestions", f"/api/sessions/{UNKNOWN}/suggestions", {"json": {"doc": "x"}}),
        ("get", "/s/{session_id}/writing", f"/s/{UNKNOWN}/writing", {}),
        ("post", "/s/{session_id}/writing/finish", "/s/short/writing/finish", {"json": {"last_seq": 0}}),
    ]:  # fmt: skip
        answer = getattr(client, method)(url, **kwargs)
        assert answer.status_code == 404, url
        described = _operation(client, path, method)["responses"]
        assert "404" in described, f"{method.upper()} {path}: 404 is not described ({sorted(described)})"
        assert answer.mimetype in described["404"]["content"], (url, answer.mimetype)


def test_an_event_batch_that_is_not_json_or_too_large_answers_a_described_status(client):
    # The editor's outbox reads these answers: 413 halves its batches; 400 and 422 refuse one.
    from study.server import MAX_REQUEST_BYTES
    from tests.server.flow import post_init, to_writing

    session_id = start(client)
    to_writing(client, session_id)
    post_init(client, session_id)
    url = f"/api/sessions/{session_id}/events"
    for body, status in ((b"{not json", 400), (b" " * (MAX_REQUEST_BYTES + 1), 413)):
        answer = client.post(url, data=body, content_type="application/json")
        assert answer.status_code == status, answer.get_data(as_text=True)[:200]
        described = _operation(client, "/api/sessions/{session_id}/events", "post")["responses"]
        assert str(status) in described, f"POST events: {status} is not described ({sorted(described)})"
        assert answer.mimetype in described[str(status)]["content"], (status, answer.mimetype)
