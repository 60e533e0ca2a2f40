"""Studies: what a draft must carry, the minimum reward rate, the status machine and places."""

from __future__ import annotations

from tests.prolific.emulator.conftest import take_part_and_finish


def test_a_draft_is_unpublished_and_keeps_what_was_sent(researcher):
    study = researcher.study()
    assert study["status"] == "UNPUBLISHED" and len(study["id"]) == 24
    assert study["reward"] == 150 and study["total_available_places"] == 2
    assert study["completion_codes"][0]["code"] == "C1WRITE"
    assert study["maximum_allowed_time"] >= study["estimated_completion_time"]
    assert researcher.get(f"studies/{study['id']}/").json() == study


def test_a_draft_missing_a_field_or_the_participant_placeholder_is_refused(researcher):
    body = researcher.study()
    for shown_only in ("id", "completion_code", "completion_option"):
        del body[shown_only]
    for field in ("name", "completion_codes"):
        answer = researcher.post("studies/", json={**body, field: None})
        assert answer.status_code == 400
        assert field in answer.json()["error"]["detail"]
    bare = researcher.post("studies/", json={**body, "external_study_url": "https://x.org/t"})
    assert bare.status_code == 400 and "external_study_url" in bare.json()["error"]["detail"]


def test_a_reward_below_the_minimum_hourly_rate_is_refused(researcher):
    # 130 cents for 10 minutes is 7.80 an hour, under the 8.00 minimum for USD.
    body = {**researcher.study(), "reward": 130}
    answer = researcher.post("studies/", json=body)
    assert answer.status_code == 400
    assert "minimum" in answer.json()["error"]["detail"]["reward"][0]
    draft = researcher.study(reward=134)  # 8.04 an hour: accepted
    lowered = researcher.patch(f"studies/{draft['id']}/", json={"estimated_completion_time": 20})
    assert lowered.status_code == 400 and "reward" in lowered.json()["error"]["detail"]


def test_publish_pause_start_stop(researcher):
    study = researcher.study()

    def move(action):
        return researcher.post(f"studies/{study['id']}/transition/", json={"action": action})

    refused = move("PAUSE")
    assert refused.status_code == 400
    assert "UNPUBLISHED" in refused.json()["error"]["detail"]["action"][0]
    assert move("PUBLISH").json()["status"] == "ACTIVE"
    assert move("PUBLISH").status_code == 400
    assert move("PAUSE").json()["status"] == "PAUSED"
    assert move("START").json()["status"] == "ACTIVE"
    assert move("STOP").json()["status"] == "COMPLETED"  # nothing to review
    assert move("START").status_code == 400
    assert move("JUMP").status_code == 400


def test_publishing_holds_the_cost_and_needs_the_balance(researcher):
    researcher.published(total_available_places=10)
    balance = researcher.balance()
    assert balance["total_balance"] == 100_000
    assert balance["available_balance"] == 100_000 - 2000
    costly = researcher.study(total_available_places=1000)
    answer = researcher.post(f"studies/{costly['id']}/transition/", json={"action": "PUBLISH"})
    assert answer.status_code == 400 and "balance" in answer.json()["error"]["detail"]
    assert researcher.get(f"studies/{costly['id']}/").json()["status"] == "UNPUBLISHED"


def test_places_of_a_published_study_can_only_grow(researcher):
    study = researcher.published()
    grown = researcher.patch(f"studies/{study['id']}/", json={"total_available_places": 5})
    assert grown.status_code == 200 and grown.json()["total_available_places"] == 5
    shrunk = researcher.patch(f"studies/{study['id']}/", json={"total_available_places": 3})
    assert shrunk.status_code == 400
    assert researcher.patch(f"studies/{study['id']}/", json={"reward": 500}).status_code == 400


def test_only_drafts_can_be_deleted(researcher):
    draft, live = researcher.study(), researcher.published()
    assert researcher.delete(f"studies/{draft['id']}/").status_code == 204
    assert researcher.get(f"studies/{draft['id']}/").status_code == 404
    assert researcher.delete(f"studies/{live['id']}/").status_code == 400


def test_a_full_study_awaits_review_then_completes_and_a_rejection_reopens_it(
        researcher, emulator):
    study = researcher.published()
    for pid in ("a" * 24, "b" * 24):
        take_part_and_finish(emulator, study["id"], pid)
    assert researcher.get(f"studies/{study['id']}/").json()["status"] == "AWAITING REVIEW"
    first, _second = researcher.submissions(study["id"])
    rejected = researcher.post(f"submissions/{first['id']}/transition/", json={
        "action": "REJECT", "rejection_category": "LOW_EFFORT", "message": "x" * 100})
    assert rejected.status_code == 200
    assert researcher.get(f"studies/{study['id']}/").json()["status"] == "ACTIVE"
    take_part_and_finish(emulator, study["id"], "c" * 24)
    for submission in researcher.submissions(study["id"]):
        if submission["status"] == "AWAITING REVIEW":
            researcher.post(f"submissions/{submission['id']}/transition/",
                            json={"action": "APPROVE"})
    assert researcher.get(f"studies/{study['id']}/").json()["status"] == "COMPLETED"


def test_the_study_list_is_paginated(researcher):
    made = [researcher.study(name=f"Study {n}")["id"] for n in range(3)]
    page = researcher.get("studies/", params={"page_size": 2}).json()
    assert page["meta"]["count"] == 3 and len(page["results"]) == 2
    rest = researcher.session.get(page["_links"]["next"]["href"]).json()
    assert rest["_links"]["next"]["href"] is None
    assert [s["id"] for s in page["results"] + rest["results"]] == made


def test_more_places_reopen_a_full_study_but_not_a_stopped_one(researcher, emulator):
    study = researcher.published(total_available_places=1)
    take_part_and_finish(emulator, study["id"], "a" * 24)
    assert researcher.get(f"studies/{study['id']}/").json()["status"] == "AWAITING REVIEW"
    grown = researcher.patch(f"studies/{study['id']}/", json={"total_available_places": 2})
    assert grown.json()["status"] == "ACTIVE"
    researcher.post(f"studies/{study['id']}/transition/", json={"action": "STOP"})
    assert researcher.get(f"studies/{study['id']}/").json()["status"] == "AWAITING REVIEW"
    refused = researcher.patch(f"studies/{study['id']}/", json={"total_available_places": 3})
    assert refused.status_code == 400


def test_the_older_single_completion_code_form_is_taken(researcher, emulator):
    study = researcher.study(completion_codes=None, completion_code="OLDCODE1",
                             completion_option="url")
    assert [c["code"] for c in study["completion_codes"]] == ["OLDCODE1"]
    assert study["completion_code"] == "OLDCODE1"
    researcher.post(f"studies/{study['id']}/transition/", json={"action": "PUBLISH"})
    take_part_and_finish(emulator, study["id"], "a" * 24, code="OLDCODE1")
    assert researcher.submissions(study["id"])[0]["status"] == "AWAITING REVIEW"
