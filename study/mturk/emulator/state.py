"""The emulator's state: everything a requester account holds, kept in one JSON file.

Records are stored in MTurk's own wire shapes (HIT, Assignment, QualificationType, ...) so the
operations can answer with them directly; keys starting with "_" are the emulator's own
bookkeeping and never leave it. Time moves lazily: every request first applies what the clock
implies (HITs expire, overdue assignments are abandoned, submitted ones auto-approved), and the
clock can be advanced for tests (`advance`), e.g. past the 24 hours MTurk keeps a token.
"""

from __future__ import annotations

import os
import secrets
import time
from decimal import Decimal
from typing import Callable

from study.mturk import money
from study.store.account_file import AccountFile

# MTurk remembers a UniqueRequestToken for 24 hours (see the model's CreateHIT documentation).
TOKEN_SECONDS = 24 * 3600
SANDBOX_BALANCE = "10000.00"  # what the real sandbox shows every requester
_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

# Workers the emulator has not been told about look like the paper's ideal writer (App. D).
DEFAULT_WORKER = {"ApprovalRate": 99, "ApprovedHITs": 20000, "Country": "US"}
SYSTEM_QUALIFICATIONS = {
    "000000000000000000L0": "ApprovalRate",  # Worker_PercentAssignmentsApproved
    "00000000000000000040": "ApprovedHITs",  # Worker_NumberHITsApproved
    "00000000000000000071": "Country",  # Worker_Locale
}


class ServiceError(Exception):
    """An error answer: HTTP 400 with __type, Message and, where MTurk gives one, TurkErrorCode."""

    def __init__(
        self, message: str, turk_code: str | None = None, kind: str = "RequestError"
    ) -> None:
        super().__init__(message)
        self.message = message
        self.turk_code = turk_code
        self.kind = kind

    def body(self) -> dict:
        # Real messages end with the service's timestamp in milliseconds.
        body = {"__type": self.kind, "Message": f"{self.message} ({int(time.time() * 1000)})"}
        if self.turk_code:
            body["TurkErrorCode"] = self.turk_code
        return body


def fresh(balance: str = SANDBOX_BALANCE) -> dict:
    return {
        "version": 1,
        "account_id": new_account_id(),  # what STS GetCallerIdentity answers (emulator.identity)
        "balance": balance,
        "clock_offset": 0.0,
        "hit_types": {},
        "hits": {},
        "assignments": {},
        "qualification_types": {},
        "qualifications": {},  # "<type id> <worker id>" -> Qualification
        "qualification_requests": {},
        "bonuses": [],
        "blocks": {},  # worker id -> reason
        "notification_settings": {},  # HIT type id -> settings
        "sent_notifications": [],  # test events sent with SendTestEventNotification
        "emails": [],  # NotifyWorkers messages that were delivered
        "tokens": {},  # "<scope> <token>" -> time first processed
        "workers": {},  # worker id -> profile (ApprovalRate, ApprovedHITs, Country)
    }


def new_account_id() -> str:
    """A 12-digit AWS account id, random so that two emulators are two accounts."""
    return str(secrets.randbelow(9 * 10**11) + 10**11)


