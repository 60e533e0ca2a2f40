"""Submissions: listing (paginated), approving, rejecting with its rules, bulk approval.

Docs (transition-submission): only a completed submission is reviewed; once changed a status
cannot be restored; the endpoint "is idempotent, so if you make the same request twice, the second
request will be ignored"; a rejection needs a `message` of at least 100 characters and a
`rejection_category`.
"""

from __future__ import annotations

from study.prolific.emulator.call import Call, paginate
from study.prolific.emulator.errors import ApiError, invalid
from study.prolific.emulator.state import State, iso

REJECTION_CATEGORIES = (
    "TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
    "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER",
)
MESSAGE_MINIMUM = 100
ACTIONS = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}
ORDERINGS = ("started_at", "completed_at", "status", "participant_id", "study_code")


def view(submission: dict) -> dict:
    started, completed = submission["started_at"], submission.get("completed_at")
    return {
        "id": submission["id"],
        "study_id": submission["study_id"],
        "participant_id": submission["participant_id"],
        "participant": submission["participant_id"],
        "status": submission["status"],
        "started_at": iso(started),
        "completed_at": iso(completed),
        "is_complete": completed is not None,
        "time_taken": round(completed - started) if completed is not None else None,
        "entered_code": submission.get("entered_code"),
        "study_code": submission.get("entered_code"),
        "reward": submission["reward"],
        "bonus_payments": list(submission["bonus_payments"]),
        "return_requested": None,
    }


def _listed(call: Call, submissions: list[dict]) -> dict:
    ordering = call.query.get("ordering") or "started_at"
    key = ordering.lstrip("-")
    if key not in ORDERINGS:
        raise invalid("ordering", f"Allowed values: {', '.join(ORDERINGS)}.")
    views = [view(s) for s in submissions]
    views.sort(key=lambda v: (v[key] is None, v[key] or "", v["id"]),
               reverse=ordering.startswith("-"))
    status = call.query.get("status")
    if status:
        wanted = status.upper().replace("_", " ")
        views = [v for v in views if v["status"].replace("-", " ") == wanted.replace("-", " ")]
    return paginate(call, views)


def of_study(state: State, call: Call, study_id: str) -> tuple[int, dict]:
    state.study(study_id)
    return 200, _listed(call, state.submissions_of(study_id))


def list_all(state: State, call: Call) -> tuple[int, dict]:
    study_id = call.query.get("study")
    submissions = state.submissions_of(study_id) if study_id else sorted(
        state.data["submissions"].values(), key=lambda s: (s["started_at"], s["id"]))
    return 200, _listed(call, submissions)


def get(state: State, call: Call, submission_id: str) -> tuple[int, dict]:
    return 200, view(state.submission(submission_id))


def transition(state: State, call: Call, submission_id: str) -> tuple[int, dict]:
    submission = state.submission(submission_id)
    action = call.body.get("action")
    if action not in ACTIONS:
        raise invalid("action", f"\"{action}\" is not a valid choice.")
    if submission["status"] == ACTIONS[action]:
        return 200, view(submission)  # the same request again: ignored, as documented
    if action == "REJECT":
        message = call.body.get("message")
        if not isinstance(message, str) or len(message.strip()) < MESSAGE_MINIMUM:
            raise invalid("message", "A rejection needs a message to the participant of at "
                          f"least {MESSAGE_MINIMUM} characters.")
        if call.body.get("rejection_category") not in REJECTION_CATEGORIES:
            raise invalid("rejection_category",
                          f"\"{call.body.get('rejection_category')}\" is not a valid choice.")
    if submission["status"] != "AWAITING REVIEW":
        raise invalid("action", f"Cannot {action} a submission that is "
                      f"{submission['status']}; only AWAITING REVIEW can be reviewed.")
    if action == "APPROVE":
        state.approve(submission)
    else:
        submission.update(status="REJECTED", _reviewed_at=state.now(),
                          _rejection={"message": call.body["message"],
                                      "category": call.body["rejection_category"]})
    state.update_study_status(state.data["studies"][submission["study_id"]])
    return 200, view(submission)


def bulk_approve(state: State, call: Call) -> tuple[int, dict]:
    """Either {"study_id", "participant_ids"} or {"submission_ids"} (docs recommend the latter)."""
    body = call.body
    if body.get("submission_ids") is not None:
        ids = body["submission_ids"]
        if not isinstance(ids, list) or not ids:
            raise invalid("submission_ids", "This list may not be empty.")
        chosen = [state.data["submissions"].get(i) for i in ids]
        unknown = [i for i, s in zip(ids, chosen) if s is None]
    else:
        study_id, ids = body.get("study_id"), body.get("participant_ids")
        if not study_id:
            raise invalid("study_id", "This field is required.")
        if not isinstance(ids, list) or not ids:
            raise invalid("participant_ids", "This list may not be empty.")
        by_participant = {s["participant_id"]: s for s in state.submissions_of(study_id)}
        chosen = [by_participant.get(i) for i in ids]
        unknown = [i for i, s in zip(ids, chosen) if s is None]
    if unknown:
        raise ApiError(400, f"Unknown ids: {', '.join(unknown)}.")
    not_ready = [s["id"] for s in chosen if s["status"] not in ("AWAITING REVIEW", "APPROVED")]
    if not_ready:
        raise ApiError(400, "These submissions are not awaiting review: "
                       f"{', '.join(not_ready)}.")
    for submission in chosen:
        if submission["status"] == "AWAITING REVIEW":
            state.approve(submission)
            state.update_study_status(state.data["studies"][submission["study_id"]])
    return 200, {}
