"""The `study prolific` command group: draft, publish, watch and pay for a study on Prolific.

Every command talks to https://api.prolific.com/api/v1/ unless --api-url (or PROLIFIC_API_URL)
points elsewhere, such as a local `study prolific emulate`; the token comes from PROLIFIC_TOKEN.
Paying commands are safe to re-run; live use asks before spending, showing the cost.
"""

from __future__ import annotations

import click

from study.prolific.cli import emulate, participants, payments, review, studies


@click.group()
def prolific() -> None:
    """Run the study on Prolific (a local emulator with --api-url http://127.0.0.1:...)."""


for _command in (
    studies.balance,
    studies.draft,
    studies.publish,
    studies.pause,
    studies.start,
    studies.stop,
    studies.places,
    studies.list_studies,
    review.sync,
    review.review,
    review.approve,
    review.reject,
    payments.bonus,
    payments.ledger_command,
    participants.notify,
    participants.block,
    participants.qualify,
    participants.list_groups,
    emulate.emulate,
):
    prolific.add_command(_command)

__all__ = ["prolific"]
