"""Submissions: paginated as Prolific's lists, reviewed by the documented rules, paid on approval."""

from __future__ import annotations

from tests.prolific.emulator.conftest import take_part_and_finish

REASON = ("Your submission was left blank after the first paragraph, so we cannot use it for "
          "the study's analysis.")


def _reviewable(researcher, emulator, count=1):
    study = researcher.published(total_available_places=count)
    for n in range(count):
        take_part_and_finish(emulator, study["id"], f"{n:024x}")
    return study, researcher.submissions(study["id"])


def test_lists_page_by_20_and_link_the_next_page(researcher, emulator):
    study, _ = _reviewable(researcher, emulator, count=23)
    first = researcher.get(f"studies/{study['id']}/submissions/").json()
    assert len(first["results"]) == 20 and first["meta"]["count"] == 23
    assert first["_links"]["previous"]["href"] is None
    second = researcher.session.get(first["_links"]["next"]["href"]).json()
    assert len(second["results"]) == 3 and second["_links"]["next"]["href"] is None
    everyone = {s["participant_id"] for s in first["results"] + second["results"]}
    assert everyone == {f"{n:024x}" for n in range(23)}
    by_study = researcher.get("submissions/", params={"study": study["id"], "page_size": 5})
    assert len(by_study.json()["results"]) == 5 and by_study.json()["meta"]["count"] == 23


def test_a_submission_carries_its_participant_code_and_times(researcher, emulator):
    _, (submission,) = _reviewable(researcher, emulator)
    assert submission["status"] == "AWAITING REVIEW"
    assert submission["participant_id"] == "0" * 24
    assert submission["entered_code"] == "C1WRITE" and submission["bonus_payments"] == []
    assert submission["started_at"] <= submission["completed_at"]
    assert researcher.get(f"submissions/{submission['id']}/").json() == submission


def test_approving_pays_the_reward_with_the_fee_once(researcher, emulator):
    _, (submission,) = _reviewable(researcher, emulator)
    before = researcher.balance()["total_balance"]
    path = f"submissions/{submission['id']}/transition/"
    assert researcher.post(path, json={"action": "APPROVE"}).json()["status"] == "APPROVED"
    again = researcher.post(path, json={"action": "APPROVE"})  # documented as ignored
    assert again.status_code == 200 and again.json()["status"] == "APPROVED"
    assert researcher.balance()["total_balance"] == before - (150 + 50)
    rejected = researcher.post(path, json={"action": "REJECT", "message": REASON,
                                           "rejection_category": "LOW_EFFORT"})
    assert rejected.status_code == 400


def test_a_rejection_needs_a_long_message_and_a_known_category(researcher, emulator):
    _, (submission,) = _reviewable(researcher, emulator)
    path = f"submissions/{submission['id']}/transition/"
    short = researcher.post(path, json={"action": "REJECT", "message": "Too short.",
                                        "rejection_category": "LOW_EFFORT"})
    assert short.status_code == 400 and "message" in short.json()["error"]["detail"]
    unknown = researcher.post(path, json={"action": "REJECT", "message": REASON,
                                          "rejection_category": "BORING"})
    assert unknown.status_code == 400
    assert "rejection_category" in unknown.json()["error"]["detail"]
    done = researcher.post(path, json={"action": "REJECT", "message": REASON,
                                       "rejection_category": "LOW_EFFORT"})
    assert done.json()["status"] == "REJECTED"
    assert researcher.post(path, json={"action": "APPROVE"}).status_code == 400


def test_a_submission_still_in_progress_cannot_be_reviewed(researcher, emulator):
    from tests.prolific.emulator.conftest import Participant

    study = researcher.published()
    Participant(emulator, "9" * 24).take_part(study["id"])
    (working,) = researcher.submissions(study["id"])
    answer = researcher.post(f"submissions/{working['id']}/transition/",
                             json={"action": "APPROVE"})
    assert answer.status_code == 400 and "ACTIVE" in answer.json()["error"]["detail"]["action"][0]


def test_bulk_approval_by_participants_of_a_study_or_by_submissions(researcher, emulator):
    study, listed = _reviewable(researcher, emulator, count=3)
    by_people = researcher.post("submissions/bulk-approve/", json={
        "study_id": study["id"], "participant_ids": [listed[0]["participant_id"]]})
    assert by_people.status_code == 200
    by_ids = researcher.post("submissions/bulk-approve/",
                             json={"submission_ids": [listed[1]["id"], listed[2]["id"]]})
    assert by_ids.status_code == 200
    assert {s["status"] for s in researcher.submissions(study["id"])} == {"APPROVED"}
    unknown = researcher.post("submissions/bulk-approve/", json={"submission_ids": ["f" * 24]})
    assert unknown.status_code == 400


def test_a_study_submissions_can_also_be_read_by_limit_and_offset(researcher, emulator):
    study, _ = _reviewable(researcher, emulator, count=5)
    first = researcher.get(f"studies/{study['id']}/submissions/",
                           params={"limit": 2, "offset": 0}).json()
    seen = [s["participant_id"] for s in first["results"]]
    url = first["_links"]["next"]["href"]
    while url:
        page = researcher.session.get(url).json()
        seen += [s["participant_id"] for s in page["results"]]
        url = page["_links"]["next"]["href"]
    assert seen == [f"{n:024x}" for n in range(5)]
