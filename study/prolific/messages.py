"""Messages to participants (MTurk's NotifyWorkers): `POST messages/`, one participant and one
of this study's Prolific studies at a time, since Prolific lets a researcher write only to
participants who took part in the named study."""

from __future__ import annotations

from study.prolific import studies
from study.prolific.client import ProlificError
from study.prolific.context import Context

MAX_BODY = 5000


class MessageError(RuntimeError):
    pass


def notify(ctx: Context, study_id: str, participant_ids: list[str], body: str) -> dict[str, str]:
    """Send `body` to each participant; participant id -> "sent" or the refusal."""
    if not body.strip():
        raise MessageError("--message is empty. Fix: write what the participants should read.")
    if len(body) > MAX_BODY:
        raise MessageError(f"--message has {len(body)} characters; keep it under {MAX_BODY}.")
    studies.row(ctx, study_id)  # only this study's Prolific studies
    outcomes = {}
    for participant in participant_ids:
        try:
            ctx.client.post(
                "messages/", {"recipient_id": participant, "study_id": study_id, "body": body}
            )
            outcomes[participant] = "sent"
        except ProlificError as error:
            outcomes[participant] = f"failed: {error.message}"
    return outcomes
