"""Messages to participants, the counterpart of MTurk's NotifyWorkers.

A researcher may write to a participant about a study they took part in (the broadcast docs:
"Every recipient must have a submission for the study, in any status"); the emulator applies that
rule to single and bulk messages too, and keeps what was sent so a test can read it back.
"""

from __future__ import annotations

from study.prolific.emulator.call import Call
from study.prolific.emulator.errors import ApiError, invalid
from study.prolific.emulator.state import State, iso, new_id


def _deliver(state: State, recipients: list[str], study_id: str, body: str) -> None:
    if not isinstance(body, str) or not body.strip():
        raise invalid("body", "This field may not be blank.")
    if not study_id:
        raise invalid("study_id", "This field is required.")
    state.study(study_id)
    took_part = {s["participant_id"] for s in state.submissions_of(study_id)}
    strangers = [r for r in recipients if r not in took_part]
    if strangers:
        raise ApiError(400, {"recipient_id": [
            "These participants have no submission in the study: " + ", ".join(strangers) + "."]})
    for recipient in recipients:
        state.data["messages"].append({"id": new_id(), "sender_id": state.data["user"]["id"],
                                       "recipient_id": recipient, "body": body,
                                       "study_id": study_id, "sent_at": state.now()})


def send(state: State, call: Call) -> tuple[int, None]:
    recipient = call.body.get("recipient_id")
    if not recipient:
        raise invalid("recipient_id", "This field is required.")
    _deliver(state, [recipient], call.body.get("study_id"), call.body.get("body"))
    return 204, None


def send_bulk(state: State, call: Call) -> tuple[int, None]:
    ids = call.body.get("ids")
    if not isinstance(ids, list) or not ids:
        raise invalid("ids", "This list may not be empty.")
    _deliver(state, ids, call.body.get("study_id"), call.body.get("body"))
    return 204, None


def list_messages(state: State, call: Call) -> tuple[int, dict]:
    user_id = call.query.get("user_id")
    if not user_id and not call.query.get("created_after"):
        raise invalid("user_id", "Either user_id or created_after is required.")
    found = [m for m in state.data["messages"]
             if user_id in (None, m["recipient_id"], m["sender_id"])]
    return 200, {"results": [
        {"id": m["id"], "sender_id": m["sender_id"], "recipient_id": m["recipient_id"],
         "body": m["body"], "sent_at": iso(m["sent_at"]), "type": "message",
         "data": {"study_id": m["study_id"]}}
        for m in found
    ]}
