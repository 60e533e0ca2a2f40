"""Property-based tests generated from the served OpenAPI description (/api/openapi.json) and
run against a live `study serve` of a writing, a proactive and a chat study (Schemathesis):
valid and invalid requests for every declared operation, on sessions at the stage each operation
serves. None may get a 5xx or an answer that breaks its declared schema, and none that is
refused (4xx) may store a row or move a session."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error, response_schema_conformance
from schemathesis.openapi import from_dict

# Examples per operation and mode: about 35 operations x 2 modes x 3 studies stay well under
# two minutes on a loaded machine, and every field of every declaration is still exercised.
EXAMPLES = 5

# One process runs this module's tests, so each study's `study serve` (`live_study`, 2-3 s to
# start and walk its sessions) is started once per run rather than once in each test process.
pytestmark = pytest.mark.xdist_group("contract_live")


def _session_for(live, path: str) -> str:
    if "/chat" in path or "/surveys/" in path:
        stage = "chat"
    elif path.startswith("/api/sessions/") or "/writing" in path:
        stage = "writing"
    else:
        stage = "consent"
    return live.sessions.get(stage) or live.sessions.get("writing") or live.sessions["consent"]


def _operations(live):
    document = httpx.get(f"{live.url}/api/openapi.json", timeout=30).json()
    schema = from_dict(document)
    for result in schema.get_all_operations():
        operation = result.ok()
        if not live.paths or operation.path.startswith(live.paths):
            yield operation


def _negatable(operation, fixed: dict) -> bool:
    """Whether an invalid request can be made of it: a body, a query or a free path parameter."""
    if operation.body or operation.query:
        return True
    return any(parameter.name not in fixed for parameter in operation.path_parameters)


def _exercise(live, operation, mode: GenerationMode) -> None:
    fixed = {}
    if "session_id" in operation.path_parameters:
        fixed["session_id"] = _session_for(live, operation.path)
    if "name" in operation.path_parameters and "/surveys/" in operation.path:
        fixed["name"] = "periodic"  # the chat study's in-session rating, so answers reach its checks
    if mode is GenerationMode.NEGATIVE and not _negatable(operation, fixed):
        return

    @settings(max_examples=EXAMPLES, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(case=operation.as_strategy(mode, path_parameters=fixed or None))
    def run(case):
        before = live.stored()
        response = case.call(base_url=live.url, allow_redirects=False, timeout=30)
        case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])
        if 400 <= response.status_code < 500:
            assert live.stored() == before, (
                f"{case.method} {case.formatted_path}: refused with {response.status_code} "
                f"({response.text[:200]}) but the database changed"
            )

    run()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["valid", "invalid"])
def test_no_generated_request_gets_a_5xx_breaks_its_answer_or_stores_when_refused(live_study, mode):
    failures = []
    for operation in _operations(live_study):
        try:
            _exercise(live_study, operation, mode)
        except Exception as error:  # noqa: BLE001 (each operation's failure is reported, all at once)
            failures.append(f"{operation.label}: {str(error)[:1500]}")
    assert not failures, f"{live_study.kind} study:\n" + "\n\n".join(failures)
