"""HIT types and HITs: creating, extending, expiring, reviewing and deleting them."""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
from urllib.parse import urlparse

from study.mturk.emulator.registry import operation, page, processed
from study.mturk.emulator.state import SYSTEM_QUALIFICATIONS, ServiceError, State

EXTERNAL_QUESTION_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
# Bounds from the MTurk API reference (the JSON model does not carry them).
SECONDS_BOUNDS = {
    "LifetimeInSeconds": (30, 31_536_000),
    "AssignmentDurationInSeconds": (30, 31_536_000),
    "AutoApprovalDelayInSeconds": (0, 2_592_000),
}
HIT_TYPE_FIELDS = (
    "Title",
    "Description",
    "Reward",
    "Keywords",
    "AssignmentDurationInSeconds",
    "AutoApprovalDelayInSeconds",
    "QualificationRequirements",
)


# -- HIT types --------------------------------------------------------------------------------


@operation("CreateHITType")
def create_hit_type(state: State, params: dict) -> dict:
    return {"HITTypeId": _hit_type(state, params)["HITTypeId"]}


def _hit_type(state: State, params: dict) -> dict:
    """The HIT type with these properties; MTurk answers the same id for the same properties."""
    properties = {
        "Title": params["Title"],
        "Description": params["Description"],
        "Reward": params["Reward"],
        "Keywords": params.get("Keywords", ""),
        "AssignmentDurationInSeconds": params["AssignmentDurationInSeconds"],
        "AutoApprovalDelayInSeconds": params.get("AutoApprovalDelayInSeconds", 2_592_000),
        "QualificationRequirements": params.get("QualificationRequirements", []),
    }
    _check_seconds(properties)
    for requirement in properties["QualificationRequirements"]:
        _check_requirement(state, requirement)
    for hit_type in state.data["hit_types"].values():
        if all(hit_type[key] == properties[key] for key in HIT_TYPE_FIELDS):
            return hit_type
    hit_type = {"HITTypeId": state.new_id(), "HITGroupId": state.new_id(), **properties}
    state.data["hit_types"][hit_type["HITTypeId"]] = hit_type
    return hit_type


def _check_seconds(values: dict) -> None:
    for key, (low, high) in SECONDS_BOUNDS.items():
        if key in values and not low <= values[key] <= high:
            raise ServiceError(f"The value of {key} must be between {low} and {high} seconds.")


def _check_requirement(state: State, requirement: dict) -> None:
    type_id = requirement["QualificationTypeId"]
    if type_id == "00000000000000000071":
        if requirement.get("IntegerValues"):
            raise ServiceError(
                "The Worker_Locale qualification requires LocaleValues, not IntegerValues."
            )
    elif type_id not in SYSTEM_QUALIFICATIONS:
        qualification_type = state.data["qualification_types"].get(type_id)
        if qualification_type is None or qualification_type.get("_deleted"):
            raise ServiceError(f"QualificationType {type_id} does not exist.")
    if requirement["Comparator"] not in ("Exists", "DoesNotExist"):
        if not requirement.get("IntegerValues") and not requirement.get("LocaleValues"):
            raise ServiceError(
                f"The comparator {requirement['Comparator']} needs a value to compare with."
            )


# -- HITs -------------------------------------------------------------------------------------


@operation("CreateHIT")
def create_hit(state: State, params: dict) -> dict:
    _check_token(state, params)
    return _create(state, _hit_type(state, params), params)


@operation("CreateHITWithHITType")
def create_hit_with_hit_type(state: State, params: dict) -> dict:
    hit_type = state.data["hit_types"].get(params["HITTypeId"])
    if hit_type is None:
        raise ServiceError(f"HITType {params['HITTypeId']} does not exist.")
    _check_token(state, params)
    return _create(state, hit_type, params)


def _check_token(state: State, params: dict) -> None:
    token = params.get("UniqueRequestToken")
    if token and state.token_seen("CreateHIT", token):
        hit_id = next(
            (h["HITId"] for h in state.data["hits"].values() if h.get("_token") == token), "unknown"
        )
        raise ServiceError(
            f"There is already a HIT which exists with the same Unique Request Token. HIT Id: {hit_id}",
            "AWS.MechanicalTurk.HitAlreadyExists",
        )


