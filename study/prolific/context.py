"""What every Prolific command works with: the study, its [prolific] settings, the researcher's
connection and the study database.

Everything stored about Prolific is filed under `environment`, "prolific:<researcher id>" from
`GET users/me/`, so the emulator's rows and the real workspace's never mix. `live` is any
address that is not loopback: real money, so spending needs a budget and a confirmation.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from study.config import Study
from study.prolific.client import Client
from study.prolific.settings import ProlificSettings, check_currency
from study.store import create_tables, make_engine


@dataclass(frozen=True)
class Budget:
    cap: int | None  # minor units; None: no cap
    live: bool


@dataclass
class Context:
    study: Study
    settings: ProlificSettings
    client: Client
    engine: Engine
    researcher_id: str
    workspace_id: str | None
    currency: str

    @property
    def environment(self) -> str:
        return f"prolific:{self.researcher_id}"

    @property
    def live(self) -> bool:
        return not self.client.emulated

    @property
    def budget(self) -> Budget:
        return Budget(self.settings.budget, self.live)


def open_context(
    study: Study, settings: ProlificSettings, client: Client, engine: Engine | None = None
) -> Context:
    me = client.get("users/me/")
    currency = me.get("currency_code") or "GBP"
    check_currency(study, currency)  # before anything is recorded or sent
    engine = engine or make_engine(study.database_url)
    create_tables(engine)
    return Context(
        study,
        settings,
        client,
        engine,
        researcher_id=me["id"],
        workspace_id=me.get("current_workspace_id"),
        currency=currency,
    )
