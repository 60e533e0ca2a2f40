"""A study's progress at a glance, for `study status`: sessions by stage and condition, events
stored, and how the suggestion endpoint has been doing."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

from sqlalchemy import Connection, func, select

from study.store.db import events, sessions, suggestion_requests
from study.store.withdrawals import not_withdrawn


@dataclass(frozen=True)
class Summary:
    stages: Counter
    conditions: Counter
    events: int
    sessions_with_lost_events: int
    suggestion_requests: int
    suggestion_failures: int
    median_latency_ms: float | None
    # The commonest reasons suggestions failed, most frequent first: (reason, count). Participants
    # only read a calm "not available"; the reason (with the endpoint) is shown here.
    failure_reasons: tuple[tuple[str, int], ...] = ()


def summarize(connection: Connection, in_flight: tuple[str, float] | None = None) -> Summary:
    """`in_flight`: the text a model call's row holds until its outcome is written and the time
    after which such a row is a call still waiting for the model (study.server.model_calls): those
    are not failures, and `study status` counts them among the calls in flight instead. An older
    one is a call whose server stopped, a failure."""
    # Writers who withdrew (study.store.withdrawals) are counted apart: study status says how many.
    stages = Counter(dict(connection.execute(
        select(sessions.c.stage, func.count()).where(not_withdrawn()).group_by(sessions.c.stage)
    ).all()))  # fmt: skip
    conditions = Counter(dict(connection.execute(
        select(sessions.c.condition, func.count())
        .where(sessions.c.condition.is_not(None), not_withdrawn())
        .group_by(sessions.c.condition)
    ).all()))  # fmt: skip
    lost = connection.execute(
        select(func.count()).select_from(sessions).where(sessions.c.missing_events > 0)
    ).scalar_one()
    latencies = [
        row[0]
        for row in connection.execute(
            select(suggestion_requests.c.latency_ms).where(suggestion_requests.c.error.is_(None))
        )
    ]
    failed = suggestion_requests.c.error.is_not(None)
    if in_flight is not None:
        marker, since = in_flight
        failed &= ~((suggestion_requests.c.error == marker) & (suggestion_requests.c.created_at > since))
    failures = connection.execute(
        select(func.count()).select_from(suggestion_requests).where(failed)
    ).scalar_one()
    reasons = connection.execute(
        select(suggestion_requests.c.error, func.count().label("n"))
        .where(failed)
        .group_by(suggestion_requests.c.error)
        .order_by(func.count().desc(), suggestion_requests.c.error)
        .limit(3)
    ).all()
    return Summary(
        stages=stages,
        conditions=conditions,
        events=connection.execute(select(func.count()).select_from(events)).scalar_one(),
        sessions_with_lost_events=lost,
        # Those in flight included: asked, not yet answered.
        suggestion_requests=connection.execute(select(func.count()).select_from(suggestion_requests)).scalar_one(),
        suggestion_failures=failures,
        median_latency_ms=statistics.median(latencies) if latencies else None,
        failure_reasons=tuple((reason, n) for reason, n in reasons),
    )
