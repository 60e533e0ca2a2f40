"""Qualification types, granting and revoking them, and the study's exclusion qualification.

Qualification type ids differ between sandbox and live, so the study refers to its own types by
name (table mturk_qualifications, per environment) and this module resolves names to ids.

The exclusion qualification ("<study> participated (<id>)", one per study) is granted by `sync`
to every worker who submitted an assignment, and HITs posted with once_per_worker require that workers do NOT hold
it (DoesNotExist, guarding discovery, preview and accept). It cannot stop everything: a worker
may accept a second HIT before the grant lands, which is why the task server also refuses a
second session for the same worker (study.mturk.repeat).
"""

from __future__ import annotations

import re
import time

from sqlalchemy import Engine, select

from study.config import Study
from study.mturk.client import MTurkError, Requester
from study.store import reading, writing
from study.store.mturk import mturk_qualifications as qualifications

TYPE_ID = re.compile(r"^[A-Z0-9]{20,64}$")
# The paper's requirements (App. D), as MTurk's system qualifications.
APPROVAL_RATE = "000000000000000000L0"
APPROVED_HITS = "00000000000000000040"
LOCALE = "00000000000000000071"


class QualificationError(RuntimeError):
    pass


def paper_requirements() -> list[dict]:
    """HIT approval rate > 97%, location United States, more than 10000 approved HITs."""
    return [
        {"QualificationTypeId": APPROVAL_RATE, "Comparator": "GreaterThan", "IntegerValues": [97]},
        {
            "QualificationTypeId": LOCALE,
            "Comparator": "EqualTo",
            "LocaleValues": [{"Country": "US"}],
        },
        {
            "QualificationTypeId": APPROVED_HITS,
            "Comparator": "GreaterThan",
            "IntegerValues": [10000],
        },
    ]


def exclusion_name(study: Study) -> str:
    """Per study, not per name: two studies made from one template (both "coauthor") on one
    account must not exclude each other's workers."""
    suffix = f" ({study.id[:8]})" if study.id else ""
    return f"{study.name} participated{suffix}"


def exclusion_requirement(type_id: str) -> dict:
    return {
        "QualificationTypeId": type_id,
        "Comparator": "DoesNotExist",
        "ActionsGuarded": "DiscoverPreviewAndAccept",
    }


def create(
    requester: Requester,
    engine: Engine,
    name: str,
    description: str,
    *,
    role: str = "custom",
    keywords: str = "",
) -> str:
    """Create (or adopt, if this account already has one by that name) a qualification type."""
    with reading(engine) as connection:
        known = _by_name(connection, requester.environment, name)
    if known:
        return known
    try:
        created = requester.call(
            "CreateQualificationType",
            Name=name,
            Description=description,
            Keywords=keywords,
            QualificationTypeStatus="Active",
        )["QualificationType"]
        type_id = created["QualificationTypeId"]
    except MTurkError as error:
        # A type made earlier (a crash before we recorded it, or another checkout): adopt it.
        type_id = _find_on_mturk(requester, name) if error.certain else None
        if type_id is None:
            raise
    with writing(engine) as connection:
        connection.execute(
            qualifications.insert().values(
                environment=requester.environment,
                qualification_type_id=type_id,
                name=name,
                role=role,
                created_at=time.time(),
            )
        )
    return type_id


def ensure_exclusion(requester: Requester, engine: Engine, study: Study) -> str:
    known = exclusion_id(engine, requester.environment)  # the one it has, whatever its name
    if known:
        return known
    return create(
        requester,
        engine,
        exclusion_name(study),
        f"Granted to workers who took part in the study '{study.title}', so they do not take it twice.",
        role="exclusion",
    )


def exclusion_id(engine: Engine, environment: str) -> str | None:
    with reading(engine) as connection:
        row = connection.execute(
            select(qualifications.c.qualification_type_id).where(
                qualifications.c.environment == environment, qualifications.c.role == "exclusion"
            )
        ).first()
    return row[0] if row else None


def resolve(engine: Engine, environment: str, name_or_id: str) -> str:
    """A qualification type id from a name this study created in `environment`, or an id."""
    with reading(engine) as connection:
        known = _by_name(connection, environment, name_or_id)
    if known:
        return known
    if TYPE_ID.match(name_or_id):
        return name_or_id
    raise QualificationError(
        f"No qualification named {name_or_id!r} in {environment}. Fix: create it there with "
        f"`study mturk qual create DIR {name_or_id!r} --description ...` (sandbox and live "
        "have separate qualification types), or give its id."
    )


def grant(
    requester: Requester,
    type_id: str,
    worker_ids: list[str],
    *,
    value: int = 1,
    notify: bool = False,
) -> None:
    for worker_id in worker_ids:
        requester.call(
            "AssociateQualificationWithWorker",
            QualificationTypeId=type_id,
            WorkerId=worker_id,
            IntegerValue=value,
            SendNotification=notify,
        )


def revoke(
    requester: Requester, type_id: str, worker_ids: list[str], *, reason: str = ""
) -> list[str]:
    """Revoke from each worker; returns the workers who did not hold it."""
    missing = []
    for worker_id in worker_ids:
        params = {"QualificationTypeId": type_id, "WorkerId": worker_id}
        if reason:
            params["Reason"] = reason
        try:
            requester.call("DisassociateQualificationFromWorker", **params)
        except MTurkError as error:
            if not error.certain:
                raise
            missing.append(worker_id)
    return missing


def list_types(requester: Requester, engine: Engine) -> list[dict]:
    """The account's own qualification types, each with the study's role for it (or None)."""
    with reading(engine) as connection:
        roles = dict(
            connection.execute(
                select(qualifications.c.qualification_type_id, qualifications.c.role).where(
                    qualifications.c.environment == requester.environment
                )
            ).all()
        )
    found = requester.pages(
        "ListQualificationTypes",
        "QualificationTypes",
        MustBeRequestable=False,
        MustBeOwnedByCaller=True,
    )
    return [{**t, "StudyRole": roles.get(t["QualificationTypeId"])} for t in found]


def holders(requester: Requester, type_id: str) -> list[dict]:
    return list(
        requester.pages(
            "ListWorkersWithQualificationType",
            "Qualifications",
            QualificationTypeId=type_id,
            Status="Granted",
        )
    )


def _by_name(connection, environment: str, name: str) -> str | None:
    row = connection.execute(
        select(qualifications.c.qualification_type_id).where(
            qualifications.c.environment == environment, qualifications.c.name == name
        )
    ).first()
    return row[0] if row else None


def _find_on_mturk(requester: Requester, name: str) -> str | None:
    for found in requester.pages(
        "ListQualificationTypes",
        "QualificationTypes",
        Query=name,
        MustBeRequestable=False,
        MustBeOwnedByCaller=True,
    ):
        if found["Name"] == name:
            return found["QualificationTypeId"]
    return None
