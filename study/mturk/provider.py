"""MTurk behind the recruitment-provider interface (study.providers): each operation is the
existing `study mturk` code, unchanged, over a study.mturk.context.Context; what the core asks
of the study database reads MTurk's tables (study.store.mturk: mturk_assignments, mturk_payments).

Its participant path (the HIT's ExternalQuestion into /task, the completion page's form back to
MTurk) is study.mturk.entry, which the task server finds through the registry."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, func, select

from study.config import Study
from study.mturk import assignments, bonuses, budget, hits, money, posting, repeat, review, workers
from study.mturk import entry
from study.mturk import qualify as mturk_qualify
from study.mturk import settings as mturk_settings
from study.mturk.context import Context
from study.providers import Decisions, Summary
from study.store import reading
from study.store.mturk import mturk_assignments, mturk_payments


class MTurk:
    name = "mturk"
    title = "MTurk"
    participant = entry
    repeat_refusal = repeat.REFUSAL

    def synced(self):
        return repeat.synced_assignment()

    def decisions(self, connection: Connection) -> Decisions | None:
        table = mturk_assignments
        rows = connection.execute(
            select(table.c.session_id, table.c.status).where(table.c.session_id.is_not(None))
        ).all()  # fmt: skip
        return Decisions.of([tuple(row) for row in rows], approved="Approved", rejected="Rejected")

    def summaries(self, connection: Connection, study: Study) -> list[Summary]:
        try:
            cap = mturk_settings.from_study(study).budget
        except (mturk_settings.SettingsError, money.MoneyError):
            cap = None  # `study mturk` commands say what is wrong with [mturk]
        found = []
        for environment in _environments(connection):
            submitted = connection.execute(
                select(func.count()).select_from(mturk_assignments).where(
                    mturk_assignments.c.environment == environment,
                    mturk_assignments.c.status.in_(repeat.ACCEPTED_WORK),
                )
            ).scalar_one()  # fmt: skip
            totals = budget.totals(connection, environment)
            found.append(Summary(
                self.name, environment, submitted, money.show(totals.committed.total),
                money.show(totals.paid.total), money.show(cap) if cap is not None else None,
            ))  # fmt: skip
        return found

    def repeat_session(self, connection: Connection, study: Study, worker_id: str,
                       arriving_with: str) -> dict | None:  # fmt: skip
        return entry.repeat_session(connection, study, worker_id, arriving_with)

    def qualify_command(self):
        from study.mturk.cli.qualify import qualify  # the command line only when it runs

        return qualify

    def pays_by_itself(self, study: Study) -> str:
        hours = mturk_settings.from_study(study).auto_approve_hours
        return (f"MTurk approves and pays a submitted assignment by itself {hours} hours after it was "
                "submitted ([mturk] auto_approve_hours), whatever its outcome here: decide these before then.")

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
        # As `study mturk bonus --amount` does: whole cents, at least $0.01, never a float.
        return bonuses.pay(ctx, submission_id, money.parse_usd(amount), reason).status

    def qualify(self, ctx: Context) -> mturk_qualify.Report:
        return mturk_qualify.qualify(ctx)

    def block(self, ctx: Context, worker_id: str) -> None:
        workers.block(ctx, worker_id, "Blocked by the researchers of this study.")

    def notify(self, ctx: Context, worker_ids: list[str], message: str) -> dict[str, str]:
        return workers.notify(ctx, worker_ids, ctx.study.title, message)

    def balance(self, ctx: Context) -> dict:
        available = ctx.requester.call("GetAccountBalance")["AvailableBalance"]
        with reading(ctx.engine) as connection:
            committed = budget.totals(connection, ctx.environment).committed.total
        return {"available": Decimal(available), "committed": committed, "cap": ctx.settings.budget}


PROVIDER = MTurk()


def _environments(connection: Connection) -> list[str]:
    """The accounts with rows in this database (sandbox and live never mix)."""
    found = set(connection.execute(select(mturk_assignments.c.environment).distinct()).scalars())
    found |= set(connection.execute(select(mturk_payments.c.environment).distinct()).scalars())
    return sorted(found)
