"""The same behaviour against the real MTurk sandbox (free: no money moves). These tests run
only where AWS credentials are configured; each HIT they post is expired and deleted again."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import replace
from decimal import Decimal

import boto3
import pytest

from study import config
from study.mturk import client, hit_actions, hits, posting, settings, validate
from study.mturk.context import open_context

pytestmark = pytest.mark.skipif(
    boto3.Session().get_credentials() is None,
    reason="no AWS credentials (aws configure, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE)",
)


@pytest.fixture
def sandbox():
    return client.connect()  # the sandbox endpoint, the standard credential chain


@pytest.fixture
def sandbox_ctx(sandbox, study_folder):
    study = config.load(study_folder)
    study = replace(
        study,
        raw={
            **study.raw,
            "mturk": {
                "lifetime_hours": 1,
                "budget": "5.00",
                "title": f"Test HIT {uuid.uuid4().hex[:6]} (ignore)",
            },
        },
    )
    return open_context(study, settings.from_study(study), sandbox)


def test_the_sandbox_balance(sandbox):
    assert sandbox.environment.startswith("sandbox:")
    assert sandbox.call("GetAccountBalance")["AvailableBalance"] == "10000.00"


def test_requests_the_sandbox_would_refuse_are_not_sent(sandbox):
    with pytest.raises(validate.InvalidRequest):
        sandbox.call("ListHITs", MaxResults=500)
    assert sandbox.calls == []


def test_post_expire_and_delete_a_hit(sandbox_ctx):
    posted = posting.post(
        sandbox_ctx,
        hits=1,
        assignments=1,
        reward=Decimal("0.01"),
        task_url="https://study.example.org/task?round=test&x=1",
    )
    hit_id = posted.hits[0]["hit_id"]
    try:
        hit = sandbox_ctx.requester.call("GetHIT", HITId=hit_id)["HIT"]
        assert hit["HITStatus"] == "Assignable"
        assert {r["QualificationTypeId"] for r in hit["QualificationRequirements"]} >= {
            "000000000000000000L0",
            "00000000000000000071",
            "00000000000000000040",
        }
        assert "round=test&amp;x=1" in hit["Question"]
        # The same token again: MTurk names the existing HIT, as the emulator does.
        with pytest.raises(client.MTurkError) as caught:
            sandbox_ctx.requester.call(
                "CreateHITWithHITType",
                HITTypeId=hit["HITTypeId"],
                MaxAssignments=1,
                LifetimeInSeconds=3600,
                Question=hits.external_question("https://study.example.org/task"),
                UniqueRequestToken=posted.hits[0]["request_token"],
            )
        assert caught.value.turk_code == "AWS.MechanicalTurk.HitAlreadyExists"
        assert caught.value.entity_id() == hit_id
    finally:
        assert hit_actions.expire(sandbox_ctx, hit_id) in ("expired", "already expired")
        assert hit_actions.expire(sandbox_ctx, hit_id) == "already expired"
        assert hit_actions.delete(sandbox_ctx, hit_id) == "deleted"


def test_the_same_expiry_twice_is_refused_by_the_sandbox(sandbox_ctx):
    hit_id = posting.post(
        sandbox_ctx,
        hits=1,
        assignments=1,
        reward=Decimal("0.01"),
        task_url="https://study.example.org/task",
    ).hits[0]["hit_id"]
    past = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    sandbox_ctx.requester.call("UpdateExpirationForHIT", HITId=hit_id, ExpireAt=past)
    try:
        with pytest.raises(client.MTurkError) as caught:
            sandbox_ctx.requester.call("UpdateExpirationForHIT", HITId=hit_id, ExpireAt=past)
        assert caught.value.token_already_processed
    finally:
        hit_actions.delete(sandbox_ctx, hit_id)
