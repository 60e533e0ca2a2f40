"""The `study mturk` command group: launch, watch and pay for a study on MTurk.

Every command that talks to MTurk takes --sandbox (the default) or --live, and --endpoint-url to
send boto3 elsewhere (a local `study mturk emulate` for a dry run). Credentials come from the
standard AWS chain. Paying commands are safe to re-run; live mode asks before spending.
"""

from __future__ import annotations

import click

from study.mturk.cli import emulate, hits, payments, qualifications, review, workers


@click.group()
def mturk() -> None:
    """Run the study on Amazon Mechanical Turk (sandbox unless --live)."""


for _command in (
    hits.balance,
    hits.post,
    hits.list_hits,
    hits.extend,
    hits.expire,
    hits.delete,
    review.sync,
    review.review,
    review.approve,
    review.reject,
    payments.bonus,
    payments.ledger_command,
    workers.notify,
    workers.block,
    qualifications.qual,
    emulate.emulate,
):
    mturk.add_command(_command)

__all__ = ["mturk"]
