"""Participant groups gate who may join, read at each join; messages reach participants."""

from __future__ import annotations

import pytest

from tests.prolific.emulator.conftest import Participant, take_part_and_finish


@pytest.fixture
def workspace(researcher):
    return researcher.get("users/me/").json()["current_workspace_id"]


def _group(researcher, workspace, name="Qualified", members=()):
    answer = researcher.post("participant-groups/", json={
        "name": name, "workspace_id": workspace, "participant_ids": list(members)})
    assert answer.status_code == 201, answer.text
    return answer.json()


def test_groups_and_their_members(researcher, workspace):
    group = _group(researcher, workspace, members=["a" * 24])
    assert group["participant_count"] == 1 and group["workspace_id"] == workspace
    path = f"participant-groups/{group['id']}/participants/"
    added = researcher.post(path, json={"participant_ids": ["b" * 24, "a" * 24]}).json()
    assert sorted(m["participant_id"] for m in added["results"]) == ["a" * 24, "b" * 24]
    left = researcher.delete(path, json={"participant_ids": ["a" * 24, "z" * 24]}).json()
    assert [m["participant_id"] for m in left["results"]] == ["b" * 24]
    listed = researcher.get("participant-groups/", params={"workspace_id": workspace}).json()
    assert [g["id"] for g in listed["results"]] == [group["id"]]
    renamed = researcher.patch(f"participant-groups/{group['id']}/", json={"name": "Round 2"})
    assert renamed.json()["name"] == "Round 2" and renamed.json()["participant_count"] == 1
    assert researcher.delete(f"participant-groups/{group['id']}/").status_code == 204
    assert researcher.get(f"participant-groups/{group['id']}/").status_code == 404
    assert researcher.post("participant-groups/", json={"name": "x"}).status_code == 400


def test_an_allow_list_admits_members_only_and_follows_changes(researcher, emulator, workspace):
    group = _group(researcher, workspace, members=["a" * 24])
    study = researcher.published(filters=[{"filter_id": "participant_group_allowlist",
                                           "selected_values": [group["id"]]}])
    assert Participant(emulator, "a" * 24).take_part(study["id"]).status_code == 302
    outsider = Participant(emulator, "b" * 24)
    assert outsider.take_part(study["id"]).status_code == 409
    researcher.post(f"participant-groups/{group['id']}/participants/",
                    json={"participant_ids": ["b" * 24]})
    assert outsider.take_part(study["id"]).status_code == 302


def test_a_block_list_refuses_members(researcher, emulator, workspace):
    done = _group(researcher, workspace, name="Took part", members=["a" * 24])
    study = researcher.published(filters=[{"filter_id": "participant_group_blocklist",
                                           "selected_values": [done["id"]]}])
    assert Participant(emulator, "a" * 24).take_part(study["id"]).status_code == 409
    assert Participant(emulator, "b" * 24).take_part(study["id"]).status_code == 302


def test_a_filter_naming_an_unknown_group_is_refused(researcher):
    body = {**researcher.study(), "filters": [
        {"filter_id": "participant_group_allowlist", "selected_values": ["f" * 24]}]}
    answer = researcher.post("studies/", json=body)
    assert answer.status_code == 400 and "filters" in answer.json()["error"]["detail"]


def test_a_completion_code_can_add_the_participant_to_a_group(researcher, emulator, workspace):
    group = _group(researcher, workspace)
    study = researcher.published(completion_codes=[{
        "code": "QUAL1", "code_type": "COMPLETED",
        "actions": [{"action": "MANUALLY_REVIEW"},
                    {"action": "ADD_TO_PARTICIPANT_GROUP", "participant_group": group["id"]}]}])
    take_part_and_finish(emulator, study["id"], "a" * 24, code="QUAL1")
    members = researcher.get(f"participant-groups/{group['id']}/participants/").json()
    assert [m["participant_id"] for m in members["results"]] == ["a" * 24]


def test_messages_go_only_to_participants_of_the_study(researcher, emulator):
    study = researcher.published()
    take_part_and_finish(emulator, study["id"], "a" * 24)
    sent = researcher.post("messages/", json={"recipient_id": "a" * 24, "study_id": study["id"],
                                              "body": "Thank you! A bonus is on its way."})
    assert sent.status_code == 204
    stranger = researcher.post("messages/", json={"recipient_id": "b" * 24,
                                                  "study_id": study["id"], "body": "Hello"})
    assert stranger.status_code == 400
    bulk = researcher.post("messages/bulk/", json={"ids": ["a" * 24], "study_id": study["id"],
                                                   "body": "Round 2 is open."})
    assert bulk.status_code == 204
    listed = researcher.get("messages/", params={"user_id": "a" * 24}).json()["results"]
    assert [m["body"] for m in listed] == ["Thank you! A bonus is on its way.", "Round 2 is open."]
    assert listed[0]["data"] == {"study_id": study["id"]}
