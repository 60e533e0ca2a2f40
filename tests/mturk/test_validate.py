"""Requests MTurk would refuse are caught before they are sent, with a message a researcher
can act on; botocore's own validation lets them through."""

from __future__ import annotations

import botocore.session
import botocore.validate
import pytest

from study.mturk import validate
from study.mturk.client import MTurkError


def _botocore_accepts(operation: str, params: dict) -> bool:
    model = botocore.session.get_session().get_service_model("mturk")
    report = botocore.validate.ParamValidator().validate(
        params, model.operation_model(operation).input_shape
    )
    return not report.has_errors()


HIT_TYPE = {"Title": "Write", "Description": "Write with AI", "AssignmentDurationInSeconds": 3600}


@pytest.mark.parametrize(
    ("operation", "params", "path", "words"),
    [
        ("CreateHITType", {**HIT_TYPE, "Reward": "0.001"}, "Reward", "at most two decimals"),
        ("ListHITs", {"MaxResults": 500}, "MaxResults", "more than the maximum 100"),
        (
            "ListAssignmentsForHIT",
            {"HITId": "3ABC", "AssignmentStatuses": ["submitted"]},
            "AssignmentStatuses[0]",
            "not one of Submitted, Approved, Rejected",
        ),
        (
            "SendBonus",
            {"WorkerId": "worker-7", "BonusAmount": "1.00", "AssignmentId": "3A", "Reason": "x"},
            "WorkerId",
            "a worker id",
        ),
        (
            "CreateHITType",
            {
                **HIT_TYPE,
                "Reward": "1.00",
                "QualificationRequirements": [
                    {
                        "QualificationTypeId": "00000000000000000071",
                        "Comparator": "EqualTo",
                        "LocaleValues": [{"Country": "USA"}],
                    }
                ],
            },
            "QualificationRequirements[0].LocaleValues[0].Country",
            "at most 2 characters",
        ),
    ],
)
def test_rules_botocore_skips_are_caught_with_the_parameter_named(operation, params, path, words):
    assert _botocore_accepts(operation, params), "botocore itself should let this through"
    with pytest.raises(validate.InvalidRequest) as caught:
        validate.check(operation, params)
    message = str(caught.value)
    assert f"{path}:" in message and words in message
    assert "was not sent" in message


def test_limits_stated_only_in_the_documentation_are_checked():
    too_many = [f"A{i:013d}" for i in range(101)]
    problems = validate.problems(
        "NotifyWorkers", {"Subject": "s" * 201, "MessageText": "m", "WorkerIds": too_many}
    )
    assert {p.path for p in problems} == {"Subject", "WorkerIds"}
    big = "<HTMLQuestion>" + "x" * 70_000 + "</HTMLQuestion>"
    assert [
        p.path
        for p in validate.problems(
            "CreateHITWithHITType", {"HITTypeId": "3T", "LifetimeInSeconds": 60, "Question": big}
        )
    ] == ["Question"]
    exists_with_value = {
        **HIT_TYPE,
        "Reward": "1.00",
        "QualificationRequirements": [
            {"QualificationTypeId": "3Q", "Comparator": "Exists", "IntegerValues": [1]}
        ],
    }
    assert (
        validate.problems("CreateHITType", exists_with_value)[0].text
        == "must be absent with Exists"
    )


def test_a_valid_request_passes_and_unknown_parameters_do_not():
    assert validate.problems("CreateHITType", {**HIT_TYPE, "Reward": "2.50"}) == []
    problems = validate.problems("GetHIT", {"HITId": "3ABC", "HitId": "3ABC"})
    assert [(p.path, p.rule) for p in problems] == [("HitId", "unknown")]


def test_the_requester_refuses_before_sending(requester, emulator):
    with pytest.raises(validate.InvalidRequest, match="MaxResults"):
        requester.call("ListHITs", MaxResults=500)
    with pytest.raises(validate.InvalidRequest, match="Reward"):
        requester.call("CreateHITType", **HIT_TYPE, Reward="0.001")
    assert requester.calls == []  # nothing reached the endpoint
    assert emulator.state.data["hit_types"] == {}


def test_the_emulator_refuses_what_the_service_refuses_when_a_client_skips_the_check(requester):
    # The raw boto3 client, as code without our check would use it.
    with pytest.raises(requester.client.exceptions.RequestError) as caught:
        requester.client.list_hits(MaxResults=500)
    message = caught.value.response["Error"]["Message"]
    assert "Value '500' at 'maxResults' failed to satisfy constraint" in message
    with pytest.raises(requester.client.exceptions.RequestError) as caught:
        requester.client.create_hit_type(**HIT_TYPE, Reward="0.001")
    assert "regular expression pattern" in caught.value.response["Error"]["Message"]


def test_service_errors_become_mturk_errors_with_code_and_turk_code(requester):
    with pytest.raises(MTurkError) as caught:
        requester.call("GetHIT", HITId="3NOSUCHHIT0000000000000000000")
    assert caught.value.code == "RequestError" and caught.value.certain
    assert "does not exist" in caught.value.message
