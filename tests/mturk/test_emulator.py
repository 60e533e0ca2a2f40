"""The local MTurk endpoint answers the real boto3 client as the service does: wire protocol,
errors, tokens, the HIT lifecycle, workers' eligibility and persistence."""

from __future__ import annotations

import datetime as dt
import json

import httpx
import pytest

from study.mturk.emulator import State, accept_and_submit, serve_in_thread
from study.mturk.hits import external_question
from tests.mturk.conftest import connect
from tests.mturk.walk import accept

QUESTION = external_question("https://study.example.org/task?a=1&b=2")
US = {
    "QualificationTypeId": "00000000000000000071",
    "Comparator": "EqualTo",
    "LocaleValues": [{"Country": "US"}],
}
APPROVAL = {
    "QualificationTypeId": "000000000000000000L0",
    "Comparator": "GreaterThan",
    "IntegerValues": [97],
}


def make_hit(
    mturk,
    *,
    assignments=1,
    requirements=(),
    auto_approve=3600,
    token=None,
    lifetime=3600,
    reward="2.50",
):
    params = dict(
        MaxAssignments=assignments,
        LifetimeInSeconds=lifetime,
        AssignmentDurationInSeconds=600,
        AutoApprovalDelayInSeconds=auto_approve,
        Reward=reward,
        Title="Write a story",
        Description="Write with AI",
        Question=QUESTION,
        QualificationRequirements=list(requirements),
    )
    if token:
        params["UniqueRequestToken"] = token
    return mturk.create_hit(**params)["HIT"]


@pytest.fixture
def mturk(requester):
    """The plain boto3 client pointed at the emulator."""
    return requester.client


def _raw(url, target, body, auth=True):
    headers = {"X-Amz-Target": target, "Content-Type": "application/x-amz-json-1.1"}
    if auth:
        headers["Authorization"] = (
            "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/mturk-requester/aws4_request"
        )
    return httpx.post(url + "/", content=json.dumps(body), headers=headers)


def test_the_wire_protocol_and_its_errors(emulator):
    ok = _raw(emulator.url, "MTurkRequesterServiceV20170117.GetAccountBalance", {})
    assert ok.status_code == 200 and ok.headers["Content-Type"] == "application/x-amz-json-1.1"
    assert ok.json() == {"AvailableBalance": "10000.00", "OnHoldBalance": "0.00"}
    error = _raw(emulator.url, "MTurkRequesterServiceV20170117.GetHIT", {"HITId": "3MISSING"})
    assert error.status_code == 400
    assert error.json()["__type"] == "RequestError" and "does not exist" in error.json()["Message"]
    invalid = _raw(emulator.url, "MTurkRequesterServiceV20170117.ListHITs", {"MaxResults": 0})
    assert "greater than or equal to 1" in invalid.json()["Message"]
    assert (
        _raw(emulator.url, "MTurkRequesterServiceV20170117.MakeCoffee", {}).json()["__type"]
        == "UnknownOperationException"
    )
    assert (
        _raw(emulator.url, "MTurkRequesterServiceV20170117.ListHITs", {}, auth=False).status_code
        == 400
    )


def test_a_repeated_create_hit_token_names_the_existing_hit(mturk):
    hit = make_hit(mturk, token="post-1")
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        make_hit(mturk, token="post-1")
    assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.HitAlreadyExists"
    assert hit["HITId"] in caught.value.response["Error"]["Message"]
    assert mturk.list_hits()["NumResults"] == 1


def test_bonus_tokens_are_refused_for_24_hours_then_forgotten(mturk, emulator):
    hit = make_hit(mturk)
    done = accept_and_submit(emulator.state, hit["HITId"], "A1WORKER", {"verificationCode": "X"})
    bonus = dict(
        WorkerId="A1WORKER",
        BonusAmount="1.00",
        AssignmentId=done["AssignmentId"],
        Reason="Thanks",
        UniqueRequestToken="bonus-1",
    )
    mturk.send_bonus(**bonus)
    with pytest.raises(mturk.exceptions.RequestError, match="has already been processed"):
        mturk.send_bonus(**bonus)
    emulator.state.advance(25 * 3600)
    mturk.send_bonus(**bonus)  # MTurk has forgotten the token: this pays again
    paid = mturk.list_bonus_payments(AssignmentId=done["AssignmentId"])["BonusPayments"]
    assert len(paid) == 2
    # 2.50 reward auto-approved after an hour (+0.50 fee), two bonuses of 1.00 (+0.20 each).
    assert mturk.get_account_balance()["AvailableBalance"] == "9994.60"


def test_the_same_expiry_twice_fails_as_on_mturk(mturk):
    hit = make_hit(mturk)
    past = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    mturk.update_expiration_for_hit(HITId=hit["HITId"], ExpireAt=past)
    with pytest.raises(mturk.exceptions.RequestError, match="already been processed"):
        mturk.update_expiration_for_hit(HITId=hit["HITId"], ExpireAt=past)
    assert mturk.get_hit(HITId=hit["HITId"])["HIT"]["HITStatus"] == "Reviewable"


