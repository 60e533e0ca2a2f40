"""What every MTurk command works with: the study, its [mturk] settings, the requester account
in one environment (sandbox or live, and its AWS account) and the study database."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from study.config import Study
from study.mturk import account
from study.mturk.client import Requester
from study.mturk.budget import Budget
from study.mturk.settings import MTurkSettings
from study.store import create_tables, make_engine


@dataclass
class Context:
    study: Study
    settings: MTurkSettings
    requester: Requester
    engine: Engine

    @property
    def environment(self) -> str:
        return self.requester.environment

    @property
    def live(self) -> bool:
        return self.requester.live

    @property
    def budget(self) -> Budget:
        return Budget(self.settings.budget, self.live)


def open_context(
    study: Study, settings: MTurkSettings, requester: Requester, engine: Engine | None = None
) -> Context:
    engine = engine or make_engine(study.database_url)
    create_tables(engine)
    if requester.legacy_environment:
        account.adopt_legacy_rows(engine, requester.legacy_environment, requester.environment)
    return Context(study, settings, requester, engine)
