"""A simulated participant: take part in a study, come back with a completion code, or return it.

This is Prolific's participant side, which the researcher API does not have; the emulator's pages
and tests use it. Taking part creates an ACTIVE submission and sends the participant to the
study's URL with {{%PROLIFIC_PID%}}, {{%STUDY_ID%}} and {{%SESSION_ID%}} filled (SESSION_ID is the
submission id, docs: "This is the ID we pass to the survey platform using %SESSION_ID%"). The
study sends them back to https://app.prolific.com/submissions/complete?cc=<code>, served here as
/submissions/complete.
"""

from __future__ import annotations

from urllib.parse import quote

from study.prolific.emulator import groups
from study.prolific.emulator.state import HOLDS_PLACE, State, new_id

NO_CODE = "NOCODE"


class Refused(Exception):
    """The participant may not do this; the message says why, as Prolific's pages would."""


def eligibility(state: State, study: dict, participant_id: str) -> str | None:
    """Why `participant_id` may not take part in `study` now, or None if they may."""
    if study["status"] != "ACTIVE":
        return f"This study is not accepting participants (it is {study['status']})."
    if any(s["participant_id"] == participant_id for s in state.submissions_of(study["id"])):
        return "You have already taken part in this study."
    for item in study.get("filters") or []:
        chosen = item.get("selected_values") or []
        inside = any(groups.is_member(state, g, participant_id) for g in chosen)
        if item.get("filter_id") == "participant_group_allowlist" and not inside:
            return "You are not eligible for this study (not in its allowed participant group)."
        if item.get("filter_id") == "participant_group_blocklist" and inside:
            return "You are not eligible for this study (in a blocked participant group)."
    if state.places_taken(study) >= study["total_available_places"]:
        return "This study is full: all its places are taken."
    return None


def take_part(state: State, study_id: str, participant_id: str | None) -> dict:
    study = state.data["studies"].get(study_id)
    if study is None or study.get("_deleted"):
        raise Refused(f"There is no study {study_id}.")
    participant_id = participant_id or new_id()
    reason = eligibility(state, study, participant_id)
    if reason:
        raise Refused(reason)
    submission = {
        "id": new_id(),
        "study_id": study_id,
        "participant_id": participant_id,
        "status": "ACTIVE",
        "started_at": state.now(),
        "completed_at": None,
        "entered_code": None,
        "reward": study["reward"],
        "bonus_payments": [],
    }
    state.data["submissions"][submission["id"]] = submission
    state.update_study_status(study)
    return {"submission_id": submission["id"], "participant_id": participant_id,
            "url": study_url(study, participant_id, submission["id"])}


def study_url(study: dict, participant_id: str, submission_id: str) -> str:
    return (study["external_study_url"]
            .replace("{{%PROLIFIC_PID%}}", quote(participant_id))
            .replace("{{%STUDY_ID%}}", quote(study["id"]))
            .replace("{{%SESSION_ID%}}", quote(submission_id)))


def complete(state: State, participant_id: str, code: str | None) -> dict:
    """Record the participant's return with `code`; answer what the page should say.

    A code of the study runs its actions. Any other code (or none) still completes the submission
    for review, with `entered_code` showing what came back, so the researcher sees it and can
    reject with BAD_CODE or NO_CODE (reading of Prolific's review page, which flags such codes).
    """
    working = [s for s in state.data["submissions"].values()
               if s["participant_id"] == participant_id and s["status"] == "ACTIVE"]
    if not working:
        raise Refused("You have no study in progress to complete.")

    def codes_of(submission: dict) -> dict:
        study = state.data["studies"][submission["study_id"]]
        return {c["code"]: c for c in study["completion_codes"]}

    matching = [s for s in working if code and code in codes_of(s)]
    submission = (matching or sorted(working, key=lambda s: s["started_at"]))[-1]
    study = state.data["studies"][submission["study_id"]]
    submission.update(completed_at=state.now(), entered_code=code or NO_CODE,
                      status="AWAITING REVIEW")
    known = codes_of(submission).get(code or "")
    for action in (known or {}).get("actions") or []:
        name = action.get("action")
        if name == "AUTOMATICALLY_APPROVE":
            state.approve(submission)
        elif name == "ADD_TO_PARTICIPANT_GROUP":
            state.group(action["participant_group"])["members"].setdefault(participant_id,
                                                                           state.now())
        elif name == "REMOVE_FROM_PARTICIPANT_GROUP":
            state.group(action["participant_group"])["members"].pop(participant_id, None)
    state.update_study_status(study)
    return {"submission_id": submission["id"], "status": submission["status"],
            "code_recognised": known is not None}


def return_submission(state: State, submission_id: str) -> dict:
    submission = state.data["submissions"].get(submission_id)
    if submission is None:
        raise Refused(f"There is no submission {submission_id}.")
    if submission["status"] not in HOLDS_PLACE or submission["status"] == "APPROVED":
        raise Refused(f"A submission that is {submission['status']} cannot be returned.")
    submission["status"] = "RETURNED"
    state.update_study_status(state.data["studies"][submission["study_id"]])
    return {"submission_id": submission_id, "status": "RETURNED"}