def _create(state: State, hit_type: dict, params: dict) -> dict:
    if params.get("HITLayoutId"):
        raise ServiceError("The emulator does not know HIT layouts; send a Question instead.")
    _check_seconds({"LifetimeInSeconds": params["LifetimeInSeconds"]})
    question = params.get("Question")
    if not question:
        raise ServiceError("Either a Question or a HITLayoutId must be given.")
    check_question(state, question)
    maximum = params.get("MaxAssignments", 1)
    if maximum < 1:
        raise ServiceError("MaxAssignments must be at least 1.")
    now = state.now()
    hit = {
        "HITId": state.new_id(),
        "HITTypeId": hit_type["HITTypeId"],
        "HITGroupId": hit_type["HITGroupId"],
        "CreationTime": now,
        "Title": hit_type["Title"],
        "Description": hit_type["Description"],
        "Question": question,
        "Keywords": hit_type["Keywords"],
        "MaxAssignments": maximum,
        "Reward": hit_type["Reward"],
        "AutoApprovalDelayInSeconds": hit_type["AutoApprovalDelayInSeconds"],
        "Expiration": now + params["LifetimeInSeconds"],
        "AssignmentDurationInSeconds": hit_type["AssignmentDurationInSeconds"],
        "QualificationRequirements": hit_type["QualificationRequirements"],
        "HITReviewStatus": "NotReviewed",
    }
    if params.get("RequesterAnnotation"):
        hit["RequesterAnnotation"] = params["RequesterAnnotation"]
    token = params.get("UniqueRequestToken")
    if token:
        hit["_token"] = token
        state.remember_token("CreateHIT", token)
    state.data["hits"][hit["HITId"]] = hit
    return {"HIT": state.hit_view(hit)}


def check_question(state: State, question: str) -> None:
    """An ExternalQuestion must parse, use the 2006-07-14 schema and point to an https URL."""
    try:
        root = ET.fromstring(question)
    except ET.ParseError as error:
        raise ServiceError(
            f"There was an error parsing the XML question or answer data in your request: {error}",
            "AWS.MechanicalTurk.XMLParseError",
        ) from None
    if not root.tag.endswith("ExternalQuestion"):
        return  # QuestionForm and HTMLQuestion are stored as they are
    if root.tag != f"{{{EXTERNAL_QUESTION_NS}}}ExternalQuestion":
        raise ServiceError(
            "The ExternalQuestion must use the namespace " + EXTERNAL_QUESTION_NS,
            "AWS.MechanicalTurk.XMLParseError",
        )
    url = (root.findtext(f"{{{EXTERNAL_QUESTION_NS}}}ExternalURL") or "").strip()
    height = (root.findtext(f"{{{EXTERNAL_QUESTION_NS}}}FrameHeight") or "").strip()
    parts = urlparse(url)
    allowed = ("https", "http") if state.allow_http else ("https",)
    if parts.scheme not in allowed or not parts.netloc:
        raise ServiceError(f"The ExternalURL {url!r} is not a valid https URL.")
    if not re.fullmatch(r"\d+", height):
        raise ServiceError(
            "The ExternalQuestion needs a FrameHeight in pixels (0 fills the window)."
        )


def external_url(hit: dict) -> str | None:
    try:
        root = ET.fromstring(hit["Question"])
    except ET.ParseError:
        return None
    url = root.findtext(f"{{{EXTERNAL_QUESTION_NS}}}ExternalURL")
    return url.strip() if url else None


@operation("GetHIT")
def get_hit(state: State, params: dict) -> dict:
    return {"HIT": state.hit_view(state.hit(params["HITId"]))}


@operation("ListHITs")
def list_hits(state: State, params: dict) -> dict:
    hits = [state.hit_view(h) for h in _by_creation(state) if not h.get("_disposed")]
    return page(hits, params, "HITs")


