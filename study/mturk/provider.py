"""MTurk behind the recruitment-provider interface (study.providers): each operation is the
existing `study mturk` code, unchanged, over a study.mturk.context.Context."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from study.mturk import assignments, bonuses, hits, ledger, posting, review, workers
from study.mturk.context import Context
from study.review import qualify as review_qualify
from study.store import reading


class MTurk:
    name = "mturk"

    def post(self, ctx: Context, **what: Any) -> list[str]:
        posted = posting.post(ctx, hits=what.get("hits", 1), assignments=what["assignments"],
                              reward=Decimal(what["reward"]), task_url=what["task_url"])  # fmt: skip
        return [row["hit_id"] for row in posted.hits] if posted else []

    def list(self, ctx: Context) -> list[dict]:
        return hits.study_hits(ctx, refresh=True)

    def sync(self, ctx: Context) -> assignments.SyncReport:
        return assignments.sync(ctx)

    def review(self, ctx: Context) -> list[review.Proposal]:
        return review.proposals(ctx)

    def approve(self, ctx: Context, submission_id: str) -> str:
        return review.approve(ctx, submission_id, ctx.settings.approve_feedback)

    def reject(self, ctx: Context, submission_id: str, message: str) -> str:
        return review.reject(ctx, submission_id, message)

    def bonus(self, ctx: Context, submission_id: str, amount: Any, reason: str) -> str:
        return bonuses.pay(ctx, submission_id, Decimal(amount), reason).status

    def qualify(self, ctx: Context) -> review_qualify.Report:
        return review_qualify.qualify(ctx)

    def block(self, ctx: Context, worker_id: str) -> None:
        workers.block(ctx, worker_id, "Blocked by the researchers of this study.")

    def notify(self, ctx: Context, worker_ids: list[str], message: str) -> dict[str, str]:
        return workers.notify(ctx, worker_ids, ctx.study.title, message)

    def balance(self, ctx: Context) -> dict:
        available = ctx.requester.call("GetAccountBalance")["AvailableBalance"]
        with reading(ctx.engine) as connection:
            committed = ledger.totals(connection, ctx.environment).committed.total
        return {"available": Decimal(available), "committed": committed, "cap": ctx.settings.budget}


PROVIDER = MTurk()