def test_the_hit_status_follows_its_assignments(mturk, emulator):
    hit = make_hit(mturk, assignments=1)
    assert mturk.get_hit(HITId=hit["HITId"])["HIT"]["HITStatus"] == "Assignable"
    accepted = accept(emulator.url, hit["HITId"], "A1WORKER")
    view = mturk.get_hit(HITId=hit["HITId"])["HIT"]
    assert (view["HITStatus"], view["NumberOfAssignmentsPending"]) == ("Unassignable", 1)
    mturk.update_expiration_for_hit(HITId=hit["HITId"], ExpireAt=dt.datetime.now(dt.timezone.utc))
    assert mturk.get_hit(HITId=hit["HITId"])["HIT"]["HITStatus"] == "Unassignable"  # still working
    response = httpx.post(
        f"{emulator.url}/mturk/externalSubmit",
        data={"assignmentId": accepted["AssignmentId"], "verificationCode": "ABC & <x>"},
    )
    assert response.status_code == 200
    view = mturk.get_hit(HITId=hit["HITId"])["HIT"]
    assert view["HITStatus"] == "Reviewable"
    answer = mturk.get_assignment(AssignmentId=accepted["AssignmentId"])["Assignment"]["Answer"]
    assert (
        "<QuestionIdentifier>verificationCode</QuestionIdentifier><FreeText>ABC &amp; &lt;x&gt;</FreeText>"
        in answer
    )
    assert "assignmentId" not in answer


def test_external_submit_needs_a_field_besides_the_assignment(mturk, emulator):
    hit = make_hit(mturk)
    accepted = accept(emulator.url, hit["HITId"], "A1WORKER")
    refused = httpx.post(
        f"{emulator.url}/mturk/externalSubmit", data={"assignmentId": accepted["AssignmentId"]}
    )
    assert refused.status_code == 400 and "at least one field" in refused.json()["error"]


def test_workers_must_meet_the_requirements_and_not_be_blocked(mturk, emulator):
    hit = make_hit(mturk, assignments=5, requirements=[US, APPROVAL])
    httpx.post(f"{emulator.url}/_emulator/workers", json={"WorkerId": "A1ABROAD", "Country": "DE"})
    httpx.post(
        f"{emulator.url}/_emulator/workers", json={"WorkerId": "A1NOVICE", "ApprovalRate": 95}
    )
    for worker in ("A1ABROAD", "A1NOVICE"):
        refused = httpx.post(
            f"{emulator.url}/_emulator/accept", data={"HITId": hit["HITId"], "WorkerId": worker}
        )
        assert (
            refused.status_code == 409
            and "does not meet the requirements" in refused.json()["error"]
        )
    mturk.create_worker_block(WorkerId="A1BLOCKED", Reason="spam")
    refused = httpx.post(
        f"{emulator.url}/_emulator/accept", data={"HITId": hit["HITId"], "WorkerId": "A1BLOCKED"}
    )
    assert "blocked" in refused.json()["error"]
    accept(emulator.url, hit["HITId"], "A1GOOD")
    again = httpx.post(
        f"{emulator.url}/_emulator/accept", data={"HITId": hit["HITId"], "WorkerId": "A1GOOD"}
    )
    assert "already accepted" in again.json()["error"]


def test_a_preview_has_no_assignment_and_no_worker(mturk, emulator):
    hit = make_hit(mturk)
    url = httpx.get(f"{emulator.url}/_emulator/preview", params={"HITId": hit["HITId"]}).json()[
        "PreviewURL"
    ]
    assert url.startswith("https://study.example.org/task?a=1&b=2&")
    assert "assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE" in url and "workerId" not in url


def test_external_urls_must_be_https(mturk, emulator):
    with pytest.raises(mturk.exceptions.RequestError, match="not a valid https URL"):
        mturk.create_hit(
            MaxAssignments=1,
            LifetimeInSeconds=3600,
            AssignmentDurationInSeconds=600,
            Reward="1.00",
            Title="t",
            Description="d",
            Question=external_question("http://localhost:5000/task"),
        )
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_hit(
            MaxAssignments=1,
            LifetimeInSeconds=3600,
            AssignmentDurationInSeconds=600,
            Reward="1.00",
            Title="t",
            Description="d",
            Question="<ExternalQuestion><unclosed>",
        )
    assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.XMLParseError"


def test_fewer_than_ten_assignments_cannot_grow_to_ten(mturk):
    hit = make_hit(mturk, assignments=9)
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_additional_assignments_for_hit(
            HITId=hit["HITId"], NumberOfAdditionalAssignments=1
        )
    assert (
        caught.value.response["TurkErrorCode"]
        == "AWS.MechanicalTurk.InvalidMaximumAssignmentsIncrease"
    )
    mturk.create_additional_assignments_for_hit(
        HITId=make_hit(mturk, assignments=10)["HITId"], NumberOfAdditionalAssignments=5
    )