@operation("ListReviewableHITs")
def list_reviewable_hits(state: State, params: dict) -> dict:
    wanted = params.get("Status", "Reviewable")
    hits = [
        state.hit_view(h)
        for h in _by_creation(state)
        if state.hit_status(h) == wanted
        and params.get("HITTypeId", h["HITTypeId"]) == h["HITTypeId"]
    ]
    return page(hits, params, "HITs")


def _by_creation(state: State) -> list[dict]:
    return sorted(state.data["hits"].values(), key=lambda h: (h["CreationTime"], h["HITId"]))


@operation("UpdateExpirationForHIT")
def update_expiration(state: State, params: dict) -> dict:
    hit = state.hit(params["HITId"])
    expire_at = _epoch(params["ExpireAt"])
    # The service derives a token from the HIT and the date: the same expiry twice in 24 hours
    # fails instead of succeeding again.
    token = f"{hit['HITId']}{int(expire_at)}"
    if state.token_seen("UpdateExpirationForHIT", token):
        raise processed(token)
    state.remember_token("UpdateExpirationForHIT", token)
    hit["Expiration"] = expire_at
    return {}


@operation("CreateAdditionalAssignmentsForHIT")
def create_additional_assignments(state: State, params: dict) -> dict:
    hit = state.hit(params["HITId"])
    more = params["NumberOfAdditionalAssignments"]
    if more < 1:
        raise ServiceError("NumberOfAdditionalAssignments must be at least 1.")
    token = params.get("UniqueRequestToken")
    if token and state.token_seen("CreateAdditionalAssignmentsForHIT", token):
        raise processed(token)
    if hit["MaxAssignments"] < 10 <= hit["MaxAssignments"] + more:
        raise ServiceError(
            "HITs created with fewer than 10 assignments cannot be extended to 10 or more assignments.",
            "AWS.MechanicalTurk.InvalidMaximumAssignmentsIncrease",
        )
    if token:
        state.remember_token("CreateAdditionalAssignmentsForHIT", token)
    hit["MaxAssignments"] += more
    return {}


@operation("UpdateHITReviewStatus")
def update_review_status(state: State, params: dict) -> dict:
    hit = state.hit(params["HITId"])
    status = state.hit_status(hit)
    if params.get("Revert"):
        if status != "Reviewing":
            raise ServiceError(
                f"The HIT is {status}; only a Reviewing HIT can be reverted to Reviewable."
            )
        hit.pop("_reviewing")
    else:
        if status != "Reviewable":
            raise ServiceError(
                f"The HIT is {status}; only a Reviewable HIT can be marked Reviewing."
            )
        hit["_reviewing"] = True
    return {}


@operation("UpdateHITTypeOfHIT")
def update_hit_type_of_hit(state: State, params: dict) -> dict:
    hit = state.hit(params["HITId"])
    hit_type = state.data["hit_types"].get(params["HITTypeId"])
    if hit_type is None:
        raise ServiceError(f"HITType {params['HITTypeId']} does not exist.")
    hit.update({key: hit_type[key] for key in HIT_TYPE_FIELDS})
    hit["HITTypeId"], hit["HITGroupId"] = hit_type["HITTypeId"], hit_type["HITGroupId"]
    return {}


@operation("DeleteHIT")
def delete_hit(state: State, params: dict) -> dict:
    hit = state.hit(params["HITId"])
    status = state.hit_status(hit)
    if status != "Reviewable":
        raise ServiceError(
            f"This HIT is currently in the state '{status}'. This operation can be called with a "
            "status of: Reviewable"
        )
    if any(a["AssignmentStatus"] == "Submitted" for a in state.assignments_of(hit["HITId"])):
        raise ServiceError(
            "This HIT has assignments in the state 'Submitted'. Approve or reject every submitted "
            "assignment before deleting the HIT."
        )
    hit["_disposed"] = True
    return {}


@operation("ListReviewPolicyResultsForHIT")
def list_review_policy_results(state: State, params: dict) -> dict:
    state.hit(params["HITId"])
    return {"HITId": params["HITId"]}  # review policies are not emulated: nothing to report


def _epoch(value) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.timestamp()
    return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
