"""Studies: drafts, their checks, the status machine and its transitions.

UNPUBLISHED --PUBLISH--> ACTIVE --PAUSE--> PAUSED --START--> ACTIVE; ACTIVE or PAUSED --STOP-->
AWAITING REVIEW (COMPLETED once nothing awaits review). The movement a study makes by itself
(full -> AWAITING REVIEW -> COMPLETED, a freed place reopening it) is State.update_study_status.
Publishing checks the minimum reward rate and the balance, then holds reward + fee for every place
(docs: "Checking if your account has sufficient balance ... Locking the amount required").
"""

from __future__ import annotations

from study.prolific.emulator import fees
from study.prolific.emulator.call import Call, paginate
from study.prolific.emulator.errors import ApiError, invalid
from study.prolific.emulator.state import State, iso, new_id

ID_OPTIONS = ("url_parameters", "question", "not_required")
DEVICES = ("desktop", "tablet", "mobile")
CODE_ACTIONS = ("MANUALLY_REVIEW", "AUTOMATICALLY_APPROVE", "ADD_TO_PARTICIPANT_GROUP",
                "REMOVE_FROM_PARTICIPANT_GROUP")
GROUP_FILTERS = ("participant_group_allowlist", "participant_group_blocklist")
EDITABLE_WHEN_PUBLISHED = ("total_available_places", "name", "internal_name", "description")
FIELDS = ("name", "internal_name", "description", "external_study_url", "prolific_id_option",
          "completion_codes", "total_available_places", "estimated_completion_time",
          "maximum_allowed_time", "reward", "device_compatibility", "peripheral_requirements",
          "filters", "project")
REQUIRED = ("name", "description", "external_study_url", "prolific_id_option",
            "completion_codes", "total_available_places", "estimated_completion_time", "reward")
TRANSITIONS = {  # action -> (statuses it applies to, status it leads to)
    "PUBLISH": (("UNPUBLISHED",), "ACTIVE"),
    "PAUSE": (("ACTIVE",), "PAUSED"),
    "START": (("PAUSED",), "ACTIVE"),
    "STOP": (("ACTIVE", "PAUSED"), "AWAITING REVIEW"),
}


# -- checks -----------------------------------------------------------------------------------

def _whole(body: dict, name: str, minimum: int = 1) -> None:
    value = body[name]
    if isinstance(value, float) and value.is_integer():
        body[name] = value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(name, "A valid integer is required.")
    if value < minimum:
        raise invalid(name, f"Ensure this value is greater than or equal to {minimum}.")


def check(state: State, study: dict, changed: set[str]) -> None:
    """Refuse what Prolific refuses, one field at a time in DRF's words."""
    for name in REQUIRED:
        if study.get(name) in (None, "", []):
            raise invalid(name, "This field is required.")
    for name in ("total_available_places", "estimated_completion_time", "reward"):
        _whole(study, name)
    if study.get("maximum_allowed_time") is not None:
        _whole(study, "maximum_allowed_time", study["estimated_completion_time"])
    if study["prolific_id_option"] not in ID_OPTIONS:
        raise invalid("prolific_id_option",
                      f"\"{study['prolific_id_option']}\" is not a valid choice.")
    url = study["external_study_url"]
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise invalid("external_study_url", "Enter a valid URL.")
    if study["prolific_id_option"] == "url_parameters" and "{{%PROLIFIC_PID%}}" not in url:
        raise invalid("external_study_url", "With prolific_id_option \"url_parameters\" the URL "
                      "must carry {{%PROLIFIC_PID%}} so the participant's id reaches the study.")
    _check_codes(state, study["completion_codes"])
    devices = study.get("device_compatibility") or []
    if not isinstance(devices, list) or any(d not in DEVICES for d in devices):
        raise invalid("device_compatibility", f"Choose among {', '.join(DEVICES)}.")
    _check_filters(state, study.get("filters") or [])
    if changed & {"reward", "estimated_completion_time"}:
        check_rate(state, study)


def check_rate(state: State, study: dict) -> None:
    minimum = fees.MINIMUM_HOURLY.get(state.currency, 800)
    rate = fees.hourly_rate(study["reward"], study["estimated_completion_time"])
    if rate < minimum:
        raise invalid("reward", (
            f"Your study's reward per hour ({fees.show(round(rate), state.currency)}) is below "
            f"the minimum of {fees.show(minimum, state.currency)} per hour. Increase the reward "
            "or lower the estimated completion time."
        ))


def _check_codes(state: State, codes) -> None:
    if not isinstance(codes, list) or not codes:
        raise invalid("completion_codes", "This field is required.")
    for code in codes:
        if not isinstance(code, dict) or not code.get("code") or not code.get("code_type"):
            raise invalid("completion_codes", "Each completion code needs code and code_type.")
        for action in code.get("actions") or []:
            if action.get("action") not in CODE_ACTIONS:
                raise invalid("completion_codes",
                              f"\"{action.get('action')}\" is not a valid action.")
            if "PARTICIPANT_GROUP" in action["action"]:
                state.group(action.get("participant_group", ""))
    if len({c["code"] for c in codes}) != len(codes):
        raise invalid("completion_codes", "Completion codes must be unique within a study.")


