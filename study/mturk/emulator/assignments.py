"""Assignments, approvals, rejections, bonuses and the account balance."""

from __future__ import annotations

from decimal import Decimal

from study.mturk import money
from study.mturk.emulator.registry import operation, page, processed
from study.mturk.emulator.state import ServiceError, State

REVIEWED = ("Submitted", "Approved", "Rejected")
# An assignment rejected in the last 30 days can still be approved (OverrideRejection).
OVERRIDE_WINDOW_SECONDS = 30 * 24 * 3600


def view(assignment: dict) -> dict:
    return {key: value for key, value in assignment.items() if not key.startswith("_")}


@operation("GetAssignment")
def get_assignment(state: State, params: dict) -> dict:
    assignment = state.assignment(params["AssignmentId"])
    hit = state.hit(assignment["HITId"], disposed_ok=True)
    return {"Assignment": view(assignment), "HIT": state.hit_view(hit)}


@operation("ListAssignmentsForHIT")
def list_assignments(state: State, params: dict) -> dict:
    state.hit(params["HITId"])
    wanted = params.get("AssignmentStatuses") or list(REVIEWED)
    assignments = [
        view(a) for a in state.assignments_of(params["HITId"]) if a["AssignmentStatus"] in wanted
    ]
    return page(assignments, params, "Assignments")


def _invalid_state(assignment: dict, allowed: str) -> ServiceError:
    return ServiceError(
        f"This operation can be called with a status of: {allowed}. The assignment "
        f"{assignment['AssignmentId']} is {assignment['AssignmentStatus']}.",
        "AWS.MechanicalTurk.InvalidAssignmentState",
    )


@operation("ApproveAssignment")
def approve_assignment(state: State, params: dict) -> dict:
    assignment = state.assignment(params["AssignmentId"])
    status = assignment["AssignmentStatus"]
    if status == "Rejected" and params.get("OverrideRejection"):
        if state.now() - assignment["SubmitTime"] > OVERRIDE_WINDOW_SECONDS:
            raise ServiceError("Rejections can be overridden only within 30 days of submission.")
        if state.data["hits"][assignment["HITId"]].get("_disposed"):
            raise ServiceError("The HIT of this assignment was deleted; its rejection stands.")
    elif status != "Submitted":
        raise _invalid_state(assignment, "Submitted")
    state.approve(assignment, at=state.now(), feedback=params.get("RequesterFeedback"))
    return {}


@operation("RejectAssignment")
def reject_assignment(state: State, params: dict) -> dict:
    assignment = state.assignment(params["AssignmentId"])
    if assignment["AssignmentStatus"] != "Submitted":
        raise _invalid_state(assignment, "Submitted")
    assignment["AssignmentStatus"] = "Rejected"
    assignment["RejectionTime"] = state.now()
    assignment["RequesterFeedback"] = params["RequesterFeedback"]
    state.worked_for(assignment["WorkerId"])
    return {}


@operation("SendBonus")
def send_bonus(state: State, params: dict) -> dict:
    assignment = state.assignment(params["AssignmentId"])
    if assignment["WorkerId"] != params["WorkerId"]:
        raise ServiceError(
            f"Assignment {assignment['AssignmentId']} was not done by worker {params['WorkerId']}."
        )
    amount = Decimal(params["BonusAmount"])
    if amount < money.CENT:
        raise ServiceError("The bonus amount must be at least $0.01.")
    token = params.get("UniqueRequestToken")
    if token and state.token_seen("SendBonus", token):
        raise processed(token)
    state.debit(money.bonus_cost(amount), f"a bonus of {money.show(amount)}")
    if token:
        state.remember_token("SendBonus", token)
    state.data["bonuses"].append(
        {
            "WorkerId": params["WorkerId"],
            "BonusAmount": money.usd(amount),
            "AssignmentId": assignment["AssignmentId"],
            "Reason": params["Reason"],
            "GrantTime": state.now(),
            "_HITId": assignment["HITId"],
        }
    )
    return {}


@operation("ListBonusPayments")
def list_bonus_payments(state: State, params: dict) -> dict:
    if not params.get("HITId") and not params.get("AssignmentId"):
        raise ServiceError("Either the HITId or the AssignmentId parameter must be given.")
    bonuses = [
        view(b)
        for b in state.data["bonuses"]
        if params.get("AssignmentId", b["AssignmentId"]) == b["AssignmentId"]
        and params.get("HITId", b["_HITId"]) == b["_HITId"]
    ]
    return page(bonuses, params, "BonusPayments")


@operation("GetAccountBalance")
def get_account_balance(state: State, params: dict) -> dict:
    return {"AvailableBalance": state.data["balance"], "OnHoldBalance": "0.00"}


@operation("GetFileUploadURL")
def get_file_upload_url(state: State, params: dict) -> dict:
    state.assignment(params["AssignmentId"])
    raise ServiceError(
        f"The assignment has no file upload answer for question {params['QuestionIdentifier']!r}."
    )