def test_notify_only_reaches_workers_whose_work_was_reviewed(mturk, emulator):
    hit = make_hit(mturk, assignments=2)
    done = accept_and_submit(emulator.state, hit["HITId"], "A1KNOWN", {"verificationCode": "X"})
    mturk.approve_assignment(AssignmentId=done["AssignmentId"])
    response = mturk.notify_workers(
        Subject="Round 2", MessageText="New HITs", WorkerIds=["A1KNOWN", "A1STRANGER"]
    )
    failures = response["NotifyWorkersFailureStatuses"]
    assert [(f["WorkerId"], f["NotifyWorkersFailureCode"]) for f in failures] == [
        ("A1STRANGER", "HardFailure")
    ]
    assert [e["WorkerId"] for e in emulator.state.data["emails"]] == ["A1KNOWN"]


def test_state_survives_a_restart(tmp_path, fake_aws):
    path = tmp_path / "dry-run.json"
    first = serve_in_thread(State(path))
    hit = make_hit(connect(first.url).client)
    first.stop()
    second = serve_in_thread(State(path))
    try:
        again = connect(second.url).client
        assert again.get_hit(HITId=hit["HITId"])["HIT"]["Title"] == "Write a story"
    finally:
        second.stop()


def test_paging_follows_next_token(mturk):
    for _ in range(3):
        make_hit(mturk)
    first = mturk.list_hits(MaxResults=2)
    second = mturk.list_hits(MaxResults=2, NextToken=first["NextToken"])
    assert (first["NumResults"], second["NumResults"], "NextToken" in second) == (2, 1, False)


def test_notification_settings_and_test_events(mturk, emulator):
    hit_type = mturk.create_hit_type(
        Title="t", Description="d", Reward="1.00", AssignmentDurationInSeconds=600
    )["HITTypeId"]
    notification = {
        "Destination": "researcher@example.org",
        "Transport": "Email",
        "Version": "2006-05-05",
        "EventTypes": ["AssignmentSubmitted"],
    }
    mturk.update_notification_settings(HITTypeId=hit_type, Notification=notification, Active=True)
    assert emulator.state.data["notification_settings"][hit_type]["Active"] is True
    mturk.send_test_event_notification(Notification=notification, TestEventType="Ping")
    assert [n["EventType"] for n in emulator.state.data["sent_notifications"]] == ["Ping"]
    with pytest.raises(mturk.exceptions.RequestError, match="not a valid Email address"):
        mturk.send_test_event_notification(
            Notification={**notification, "Destination": "nobody"}, TestEventType="Ping"
        )


def test_qualification_requests_and_scores(mturk, emulator):
    type_id = mturk.create_qualification_type(
        Name="round-1", Description="d", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    asked = httpx.post(
        f"{emulator.url}/_emulator/qualification-requests",
        json={"QualificationTypeId": type_id, "WorkerId": "A1ASKER"},
    ).json()
    pending = mturk.list_qualification_requests(QualificationTypeId=type_id)[
        "QualificationRequests"
    ]
    assert [r["QualificationRequestId"] for r in pending] == [asked["QualificationRequestId"]]
    mturk.accept_qualification_request(
        QualificationRequestId=asked["QualificationRequestId"], IntegerValue=4
    )
    score = mturk.get_qualification_score(QualificationTypeId=type_id, WorkerId="A1ASKER")
    assert score["Qualification"]["IntegerValue"] == 4
    with pytest.raises(mturk.exceptions.RequestError, match="already created a QualificationType"):
        mturk.create_qualification_type(
            Name="round-1", Description="d", QualificationTypeStatus="Active"
        )


def test_sts_get_caller_identity_names_one_account_for_the_state_file(tmp_path, fake_aws):
    import boto3

    path = tmp_path / "state.json"
    accounts = []
    for _ in range(2):  # the same state file, served twice (a restart)
        running = serve_in_thread(State(path))
        try:
            sts = boto3.client("sts", region_name="us-east-1", endpoint_url=running.url)
            accounts.append(sts.get_caller_identity()["Account"])
        finally:
            running.stop()
    assert accounts[0] == accounts[1] and len(accounts[0]) == 12 and accounts[0].isdigit()
    other = serve_in_thread(State(tmp_path / "other.json"))
    try:
        sts = boto3.client("sts", region_name="us-east-1", endpoint_url=other.url)
        assert sts.get_caller_identity()["Account"] != accounts[0]
    finally:
        other.stop()


def test_an_auto_approval_the_balance_cannot_pay_does_not_break_every_request(tmp_path, fake_aws):
    running = serve_in_thread(State(tmp_path / "small.json", balance="5.00"))
    try:
        mturk = connect(running.url).client
        hit = make_hit(mturk, assignments=3, auto_approve=60)  # up to 3 x $3.00
        done = [
            accept_and_submit(running.state, hit["HITId"], worker, {"verificationCode": "X"})
            for worker in ("A1WRITERONE", "A1WRITERTWO")
        ]
        running.state.advance(120)  # both are due for auto-approval; $5.00 pays one
        assert mturk.get_account_balance()["AvailableBalance"] == "2.00"
        statuses = [
            mturk.get_assignment(AssignmentId=a["AssignmentId"])["Assignment"]["AssignmentStatus"]
            for a in done
        ]
        assert statuses == ["Approved", "Submitted"]
        assert mturk.list_hits()["NumResults"] == 1
    finally:
        running.stop()
