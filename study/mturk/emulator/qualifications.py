"""Qualification types, the qualifications workers hold, and qualification requests."""

from __future__ import annotations

from study.mturk.emulator.registry import operation, page
from study.mturk.emulator.state import SYSTEM_QUALIFICATIONS, ServiceError, State

SYSTEM_NAMES = {
    "000000000000000000L0": "Worker_PercentAssignmentsApproved",
    "00000000000000000040": "Worker_NumberHITsApproved",
    "00000000000000000071": "Worker_Locale",
}


def _view(record: dict) -> dict:
    return {key: value for key, value in record.items() if not key.startswith("_")}


def _system_type(type_id: str) -> dict:
    return {
        "QualificationTypeId": type_id,
        "Name": SYSTEM_NAMES[type_id],
        "Description": "A qualification MTurk maintains for every worker.",
        "QualificationTypeStatus": "Active",
        "IsRequestable": False,
        "AutoGranted": False,
    }


def _own_type(state: State, type_id: str) -> dict:
    if type_id in SYSTEM_QUALIFICATIONS:
        raise ServiceError(f"You do not own the qualification type {type_id}; MTurk maintains it.")
    return state.qualification_type(type_id)


@operation("CreateQualificationType")
def create_qualification_type(state: State, params: dict) -> dict:
    for existing in state.data["qualification_types"].values():
        if existing["Name"] == params["Name"] and not existing.get("_deleted"):
            raise ServiceError(
                "You have already created a QualificationType with this name. A QualificationType's "
                "name must be unique among all of the QualificationTypes created by the same user."
            )
    if params.get("Test") and params.get("AutoGranted"):
        raise ServiceError("A qualification type with a Test cannot be AutoGranted.")
    if params.get("Test") and not params.get("TestDurationInSeconds"):
        raise ServiceError("TestDurationInSeconds must be given with a Test.")
    record = {
        "QualificationTypeId": state.new_id(),
        "CreationTime": state.now(),
        "Name": params["Name"],
        "Description": params["Description"],
        "Keywords": params.get("Keywords", ""),
        "QualificationTypeStatus": params["QualificationTypeStatus"],
        "IsRequestable": True,
        "AutoGranted": params.get("AutoGranted", False),
    }
    for key in (
        "Test",
        "AnswerKey",
        "TestDurationInSeconds",
        "RetryDelayInSeconds",
        "AutoGrantedValue",
    ):
        if key in params:
            record[key] = params[key]
    state.data["qualification_types"][record["QualificationTypeId"]] = record
    return {"QualificationType": _view(record)}


@operation("GetQualificationType")
def get_qualification_type(state: State, params: dict) -> dict:
    type_id = params["QualificationTypeId"]
    if type_id in SYSTEM_QUALIFICATIONS:
        return {"QualificationType": _system_type(type_id)}
    return {"QualificationType": _view(state.qualification_type(type_id))}


@operation("ListQualificationTypes")
def list_qualification_types(state: State, params: dict) -> dict:
    types = [t for t in state.data["qualification_types"].values() if not t.get("_deleted")]
    types = sorted(types, key=lambda t: (t["CreationTime"], t["QualificationTypeId"]))
    found = [_view(t) for t in types]
    if not params.get("MustBeOwnedByCaller"):
        found = [_system_type(i) for i in SYSTEM_NAMES] + found
    if params.get("MustBeRequestable"):
        found = [t for t in found if t["IsRequestable"]]
    query = (params.get("Query") or "").lower()
    if query:
        found = [
            t for t in found if query in t["Name"].lower() or query in t["Description"].lower()
        ]
    return page(found, params, "QualificationTypes")


@operation("UpdateQualificationType")
def update_qualification_type(state: State, params: dict) -> dict:
    record = _own_type(state, params["QualificationTypeId"])
    for key, value in params.items():
        if key != "QualificationTypeId":
            record[key] = value
    return {"QualificationType": _view(record)}


