"""Prolific behind the recruitment-provider interface (study.providers), over a
study.prolific.context.Context. Amounts are in the workspace currency's minor unit."""

from __future__ import annotations

from typing import Any

from study.prolific import groups, ledger, messages, payments, qualify, review, studies, submissions
from study.prolific.context import Context
from study.store import reading


class Prolific:
    name = "prolific"

    def post(self, ctx: Context, **what: Any) -> list[str]:
        made = studies.create_draft(ctx, studies.Draft(
            name=ctx.settings.name, reward=int(what["reward"]), places=what["places"],
            estimated_minutes=what.get("minutes", ctx.settings.estimated_minutes),
            task_url=what["task_url"], round=what.get("round"),
        ))  # fmt: skip
        studies.publish(ctx, made["study_id"])
        return [made["study_id"]]

    def list(self, ctx: Context) -> list[dict]:
        return [r for r in studies.rows(ctx) if r["study_id"]]

    def sync(self, ctx: Context) -> submissions.SyncReport:
        return submissions.sync(ctx)

    def review(self, ctx: Context) -> list[review.Proposal]:
        return review.proposals(ctx)

    def approve(self, ctx: Context, submission_id: str) -> str:
        return review.approve(ctx, submission_id)

    def reject(self, ctx: Context, submission_id: str, message: str) -> str:
        return review.reject(ctx, submission_id, message, "OTHER")

    def bonus(self, ctx: Context, submission_id: str, amount: Any, reason: str) -> str:
        return payments.pay(ctx, submission_id, int(amount), reason).status

    def qualify(self, ctx: Context) -> qualify.Report:
        return qualify.qualify(ctx)

    def block(self, ctx: Context, worker_id: str) -> None:
        groups.add(ctx, "blocked", {worker_id: None})

    def notify(self, ctx: Context, worker_ids: list[str], message: str) -> dict[str, str]:
        # Prolific writes to a participant about one study: the study each took part in.
        outcomes = {}
        for worker_id in worker_ids:
            taken = [s for s in submissions.stored(ctx) if s["participant_id"] == worker_id]
            if not taken:
                outcomes[worker_id] = "failed: no submission of this study's"
                continue
            outcomes.update(messages.notify(ctx, taken[-1]["study_id"], [worker_id], message))
        return outcomes

    def balance(self, ctx: Context) -> dict:
        answer = ctx.client.get(f"workspaces/{ctx.workspace_id}/balance/")
        with reading(ctx.engine) as connection:
            committed = ledger.totals(connection, ctx.environment, ctx.currency).committed.total
        return {"available": int(answer["available_balance"]), "committed": committed,
                "cap": ctx.settings.budget}  # fmt: skip


PROVIDER = Prolific()
