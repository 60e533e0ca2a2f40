"""The participant's side: taking part, coming back with a code, and who may take part."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import requests

from tests.prolific.emulator.conftest import Participant, control, take_part_and_finish


def test_taking_part_opens_the_study_url_with_its_placeholders_filled(researcher, emulator):
    study = researcher.published()
    person = Participant(emulator)  # no id given: the emulator makes one
    answer = person.take_part(study["id"])
    assert answer.status_code == 302
    query = parse_qs(urlsplit(answer.headers["Location"]).query)
    (submission,) = researcher.submissions(study["id"])
    assert query == {"PROLIFIC_PID": [person.id], "STUDY_ID": [study["id"]],
                     "SESSION_ID": [submission["id"]]}
    assert submission["status"] == "ACTIVE" and submission["participant_id"] == person.id


def test_the_right_code_sends_the_submission_to_review(researcher, emulator):
    study = researcher.published()
    person = take_part_and_finish(emulator, study["id"], "a" * 24)
    (submission,) = researcher.submissions(study["id"])
    assert submission["status"] == "AWAITING REVIEW" and submission["entered_code"] == "C1WRITE"
    assert person.finish().status_code == 409  # nothing left in progress


def test_a_wrong_code_or_none_is_flagged_for_review(researcher, emulator):
    study = researcher.published()
    wrong = Participant(emulator, "a" * 24)
    wrong.take_part(study["id"])
    page = wrong.finish("GUESSED")
    assert "not recognised" in page.text
    take_part_and_finish(emulator, study["id"], "b" * 24, code=None)
    codes = {s["participant_id"]: (s["status"], s["entered_code"])
             for s in researcher.submissions(study["id"])}
    assert codes == {"a" * 24: ("AWAITING REVIEW", "GUESSED"),
                     "b" * 24: ("AWAITING REVIEW", "NOCODE")}


def test_an_automatically_approving_code_pays_at_once(researcher, emulator):
    study = researcher.published(completion_codes=[{
        "code": "AUTO1", "code_type": "COMPLETED",
        "actions": [{"action": "AUTOMATICALLY_APPROVE"}]}])
    take_part_and_finish(emulator, study["id"], "a" * 24, code="AUTO1")
    (submission,) = researcher.submissions(study["id"])
    assert submission["status"] == "APPROVED"
    assert researcher.balance()["total_balance"] == 100_000 - 200


def test_only_an_active_study_with_a_free_place_takes_participants(researcher, emulator):
    draft = researcher.study()
    assert Participant(emulator, "a" * 24).take_part(draft["id"]).status_code == 409
    study = researcher.published(total_available_places=1)
    assert Participant(emulator, "a" * 24).take_part(study["id"]).status_code == 302
    full = Participant(emulator, "b" * 24).take_part(study["id"])
    assert full.status_code == 409 and "full" in full.text
    again = requests.post(emulator.url + "/_emulator/take-part",
                          json={"study_id": study["id"], "participant_id": "a" * 24})
    assert again.status_code == 409 and "already" in again.json()["error"]
    paused = researcher.published()
    researcher.post(f"studies/{paused['id']}/transition/", json={"action": "PAUSE"})
    assert Participant(emulator, "c" * 24).take_part(paused["id"]).status_code == 409


def test_a_returned_or_timed_out_place_is_offered_again(researcher, emulator):
    study = researcher.published(total_available_places=1, estimated_completion_time=10,
                                 maximum_allowed_time=30)
    first = Participant(emulator, "a" * 24)
    first.take_part(study["id"])
    (submission,) = researcher.submissions(study["id"])
    returned = control(emulator, "return", {"submission_id": submission["id"]})
    assert returned.json()["status"] == "RETURNED"
    second = Participant(emulator, "b" * 24)
    assert second.take_part(study["id"]).status_code == 302
    control(emulator, "clock", {"advance": 31 * 60})
    statuses = {s["participant_id"]: s["status"] for s in researcher.submissions(study["id"])}
    assert statuses == {"a" * 24: "RETURNED", "b" * 24: "TIMED-OUT"}
    assert Participant(emulator, "c" * 24).take_part(study["id"]).status_code == 302


def test_the_home_page_lists_studies_open_to_participants(researcher, emulator):
    open_study, draft = researcher.published(name="Open one"), researcher.study(name="Draft one")
    page = requests.get(emulator.url + "/").text
    assert "Open one" in page and open_study["id"] in page
    assert draft["id"] not in page


def test_the_studies_open_to_participants_show_their_reward_in_the_workspaces_currency(tmp_path):
    from study.prolific.emulator import State, serve_in_thread
    from tests.prolific.emulator.conftest import Researcher

    running = serve_in_thread(State(tmp_path / "pounds.json", currency="GBP"))
    try:
        Researcher(running).published(reward=250)
        page = requests.get(running.url + "/").text
        assert "£2.50," in page and "cents" not in page
    finally:
        running.stop()
