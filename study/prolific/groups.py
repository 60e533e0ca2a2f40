"""Participant groups: Prolific's counterpart of MTurk's qualifications.

Two groups per study and workspace, named after the study's id so a re-run finds them again:
  - "qualified": writers who passed the qualification round (`study prolific qualify`); a
    main round's Prolific study allows only this group (the `participant_group_allowlist`
    filter), and the task server checks the same with the review outcomes (study.review.rounds);
  - "done": everyone who submitted, with [prolific] once_per_participant; every new Prolific
    study of the study blocks it (`participant_group_blocklist`). A group can reach a
    participant too late, so the task server checks the PID too (study.store.prolific);
  - "blocked": whom the researcher blocked (`study prolific block`), block-listed alike.
Who this study put in a group is remembered (prolific_members): nobody is added twice, and a
qualified writer whom a later adjudication failed is removed.
"""

from __future__ import annotations

import time

from sqlalchemy import delete, select

from study.prolific.context import Context
from study.store import reading, writing
from study.store.prolific import prolific_groups, prolific_members

ROLES = {
    "qualified": "passed the qualification round",
    "done": "took part already (blocked from this study's other Prolific studies)",
    "blocked": "blocked by the researcher (`study prolific block`)",
}


class GroupError(RuntimeError):
    pass


def group_name(ctx: Context, role: str) -> str:
    return f"{ctx.study.name} {role} [{ctx.study.id}]"


def find(ctx: Context, role: str) -> str | None:
    with reading(ctx.engine) as connection:
        return connection.execute(
            select(prolific_groups.c.group_id).where(
                prolific_groups.c.environment == ctx.environment, prolific_groups.c.role == role
            )
        ).scalar()


def ensure(ctx: Context, role: str) -> str:
    """The group's id, created at Prolific on first use (or found again by its name, when a
    crash came between creating it and recording it)."""
    found = find(ctx, role)
    if found:
        return found
    if not ctx.workspace_id:
        raise GroupError(
            "Prolific did not say which workspace this token belongs to (users/me has no "
            "current_workspace_id). Fix: make the token in the workspace the study runs in."
        )
    name = group_name(ctx, role)
    existing = next(
        (g for g in ctx.client.pages("participant-groups/", workspace_id=ctx.workspace_id)
         if g.get("name") == name and not g.get("is_deleted")),
        None,
    )  # fmt: skip
    group = existing or ctx.client.post(
        "participant-groups/",
        {"name": name, "workspace_id": ctx.workspace_id, "description": ROLES[role]},
    )
    with writing(ctx.engine) as connection:
        connection.execute(
            prolific_groups.insert().values(
                environment=ctx.environment,
                role=role,
                group_id=group["id"],
                name=name,
                created_at=time.time(),
            )
        )
    return group["id"]


def members(ctx: Context, role: str) -> dict[str, int | None]:
    """Who this study put in the group: participant id -> value (a score, or None)."""
    with reading(ctx.engine) as connection:
        rows = connection.execute(
            select(prolific_members.c.participant_id, prolific_members.c.value).where(
                prolific_members.c.environment == ctx.environment,
                prolific_members.c.role == role,
            )
        ).all()
    return dict(rows)


def add(ctx: Context, role: str, participants: dict[str, int | None]) -> list[str]:
    """Put participants in the group (a no-op for those already in it); returns who was added."""
    known = members(ctx, role)
    new = {p: v for p, v in participants.items() if p not in known or known[p] != v}
    if not new:
        return []
    group_id = ensure(ctx, role)
    ctx.client.post(f"participant-groups/{group_id}/participants/", {"participant_ids": sorted(new)})
    with writing(ctx.engine) as connection:
        for participant, value in new.items():
            connection.execute(
                delete(prolific_members).where(
                    prolific_members.c.environment == ctx.environment,
                    prolific_members.c.role == role,
                    prolific_members.c.participant_id == participant,
                )
            )
            connection.execute(
                prolific_members.insert().values(
                    environment=ctx.environment,
                    role=role,
                    participant_id=participant,
                    value=value,
                    added_at=time.time(),
                )
            )
    return sorted(new)


def remove(ctx: Context, role: str, participants: list[str]) -> list[str]:
    known = members(ctx, role)
    leaving = sorted(p for p in participants if p in known)
    if not leaving:
        return []
    group_id = ensure(ctx, role)
    ctx.client.delete(f"participant-groups/{group_id}/participants/", {"participant_ids": leaving})
    with writing(ctx.engine) as connection:
        connection.execute(
            delete(prolific_members).where(
                prolific_members.c.environment == ctx.environment,
                prolific_members.c.role == role,
                prolific_members.c.participant_id.in_(leaving),
            )
        )
    return leaving
