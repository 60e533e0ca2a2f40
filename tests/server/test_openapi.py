"""The task server describes its API at /api/openapi.json (OpenAPI 3.1), from the very schemas
the door checks (study.server.openapi)."""

from __future__ import annotations

import json

from schemathesis.openapi import from_dict

from study.paths import schemas_dir
from study.server.contract import inlined


def _description(client) -> dict:
    response = client.get("/api/openapi.json")
    assert response.status_code == 200 and response.content_type == "application/json"
    return response.json


def test_the_description_is_served_and_names_every_route_a_browser_uses(client):
    document = _description(client)

    assert document["openapi"] == "3.1.0"
    for path in ("/task", "/s/{session_id}/consent", "/s/{session_id}/writing/finish",
                 "/api/sessions/{session_id}/events", "/api/sessions/{session_id}/suggestions",
                 "/api/sessions/{session_id}/proactive", "/api/sessions/{session_id}/chat/messages",
                 "/api/sessions/{session_id}/surveys/{name}/{occasion}", "/review/s/{submission_id}/rating"):  # fmt: skip
        assert path in document["paths"], path
    # Valid against the OpenAPI 3.1 specification's own schema (raises otherwise).
    from_dict(document).validate()


def test_the_event_batch_is_described_by_the_schema_the_door_checks(client):
    document = _description(client)
    operation = document["paths"]["/api/sessions/{session_id}/events"]["post"]

    described = operation["requestBody"]["content"]["application/json"]["schema"]

    assert described == inlined("event-batch.schema.json")
    # ... which is schemas/event-batch.schema.json with its references filled in.
    source = json.loads((schemas_dir() / "event-batch.schema.json").read_text())
    assert described["properties"].keys() == source["properties"].keys()
    assert "422" in operation["responses"]


def test_mturks_entry_link_and_the_survey_form_are_described(client):
    document = _description(client)

    task = {p["name"]: p for p in document["paths"]["/task"]["get"]["parameters"]}
    survey = document["paths"]["/s/{session_id}/survey"]["post"]["requestBody"]["content"]

    assert {"assignmentId", "hitId", "workerId", "turkSubmitTo", "access_code"} <= task.keys()
    assert task["workerId"]["schema"]["maxLength"] == 64
    assert "application/x-www-form-urlencoded" in survey


def test_a_path_parameter_is_described_as_the_door_checks_it(client):
    document = _description(client)
    parameters = document["paths"]["/api/sessions/{session_id}/surveys/{name}/{occasion}"]["post"]["parameters"]

    occasion = next(p for p in parameters if p["name"] == "occasion")

    assert occasion["in"] == "path" and occasion["schema"]["maximum"] == 100000