@operation("DeleteQualificationType")
def delete_qualification_type(state: State, params: dict) -> dict:
    _own_type(state, params["QualificationTypeId"])["_deleted"] = True
    return {}


@operation("AssociateQualificationWithWorker")
def associate(state: State, params: dict) -> dict:
    type_id = params["QualificationTypeId"]
    _own_type(state, type_id)
    state.data["qualifications"][f"{type_id} {params['WorkerId']}"] = {
        "QualificationTypeId": type_id,
        "WorkerId": params["WorkerId"],
        "GrantTime": state.now(),
        "IntegerValue": params.get("IntegerValue", 1),
        "Status": "Granted",
    }
    return {}


@operation("DisassociateQualificationFromWorker")
def disassociate(state: State, params: dict) -> dict:
    type_id = params["QualificationTypeId"]
    _own_type(state, type_id)
    held = state.data["qualifications"].get(f"{type_id} {params['WorkerId']}")
    if held is None or held["Status"] != "Granted":
        raise ServiceError("You requested a Qualification that does not exist.")
    held["Status"] = "Revoked"
    if params.get("Reason"):
        held["_reason"] = params["Reason"]
    return {}


@operation("GetQualificationScore")
def get_qualification_score(state: State, params: dict) -> dict:
    _own_type(state, params["QualificationTypeId"])
    held = state.data["qualifications"].get(f"{params['QualificationTypeId']} {params['WorkerId']}")
    if held is None or held["Status"] != "Granted":
        raise ServiceError("You requested a Qualification that does not exist.")
    return {"Qualification": _view(held)}


@operation("ListWorkersWithQualificationType")
def list_workers_with_qualification_type(state: State, params: dict) -> dict:
    _own_type(state, params["QualificationTypeId"])
    held = [
        _view(q)
        for q in state.data["qualifications"].values()
        if q["QualificationTypeId"] == params["QualificationTypeId"]
        and params.get("Status", q["Status"]) == q["Status"]
    ]
    return page(sorted(held, key=lambda q: q["GrantTime"]), params, "Qualifications")


@operation("ListHITsForQualificationType")
def list_hits_for_qualification_type(state: State, params: dict) -> dict:
    type_id = params["QualificationTypeId"]
    hits = [
        state.hit_view(h)
        for h in state.data["hits"].values()
        if not h.get("_disposed")
        and any(r["QualificationTypeId"] == type_id for r in h["QualificationRequirements"])
    ]
    return page(hits, params, "HITs")


# -- requests (workers ask for a qualification; see emulator.worker.request_qualification) ----


@operation("ListQualificationRequests")
def list_qualification_requests(state: State, params: dict) -> dict:
    requests = [
        _view(r)
        for r in state.data["qualification_requests"].values()
        if r["_status"] == "Pending"
        and params.get("QualificationTypeId", r["QualificationTypeId"]) == r["QualificationTypeId"]
    ]
    return page(requests, params, "QualificationRequests")


def _pending_request(state: State, request_id: str) -> dict:
    request = state.data["qualification_requests"].get(request_id)
    if request is None or request["_status"] != "Pending":
        raise ServiceError(
            f"QualificationRequest {request_id} does not exist or was already answered."
        )
    return request


@operation("AcceptQualificationRequest")
def accept_qualification_request(state: State, params: dict) -> dict:
    request = _pending_request(state, params["QualificationRequestId"])
    request["_status"] = "Accepted"
    associate(
        state,
        {
            "QualificationTypeId": request["QualificationTypeId"],
            "WorkerId": request["WorkerId"],
            "IntegerValue": params.get("IntegerValue", 1),
        },
    )
    return {}


@operation("RejectQualificationRequest")
def reject_qualification_request(state: State, params: dict) -> dict:
    _pending_request(state, params["QualificationRequestId"])["_status"] = "Rejected"
    return {}
