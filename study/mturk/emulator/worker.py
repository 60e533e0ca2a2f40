"""A simulated worker: preview, accept (qualifications and blocks enforced), submit, return.

This is the worker's side of MTurk, which the requester API does not have: the emulator's HTTP
routes (emulator.wire) and the tests call it. Submitting mirrors the real task page's form POST
to `<turkSubmitTo>/mturk/externalSubmit`; the fields become QuestionFormAnswers XML.
"""

from __future__ import annotations

from urllib.parse import urlencode
from xml.sax.saxutils import escape

from study.mturk.emulator.hits import external_url
from study.mturk.emulator.state import SYSTEM_QUALIFICATIONS, ServiceError, State

PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
ANSWERS_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionFormAnswers.xsd"
ACCEPTED_STATES = ("Accepted", "Submitted", "Approved", "Rejected")


class WorkerRefused(ServiceError):
    """The worker cannot do this (not qualified, blocked, HIT not available...)."""


# -- qualification requirements ---------------------------------------------------------------


def unmet_requirements(
    state: State, worker_id: str, hit: dict, action: str = "Accept"
) -> list[str]:
    """The requirements of `hit` this worker fails for `action` (Discover, Preview or Accept).
    A requirement guards Accept unless its ActionsGuarded (or RequiredToPreview) says more."""
    unmet = []
    for requirement in hit["QualificationRequirements"]:
        guarded = requirement.get("ActionsGuarded") or (
            "PreviewAndAccept" if requirement.get("RequiredToPreview") else "Accept"
        )
        if (
            action
            not in {
                "Accept": ("Accept",),
                "PreviewAndAccept": ("Accept", "Preview"),
                "DiscoverPreviewAndAccept": ("Accept", "Preview", "Discover"),
            }[guarded]
        ):
            continue
        if not _meets(state, worker_id, requirement):
            unmet.append(_describe(requirement))
    return unmet


def _meets(state: State, worker_id: str, requirement: dict) -> bool:
    type_id, comparator = requirement["QualificationTypeId"], requirement["Comparator"]
    if type_id in SYSTEM_QUALIFICATIONS:
        value = state.worker(worker_id)[SYSTEM_QUALIFICATIONS[type_id]]
    else:
        held = state.data["qualifications"].get(f"{type_id} {worker_id}")
        value = held["IntegerValue"] if held and held["Status"] == "Granted" else None
    if comparator == "Exists":
        return value is not None
    if comparator == "DoesNotExist":
        return value is None
    if value is None:
        return False
    if isinstance(value, str):  # a locale: compare countries (subdivisions are not emulated)
        wanted = [locale["Country"] for locale in requirement.get("LocaleValues", [])]
        return (value in wanted) == (comparator in ("EqualTo", "In"))
    wanted = requirement.get("IntegerValues", [])
    target = wanted[0] if wanted else 0
    return {
        "LessThan": value < target,
        "LessThanOrEqualTo": value <= target,
        "GreaterThan": value > target,
        "GreaterThanOrEqualTo": value >= target,
        "EqualTo": value == target,
        "NotEqualTo": value != target,
        "In": value in wanted,
        "NotIn": value not in wanted,
    }[comparator]


def _describe(requirement: dict) -> str:
    values = requirement.get("IntegerValues") or [
        locale["Country"] for locale in requirement.get("LocaleValues", [])
    ]
    shown = " ".join(str(v) for v in values)
    return f"{requirement['QualificationTypeId']} {requirement['Comparator']} {shown}".strip()


# -- the worker's path ------------------------------------------------------------------------


def visible_hits(state: State, worker_id: str | None = None) -> list[dict]:
    """Assignable HITs a worker can discover (all of them when no worker is given)."""
    return [
        hit
        for hit in state.data["hits"].values()
        if state.hit_status(hit) == "Assignable"
        and (worker_id is None or not unmet_requirements(state, worker_id, hit, "Discover"))
    ]


def preview_url(state: State, hit_id: str) -> str:
    """What a worker's browser loads in preview: no assignment and no worker."""
    hit = state.hit(hit_id)
    return _with_query(_url(hit), {"assignmentId": PREVIEW_ASSIGNMENT, "hitId": hit_id})