def _check_filters(state: State, filters) -> None:
    if not isinstance(filters, list):
        raise invalid("filters", "Expected a list of items.")
    for item in filters:
        if not isinstance(item, dict) or not item.get("filter_id"):
            raise invalid("filters", "Each filter needs a filter_id.")
        if item["filter_id"] in GROUP_FILTERS:
            for group_id in item.get("selected_values") or []:
                if group_id not in state.data["groups"]:
                    raise invalid("filters", f"Participant group {group_id} does not exist.")


# -- views ------------------------------------------------------------------------------------

def view(state: State, study: dict) -> dict:
    shown = {name: study.get(name) for name in FIELDS}
    rate = fees.hourly_rate(study["reward"], study["estimated_completion_time"])
    submissions = state.submissions_of(study["id"])
    return {
        "id": study["id"],
        **shown,
        "completion_code": study["completion_codes"][0]["code"],
        "completion_option": "url",
        "status": study["status"],
        "places_taken": state.places_taken(study),
        "number_of_submissions": len(submissions),
        "total_cost": state.charge(study["reward"] * study["total_available_places"]).total,
        "currency_code": state.currency,
        "date_created": iso(study["_created_at"]),
        "published_at": iso(study.get("_published_at")),
        "publish_at": None,
        "estimated_reward_per_hour": round(rate),
        "is_underpaying": rate < fees.MINIMUM_HOURLY.get(state.currency, 800),
        "study_type": "SINGLE",
        "researcher": {"id": state.data["user"]["id"], "name": "Emulated Researcher",
                       "email": state.data["user"]["email"]},
    }


# -- operations -------------------------------------------------------------------------------

def create(state: State, call: Call) -> tuple[int, dict]:
    study = {name: call.body.get(name) for name in FIELDS}
    study["internal_name"] = study["internal_name"] or study["name"]
    study["device_compatibility"] = study["device_compatibility"] or list(DEVICES)
    study["peripheral_requirements"] = study["peripheral_requirements"] or []
    study["filters"] = study["filters"] or []
    study["project"] = study["project"] or state.data["project"]["id"]
    legacy = call.body.get("completion_code")
    if not study["completion_codes"] and isinstance(legacy, str) and legacy:
        # The older single-code form (completion_code, completion_option): one COMPLETED code
        # whose submissions are reviewed by hand.
        study["completion_codes"] = [{"code": legacy, "code_type": "COMPLETED",
                                      "actions": [{"action": "MANUALLY_REVIEW"}]}]
    check(state, study, set(FIELDS))
    if study["maximum_allowed_time"] is None:
        # Prolific derives it from the estimate and keeps it under 24 hours (submission docs).
        study["maximum_allowed_time"] = min(3 * study["estimated_completion_time"] + 2, 1440)
    study.update(id=new_id(), status="UNPUBLISHED", _created_at=state.now())
    state.data["studies"][study["id"]] = study
    return 201, view(state, study)


def list_studies(state: State, call: Call) -> tuple[int, dict]:
    studies = sorted((s for s in state.data["studies"].values() if not s.get("_deleted")),
                     key=lambda s: (s["_created_at"], s["id"]))
    return 200, paginate(call, [view(state, s) for s in studies])


def get(state: State, call: Call, study_id: str) -> tuple[int, dict]:
    return 200, view(state, state.study(study_id))


def update(state: State, call: Call, study_id: str) -> tuple[int, dict]:
    study = state.study(study_id)
    changes = {k: v for k, v in call.body.items() if k in FIELDS}
    if study["status"] != "UNPUBLISHED":
        refused = sorted(set(changes) - set(EDITABLE_WHEN_PUBLISHED))
        if refused:
            raise invalid(refused[0], f"{refused[0]} cannot be changed once a study is "
                          "published.")
    proposed = {**study, **changes}
    check(state, proposed, set(changes))
    if study["status"] != "UNPUBLISHED" and "total_available_places" in changes:
        if study.get("_stopped"):
            raise invalid("total_available_places",
                          "A stopped study cannot take more participants.")
        added = proposed["total_available_places"] - study["total_available_places"]
        if added < 0:
            raise invalid("total_available_places",
                          "The number of places of a published study can only be increased.")
        state.require_funds(state.charge(study["reward"] * added).total,
                            f"{added} more place(s)")
    study.update({name: proposed[name] for name in changes})
    state.update_study_status(study)
    return 200, view(state, study)


def delete(state: State, call: Call, study_id: str) -> tuple[int, None]:
    study = state.study(study_id)
    if study["status"] != "UNPUBLISHED":
        raise ApiError(400, "Only a draft (UNPUBLISHED) study can be deleted.")
    study["_deleted"] = True
    return 204, None


def transition(state: State, call: Call, study_id: str) -> tuple[int, dict]:
    study = state.study(study_id)
    action = call.body.get("action")
    if action not in TRANSITIONS:
        raise invalid("action", f"\"{action}\" is not a valid choice.")
    allowed, target = TRANSITIONS[action]
    if study["status"] not in allowed:
        raise invalid("action", f"Cannot {action} a study that is {study['status']}.")
    if action == "PUBLISH":
        check_rate(state, study)
        state.require_funds(
            state.charge(study["reward"] * study["total_available_places"]).total,
            "publishing this study",
        )
        study["_published_at"] = state.now()
    if action == "STOP":
        study["_stopped"] = True
    study["status"] = target
    state.update_study_status(study)
    return 200, view(state, study)
