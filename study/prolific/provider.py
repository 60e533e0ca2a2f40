"""Prolific behind the recruitment-provider interface (study.providers), over a
study.prolific.context.Context. Amounts are in the workspace currency's minor unit; what the
core asks of the study database reads Prolific's tables (study.store.prolific), and its
participant path through the task server is study.prolific.entry."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, func, select

from study.config import Study
from study.prolific import entry, groups, ledger, messages, money, payments, qualify, review, studies, submissions
from study.prolific import settings as prolific_settings
from study.prolific.context import Context
from study.providers import Decisions, Summary
from study.store import reading
from study.store import prolific as prolific_store


class Prolific:
    name = "prolific"
    title = "Prolific"
    participant = entry
    repeat_refusal = entry.REPEAT_REFUSAL

    def synced(self):
        return prolific_store.synced_submission()

    def decisions(self, connection: Connection) -> Decisions | None:
        table = prolific_store.prolific_submissions
        rows = connection.execute(
            select(table.c.session_id, table.c.status).where(table.c.session_id.is_not(None))
        ).all()  # fmt: skip
        return Decisions.of([tuple(row) for row in rows], approved="APPROVED", rejected="REJECTED")

    def summaries(self, connection: Connection, study: Study) -> list[Summary]:
        try:
            cap = prolific_settings.from_study(study).budget
        except prolific_settings.SettingsError:
            cap = None  # `study prolific` commands say what is wrong with [prolific]
        found = []
        for environment in _environments(connection):
            submitted = connection.execute(
                select(func.count()).select_from(prolific_store.prolific_submissions).where(
                    prolific_store.prolific_submissions.c.environment == environment,
                    prolific_store.prolific_submissions.c.status.in_(prolific_store.ACCEPTED_WORK),
                )
            ).scalar_one()  # fmt: skip
            per_currency = ledger.by_currency(connection, environment)
            # Each entry says its currency: a total per currency, never one sum of pence and
            # cents. The cap is in the workspace's currency, which only Prolific can say (users/me):
            # with one currency in the ledger it is that one (the budget check refuses a second).
            known = [c for c in per_currency if c is not None]
            in_cap = known[0] if len(known) == 1 and None not in per_currency else None
            found.append(Summary(
                self.name, environment, submitted,
                _per_currency({c: t.committed for c, t in per_currency.items()}),
                _per_currency({c: t.charged for c, t in per_currency.items()}),
                (money.show(cap, in_cap) if in_cap else money.major(cap)) if cap is not None else None,
            ))  # fmt: skip
        return found

    def repeat_session(self, connection: Connection, study: Study, worker_id: str,
                       arriving_with: str) -> dict | None:  # fmt: skip
        return entry.repeat_session(connection, study, worker_id, arriving_with)

    def qualify_command(self):
        from study.prolific.cli.participants import qualify as command  # `study prolific qualify`

        return command

    def pays_by_itself(self, study: Study) -> str:
        return ""  # the service's notes name no approval without the researcher

    def post(self, ctx: Context, **what: Any) -> list[str]:
        made = studies.create_draft(ctx, studies.Draft(
            name=ctx.settings.name, reward=money.whole_minor(what["reward"], what="reward"),
            places=what["places"],
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
        return payments.pay(ctx, submission_id, money.whole_minor(amount), reason).status

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
            per_currency = ledger.by_currency(connection, ctx.environment)
        here = per_currency.pop(ctx.currency, None)
        # Money committed in another currency (or an unknown one) is not added to this one's.
        elsewhere = {money.code(c): t.committed.total for c, t in per_currency.items() if t.committed.total}
        return {"available": int(answer["available_balance"]), "currency": ctx.currency,
                "committed": here.committed.total if here else 0, "cap": ctx.settings.budget,
                "committed_in_other_currencies": elsewhere}  # fmt: skip


PROVIDER = Prolific()


def _per_currency(costs: dict[str | None, money.Cost]) -> str:
    """"£12.00", or "£12.00 + $3.00" when the ledger holds two currencies (kept apart); a
    currency with nothing in this total is left out, unless nothing is in any."""
    shown = [money.show(cost.total, currency) for currency, cost in costs.items() if cost.total]
    if not shown and costs:
        return money.show(0, next(iter(costs)))
    return " + ".join(shown) or money.major(0)


def _environments(connection: Connection) -> list[str]:
    """The researcher accounts with rows in this database."""
    tables = (prolific_store.prolific_submissions, prolific_store.prolific_payments)
    found = set()
    for table in tables:
        found |= set(connection.execute(select(table.c.environment).distinct()).scalars())
    return sorted(found)
