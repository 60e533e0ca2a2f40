"""Talking to workers directly: emails (NotifyWorkers) and blocks.

MTurk emails a worker only if this requester has approved or rejected their work before, and
takes at most 100 workers per call; both limits are handled here and failures are reported per
worker rather than lost.
"""

from __future__ import annotations

from study.mturk import validate
from study.mturk.context import Context

NOTIFY_BATCH = 100  # the model's documentation: "up to 100 Worker IDs"


def notify(ctx: Context, worker_ids: list[str], subject: str, message: str) -> dict[str, str]:
    """Email the workers; returns worker id -> why MTurk did not send to them."""
    failures = {}
    unique = list(dict.fromkeys(worker_ids))
    for start in range(0, len(unique), NOTIFY_BATCH):
        response = ctx.requester.call(
            "NotifyWorkers",
            Subject=subject,
            MessageText=message,
            WorkerIds=unique[start : start + NOTIFY_BATCH],
        )
        for failure in response.get("NotifyWorkersFailureStatuses", []):
            failures[failure["WorkerId"]] = failure.get(
                "NotifyWorkersFailureMessage", failure["NotifyWorkersFailureCode"]
            )
    return failures


def check_message(subject: str, message: str) -> None:
    """Raise validate.InvalidRequest if MTurk would refuse this email (subject or text too long),
    for a command to say so before it does anything that running it again would not redo."""
    validate.check(
        "NotifyWorkers", {"Subject": subject, "MessageText": message, "WorkerIds": ["A1ANYONE"]}
    )


def block(ctx: Context, worker_id: str, reason: str) -> None:
    """Keep a worker from all of this requester's HITs (the reason is not shown to them)."""
    ctx.requester.call("CreateWorkerBlock", WorkerId=worker_id, Reason=reason)


def unblock(ctx: Context, worker_id: str, reason: str = "") -> None:
    params = {"WorkerId": worker_id}
    if reason:
        params["Reason"] = reason
    ctx.requester.call("DeleteWorkerBlock", **params)


def blocked(ctx: Context) -> list[dict]:
    return list(ctx.requester.pages("ListWorkerBlocks", "WorkerBlocks"))
