"""Participant groups: a workspace's saved lists of participant ids.

A study's `participant_group_allowlist` filter admits only members of the selected groups, its
`participant_group_blocklist` filter refuses them, and membership is read when a participant tries
to join, so adding or removing someone takes effect at once (docs: groups "are dynamic ... any
studies published with a participant group allowlist or blocklist filter will be updated
automatically"). This is how a qualification round gates the main round.
"""

from __future__ import annotations

from study.prolific.emulator.call import Call
from study.prolific.emulator.errors import invalid, not_found
from study.prolific.emulator.state import State, iso, new_id


def view(group: dict) -> dict:
    return {
        "id": group["id"],
        "name": group["name"],
        "description": group.get("description"),
        "workspace_id": group["workspace_id"],
        "organisation_id": None,
        "project_id": None,
        "participant_count": len(group["members"]),
        "is_deleted": group.get("is_deleted", False),
        "feeder_studies": [],
    }


def members(group: dict) -> dict:
    return {"results": [{"participant_id": pid, "datetime_created": iso(since)}
                        for pid, since in group["members"].items()]}


def _ids(body: dict) -> list[str]:
    ids = body.get("participant_ids")
    if ids is None:
        return []
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise invalid("participant_ids", "Expected a list of participant ids.")
    return ids


def create(state: State, call: Call) -> tuple[int, dict]:
    name = call.body.get("name")
    if not name:
        raise invalid("name", "This field is required.")
    workspace_id = call.body.get("workspace_id") or call.body.get("organisation_id")
    if not workspace_id:
        raise invalid("workspace_id", "Either a workspace or organisation ID must be specified.")
    if workspace_id != state.data["workspace"]["id"]:
        raise not_found()
    now = state.now()
    group = {"id": new_id(), "name": name, "description": call.body.get("description"),
             "workspace_id": workspace_id,
             "members": {pid: now for pid in _ids(call.body)}}
    state.data["groups"][group["id"]] = group
    return 201, view(group)


def list_groups(state: State, call: Call) -> tuple[int, dict]:
    workspace_id = call.query.get("workspace_id")
    groups = [view(g) for g in state.data["groups"].values()
              if not g.get("is_deleted") and workspace_id in (None, g["workspace_id"])]
    return 200, {"results": groups, "meta": {"count": len(groups)}}


def get(state: State, call: Call, group_id: str) -> tuple[int, dict]:
    return 200, view(state.group(group_id))


def update(state: State, call: Call, group_id: str) -> tuple[int, dict]:
    group = state.group(group_id)
    for field in ("name", "description"):
        if field in call.body:
            group[field] = call.body[field]
    if "participant_ids" in call.body:  # docs: this overwrites the members
        now = state.now()
        group["members"] = {pid: group["members"].get(pid, now) for pid in _ids(call.body)}
    return 200, view(group)


def delete(state: State, call: Call, group_id: str) -> tuple[int, None]:
    state.group(group_id)["is_deleted"] = True
    return 204, None


def list_members(state: State, call: Call, group_id: str) -> tuple[int, dict]:
    return 200, members(state.group(group_id))


def add_members(state: State, call: Call, group_id: str) -> tuple[int, dict]:
    group, now = state.group(group_id), state.now()
    for pid in _ids(call.body):
        group["members"].setdefault(pid, now)
    return 200, members(group)


def remove_members(state: State, call: Call, group_id: str) -> tuple[int, dict]:
    group = state.group(group_id)
    for pid in _ids(call.body):  # docs: non-members are ignored
        group["members"].pop(pid, None)
    return 200, members(group)


def is_member(state: State, group_id: str, participant_id: str) -> bool:
    group = state.data["groups"].get(group_id)
    return bool(group) and not group.get("is_deleted") and participant_id in group["members"]
