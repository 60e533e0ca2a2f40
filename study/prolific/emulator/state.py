"""The emulator's state: one researcher's workspace, kept in one JSON file written atomically.

Records are kept close to Prolific's wire shapes; keys starting with "_" are the emulator's own
bookkeeping and never leave it, and times are kept as epoch seconds and shown as ISO 8601. Time
moves lazily, as in the MTurk emulator: every request first applies what the clock implies
(submissions past their maximum allowed time time out, queued bonus payments whose delay has
passed are paid, studies move between ACTIVE, AWAITING REVIEW and COMPLETED), and tests can move
the clock (`advance`) rather than wait.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import time
from collections.abc import Callable

from study.prolific.emulator import fees
from study.prolific.emulator.errors import ApiError, not_found
from study.store.account_file import AccountFile

# Submission statuses that hold one of the study's places (docs: a rejected, returned or
# timed-out submission frees its place for another participant).
HOLDS_PLACE = ("ACTIVE", "AWAITING REVIEW", "APPROVED")
PUBLISHED = ("ACTIVE", "PAUSED", "AWAITING REVIEW")  # studies that hold money for their places


def new_id() -> str:
    """A 24-hex-digit id, the shape of Prolific's (MongoDB ObjectId) ids."""
    return secrets.token_hex(12)


def iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    return dt.datetime.fromtimestamp(moment, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def fresh(*, balance: int, currency: str, fee_rate: float, vat_rate: float,
          pay_delay: float, token: str | None) -> dict:
    user_id = new_id()
    return {
        "version": 1,
        "token": token or secrets.token_urlsafe(24),
        "user": {
            "id": user_id,
            "email": "researcher@emulator.invalid",
            "first_name": "Emulated",
            "last_name": "Researcher",
        },
        "workspace": {"id": new_id(), "title": "Emulated workspace"},
        "project": {"id": new_id(), "title": "Emulated project"},
        "currency": currency,
        "balance": balance,
        "fee_rate": fee_rate,
        "vat_rate": vat_rate,
        "pay_delay": pay_delay,
        "clock_offset": 0.0,
        "studies": {},
        "submissions": {},
        "groups": {},
        "bulk_bonuses": {},
        "messages": [],
    }


class State(AccountFile):
    """One workspace. All access goes through `with state.lock:`."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        balance: int = 100_000,
        currency: str = "USD",
        fee_rate: float = 0.333,
        vat_rate: float = 0.0,
        pay_delay: float = 60.0,
        token: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(path, clock, lambda: fresh(balance=balance, currency=currency, fee_rate=fee_rate,
                                                    vat_rate=vat_rate, pay_delay=pay_delay, token=token))
        if not (self.path and self.path.exists()):
            self.save()

    @property
    def token(self) -> str:
        return self.data["token"]

    @property
    def currency(self) -> str:
        return self.data["currency"]

    def refresh(self) -> None:
        """Apply what the clock implies since the last request."""
        now = self.now()
        for submission in self.data["submissions"].values():
            if submission["status"] == "ACTIVE":
                study = self.data["studies"][submission["study_id"]]
                if now >= submission["started_at"] + study["maximum_allowed_time"] * 60:
                    submission["status"] = "TIMED-OUT"
        self.settle_payments(due_only=True)
        for study in self.data["studies"].values():
            self.update_study_status(study)

    # -- lookups ----------------------------------------------------------------------------

    def study(self, study_id: str) -> dict:
        study = self.data["studies"].get(study_id)
        if study is None or study.get("_deleted"):
            raise not_found()
        return study

    def submission(self, submission_id: str) -> dict:
        submission = self.data["submissions"].get(submission_id)
        if submission is None:
            raise not_found()
        return submission

    def group(self, group_id: str) -> dict:
        group = self.data["groups"].get(group_id)
        if group is None or group.get("is_deleted"):
            raise not_found()
        return group

    def submissions_of(self, study_id: str) -> list[dict]:
        return sorted(
            (s for s in self.data["submissions"].values() if s["study_id"] == study_id),
            key=lambda s: (s["started_at"], s["id"]),
        )

    def places_taken(self, study: dict) -> int:
        return sum(s["status"] in HOLDS_PLACE for s in self.submissions_of(study["id"]))

    # -- studies' own movement --------------------------------------------------------------

    def update_study_status(self, study: dict) -> None:
        """A full study whose participants have all finished awaits review; a study with nothing
        left to review is completed; a freed place reopens a study nobody stopped."""
        status = study["status"]
        if status in ("UNPUBLISHED", "PAUSED"):
            return
        submissions = self.submissions_of(study["id"])
        working = any(s["status"] == "ACTIVE" for s in submissions)
        waiting = any(s["status"] == "AWAITING REVIEW" for s in submissions)
        if study.get("_stopped"):
            study["status"] = "AWAITING REVIEW" if working or waiting else "COMPLETED"
        elif self.places_taken(study) < study["total_available_places"]:
            study["status"] = "ACTIVE"
        elif not working:
            study["status"] = "AWAITING REVIEW" if waiting else "COMPLETED"

    # -- money ------------------------------------------------------------------------------

    def charge(self, rewards: int) -> fees.Charge:
        return fees.charge(rewards, self.data["fee_rate"], self.data["vat_rate"])

    def held(self) -> fees.Charge:
        """What published, unfinished studies hold for the places not yet paid for."""
        rewards = 0
        for study in self.data["studies"].values():
            if study["status"] in PUBLISHED and not study.get("_deleted"):
                paid = sum(s["status"] == "APPROVED" for s in self.submissions_of(study["id"]))
                rewards += study["reward"] * max(study["total_available_places"] - paid, 0)
        return self.charge(rewards)

    def available_balance(self) -> int:
        return self.data["balance"] - self.held().total

    def require_funds(self, amount: int, what: str) -> None:
        available = self.available_balance()
        if amount > available:
            raise ApiError(400, {"balance": [(
                f"Your workspace balance is too low for {what}: it needs "
                f"{fees.show(amount, self.currency)} and "
                f"{fees.show(max(available, 0), self.currency)} is available. "
                "Top up your workspace in the web app (the API cannot)."
            )]})

    def debit(self, charge: fees.Charge) -> None:
        self.data["balance"] -= charge.total

    def approve(self, submission: dict) -> None:
        """Pay the reward with Prolific's fee (also for AUTOMATICALLY_APPROVE codes)."""
        self.debit(self.charge(submission["reward"]))
        submission["status"] = "APPROVED"
        submission["_reviewed_at"] = self.now()

    def settle_payments(self, *, due_only: bool) -> int:
        """Pay queued bonus payments: those whose delay has passed, or all of them."""
        now, settled = self.now(), 0
        for bulk in self.data["bulk_bonuses"].values():
            for payment in bulk["payments"]:
                if payment["settled_at"] is None and (not due_only or now >= payment["due_at"]):
                    self.data["balance"] -= bulk["charged"]
                    for line in bulk["lines"]:
                        self.data["submissions"][line["submission_id"]]["bonus_payments"].append(
                            line["amount"]
                        )
                    payment["settled_at"] = now
                    settled += 1
        return settled
