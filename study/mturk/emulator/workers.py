"""What a requester does to workers directly: blocks, emails, and event notifications."""

from __future__ import annotations

import re

from study.mturk.emulator.registry import operation, page
from study.mturk.emulator.state import ServiceError, State


@operation("CreateWorkerBlock")
def create_worker_block(state: State, params: dict) -> dict:
    state.data["blocks"][params["WorkerId"]] = params["Reason"]
    return {}


@operation("DeleteWorkerBlock")
def delete_worker_block(state: State, params: dict) -> dict:
    state.data["blocks"].pop(params["WorkerId"], None)
    return {}


@operation("ListWorkerBlocks")
def list_worker_blocks(state: State, params: dict) -> dict:
    blocks = [{"WorkerId": w, "Reason": r} for w, r in sorted(state.data["blocks"].items())]
    return page(blocks, params, "WorkerBlocks")


@operation("NotifyWorkers")
def notify_workers(state: State, params: dict) -> dict:
    """MTurk emails a worker only if this requester has approved or rejected their work;
    for anyone else it reports a failure and sends nothing."""
    failures = []
    for worker_id in params["WorkerIds"]:
        if not state.data["workers"].get(worker_id, {}).get("_reviewed"):
            failures.append(
                {
                    "NotifyWorkersFailureCode": "HardFailure",
                    "NotifyWorkersFailureMessage": (
                        f"Cannot notify worker {worker_id}: you have not approved or rejected any "
                        "of their work."
                    ),
                    "WorkerId": worker_id,
                }
            )
            continue
        state.data["emails"].append(
            {
                "WorkerId": worker_id,
                "Subject": params["Subject"],
                "MessageText": params["MessageText"],
                "SentTime": state.now(),
            }
        )
    return {"NotifyWorkersFailureStatuses": failures}


def _check_destination(notification: dict) -> None:
    transport, destination = notification["Transport"], notification["Destination"]
    valid = {
        "Email": r"[^@\s]+@[^@\s]+\.[^@\s]+",
        "SQS": r"https://sqs\.[a-z0-9-]+\.amazonaws\.com/\d+/[\w-]+",
        "SNS": r"arn:aws:sns:[a-z0-9-]+:\d+:[\w-]+",
    }[transport]
    if not re.fullmatch(valid, destination):
        raise ServiceError(f"The destination {destination!r} is not a valid {transport} address.")
    if notification["Version"] != "2006-05-05":
        raise ServiceError("The notification Version must be 2006-05-05.")


@operation("UpdateNotificationSettings")
def update_notification_settings(state: State, params: dict) -> dict:
    if params["HITTypeId"] not in state.data["hit_types"]:
        raise ServiceError(f"HITType {params['HITTypeId']} does not exist.")
    settings = state.data["notification_settings"].setdefault(params["HITTypeId"], {})
    if "Notification" in params:
        _check_destination(params["Notification"])
        settings["Notification"] = params["Notification"]
    if "Active" in params:
        if "Notification" not in settings:
            raise ServiceError("Set a Notification for this HIT type before activating it.")
        settings["Active"] = params["Active"]
    return {}


@operation("SendTestEventNotification")
def send_test_event_notification(state: State, params: dict) -> dict:
    _check_destination(params["Notification"])
    state.data["sent_notifications"].append(
        {
            "Notification": params["Notification"],
            "EventType": params["TestEventType"],
            "SentTime": state.now(),
        }
    )
    return {}