class State(AccountFile):
    """One requester account. All access goes through `with state.lock:`."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        balance: str = SANDBOX_BALANCE,
        allow_http: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(path, clock, lambda: fresh(balance))
        self.allow_http = allow_http

    def account_id(self) -> str:
        """The account this emulator stands in for (state files from before it get one now)."""
        if "account_id" not in self.data or (self.path and not self.path.exists()):
            self.data.setdefault("account_id", new_account_id())
            self.save()  # the account must outlive a restart, as the ledger keyed by it does
        return self.data["account_id"]

    def refresh(self) -> None:
        """Apply what the clock implies since the last request."""
        now = self.now()
        for assignment in self.data["assignments"].values():
            status = assignment["AssignmentStatus"]
            if status == "Accepted" and now >= assignment["Deadline"]:
                assignment["AssignmentStatus"] = "Abandoned"
            elif status == "Submitted" and now >= assignment["AutoApprovalTime"]:
                try:
                    self.approve(assignment, at=assignment["AutoApprovalTime"], feedback=None)
                except ServiceError:
                    # MTurk holds a HIT's money when it is posted, so its auto-approvals are
                    # always paid; the emulator keeps no holds, and a dry run on a small balance
                    # must not fail every later request: it stays Submitted until it is paid.
                    continue

    # -- ids and tokens ---------------------------------------------------------------------

    def new_id(self, first: str = "3", length: int = 30) -> str:
        """Ids shaped like MTurk's: capital letters and digits (the model's EntityId pattern)."""
        return first + "".join(secrets.choice(_ID_ALPHABET) for _ in range(length - len(first)))

    def token_seen(self, scope: str, token: str) -> bool:
        """True if `token` was processed in `scope` within the last 24 hours."""
        seen = self.data["tokens"].get(f"{scope} {token}")
        return seen is not None and self.now() - seen < TOKEN_SECONDS

    def remember_token(self, scope: str, token: str) -> None:
        self.data["tokens"][f"{scope} {token}"] = self.now()

    # -- lookups ----------------------------------------------------------------------------

    def hit(self, hit_id: str, *, disposed_ok: bool = False) -> dict:
        hit = self.data["hits"].get(hit_id)
        if hit is None or (hit.get("_disposed") and not disposed_ok):
            raise ServiceError(f"Hit {hit_id} does not exist.")
        return hit

    def assignment(self, assignment_id: str) -> dict:
        assignment = self.data["assignments"].get(assignment_id)
        if assignment is None or assignment["AssignmentStatus"] not in (
            "Submitted",
            "Approved",
            "Rejected",
        ):
            raise ServiceError(f"Assignment {assignment_id} does not exist.")
        return assignment

    def qualification_type(self, type_id: str) -> dict:
        qualification_type = self.data["qualification_types"].get(type_id)
        if qualification_type is None or qualification_type.get("_deleted"):
            raise ServiceError(f"QualificationType {type_id} does not exist.")
        return qualification_type

    def worker(self, worker_id: str) -> dict:
        return {**DEFAULT_WORKER, **self.data["workers"].get(worker_id, {})}

    def assignments_of(self, hit_id: str) -> list[dict]:
        return sorted(
            (a for a in self.data["assignments"].values() if a["HITId"] == hit_id),
            key=lambda a: (a["AcceptTime"], a["AssignmentId"]),
        )

    # -- HIT status -------------------------------------------------------------------------

    def hit_counts(self, hit: dict) -> dict:
        assignments = self.assignments_of(hit["HITId"])
        pending = sum(a["AssignmentStatus"] == "Accepted" for a in assignments)
        taken = sum(
            a["AssignmentStatus"] in ("Submitted", "Approved", "Rejected") for a in assignments
        )
        completed = sum(a["AssignmentStatus"] in ("Approved", "Rejected") for a in assignments)
        expired = self.now() >= hit["Expiration"]
        available = 0 if expired else max(hit["MaxAssignments"] - pending - taken, 0)
        return {
            "NumberOfAssignmentsPending": pending,
            "NumberOfAssignmentsAvailable": available,
            "NumberOfAssignmentsCompleted": completed,
        }

    def hit_status(self, hit: dict) -> str:
        """Assignable -> Unassignable (all taken) -> Reviewable (all submitted, or expired with
        nobody still working) -> Reviewing (by request) -> Disposed (DeleteHIT)."""
        if hit.get("_disposed"):
            return "Disposed"
        if hit.get("_reviewing"):
            return "Reviewing"
        counts = self.hit_counts(hit)
        if counts["NumberOfAssignmentsAvailable"] > 0:
            return "Assignable"
        if counts["NumberOfAssignmentsPending"] > 0:
            return "Unassignable"
        return "Reviewable"

    def hit_view(self, hit: dict) -> dict:
        """A HIT as the API returns it."""
        view = {key: value for key, value in hit.items() if not key.startswith("_")}
        view["HITStatus"] = self.hit_status(hit)
        view.update(self.hit_counts(hit))
        return view

    # -- money ------------------------------------------------------------------------------

    def debit(self, cost: money.Cost, what: str) -> None:
        balance = Decimal(self.data["balance"])
        if cost.total > balance:
            raise ServiceError(
                f"You do not have enough funds to pay for {what}: it needs {money.show(cost.total)} "
                f"and your balance is {money.show(balance)}."
            )
        self.data["balance"] = money.usd(balance - cost.total)

    def approve(self, assignment: dict, *, at: float, feedback: str | None) -> None:
        """Pay the reward and MTurk's fee (also used for auto-approval)."""
        hit = self.data["hits"][assignment["HITId"]]
        reward = Decimal(hit["Reward"])
        cost = money.Cost(reward, money.fee(reward, assignments=hit["MaxAssignments"]))
        self.debit(cost, f"assignment {assignment['AssignmentId']}")
        assignment["AssignmentStatus"] = "Approved"
        assignment["ApprovalTime"] = at
        assignment.pop("RejectionTime", None)
        if feedback is not None:
            assignment["RequesterFeedback"] = feedback
        self.worked_for(assignment["WorkerId"])

    def worked_for(self, worker_id: str) -> None:
        """MTurk emails only workers whose work this requester approved or rejected."""
        self.data["workers"].setdefault(worker_id, {})["_reviewed"] = True