def accept(state: State, hit_id: str, worker_id: str) -> dict:
    """The worker accepts the HIT: a new assignment, due within the HIT's assignment duration."""
    hit = state.hit(hit_id)
    if worker_id in state.data["blocks"]:
        raise WorkerRefused(f"Worker {worker_id} is blocked by this requester.")
    if state.hit_status(hit) != "Assignable":
        raise WorkerRefused(f"HIT {hit_id} is {state.hit_status(hit)}; there is nothing to accept.")
    unmet = unmet_requirements(state, worker_id, hit)
    if unmet:
        raise WorkerRefused(
            f"Worker {worker_id} does not meet the requirements: {'; '.join(unmet)}."
        )
    if any(
        a["WorkerId"] == worker_id and a["AssignmentStatus"] in ACCEPTED_STATES
        for a in state.assignments_of(hit_id)
    ):
        raise WorkerRefused(f"Worker {worker_id} has already accepted HIT {hit_id}.")
    now = state.now()
    assignment = {
        "AssignmentId": state.new_id(),
        "WorkerId": worker_id,
        "HITId": hit_id,
        "AssignmentStatus": "Accepted",
        "AcceptTime": now,
        "Deadline": now + hit["AssignmentDurationInSeconds"],
    }
    state.data["assignments"][assignment["AssignmentId"]] = assignment
    return assignment


def task_url(state: State, assignment: dict, submit_to: str) -> str:
    """The ExternalURL with the four parameters MTurk adds for an accepted assignment."""
    hit = state.hit(assignment["HITId"])
    return _with_query(
        _url(hit),
        {
            "assignmentId": assignment["AssignmentId"],
            "hitId": hit["HITId"],
            "workerId": assignment["WorkerId"],
            "turkSubmitTo": submit_to,
        },
    )


def submit(state: State, assignment_id: str, fields: dict[str, str]) -> dict:
    """The form POST to /mturk/externalSubmit: `assignmentId` plus at least one answer field."""
    assignment = state.data["assignments"].get(assignment_id)
    if assignment is None:
        raise WorkerRefused(f"Assignment {assignment_id} does not exist.")
    if assignment["AssignmentStatus"] != "Accepted":
        raise WorkerRefused(
            f"Assignment {assignment_id} is {assignment['AssignmentStatus']}; it cannot be submitted."
        )
    answers = {key: value for key, value in fields.items() if key != "assignmentId"}
    if not answers:
        raise WorkerRefused("The form must send at least one field besides assignmentId.")
    hit = state.hit(assignment["HITId"])
    now = state.now()
    assignment.update(
        AssignmentStatus="Submitted",
        SubmitTime=now,
        AutoApprovalTime=now + hit["AutoApprovalDelayInSeconds"],
        Answer=answers_xml(answers),
    )
    return assignment


def return_assignment(state: State, assignment_id: str) -> dict:
    assignment = state.data["assignments"].get(assignment_id)
    if assignment is None or assignment["AssignmentStatus"] != "Accepted":
        raise WorkerRefused(f"Assignment {assignment_id} is not in progress.")
    assignment["AssignmentStatus"] = "Returned"
    return assignment


def accept_and_submit(
    state: State, hit_id: str, worker_id: str, answer_fields: dict[str, str]
) -> dict:
    """A worker who accepts and submits at once (for tests that need no task server)."""
    with state.lock:
        state.refresh()
        assignment = accept(state, hit_id, worker_id)
        submitted = submit(state, assignment["AssignmentId"], answer_fields)
        state.save()
        return dict(submitted)


def request_qualification(state: State, type_id: str, worker_id: str, answer: str = "") -> dict:
    state.qualification_type(type_id)
    request = {
        "QualificationRequestId": state.new_id(),
        "QualificationTypeId": type_id,
        "WorkerId": worker_id,
        "Answer": answer,
        "SubmitTime": state.now(),
        "_status": "Pending",
    }
    state.data["qualification_requests"][request["QualificationRequestId"]] = request
    return request


def answers_xml(answers: dict[str, str]) -> str:
    """QuestionFormAnswers: one <Answer> with <QuestionIdentifier> and <FreeText> per field."""
    parts = "".join(
        f"<Answer><QuestionIdentifier>{escape(key)}</QuestionIdentifier>"
        f"<FreeText>{escape(value)}</FreeText></Answer>"
        for key, value in answers.items()
    )
    parts = parts.encode("ascii", "xmlcharrefreplace").decode("ascii")
    return (
        '<?xml version="1.0" encoding="ASCII"?>'
        f'<QuestionFormAnswers xmlns="{ANSWERS_NS}">{parts}</QuestionFormAnswers>'
    )


def _url(hit: dict) -> str:
    url = external_url(hit)
    if not url:
        raise WorkerRefused(
            f"HIT {hit['HITId']} has no ExternalQuestion; the emulator can only open external tasks."
        )
    return url


def _with_query(url: str, params: dict[str, str]) -> str:
    return url + ("&" if "?" in url else "?") + urlencode(params)
