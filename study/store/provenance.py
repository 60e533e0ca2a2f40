"""Which model answered: the configured name beside the one the endpoint named (issue 20).

Every model call is a `suggestion_requests` row (Tab suggestions, ghost text and chat replies
alike): `parameters.model` is the name the study asked for, `model` the name the endpoint's
reply gave (study.server.model_calls.settle). An alias served by another model ("gpt-4o"
answered by "gpt-4o-2024-08-06", or a chat study's "Llama-3.1-8B-Instruct" served by a local
SmolLM2) is then visible in every export and report, not hidden behind the configured name.
"""

from __future__ import annotations

import json

from sqlalchemy import Connection, select

from study.store.db import suggestion_requests

# How several answering models of one session or condition are written in one CSV cell.
SEPARATOR = "; "
# What an answered call records when the endpoint's reply named no model: not the configured
# name, which would claim the model the study asked for answered.
UNNAMED = "(not named by the endpoint)"


def answering(answered_model: str | None) -> str:
    """The answering model to record for an answered call (UNNAMED when the reply named none)."""
    return answered_model or UNNAMED


def answered_models(connection: Connection, by: str = "session_id") -> dict[str, list[str]]:
    """Per session (or per condition with `by="condition"`), the models the endpoint said
    answered, sorted; calls that failed answered nothing and are left out."""
    column = suggestion_requests.c[by]
    rows = connection.execute(
        select(column, suggestion_requests.c.model).where(suggestion_requests.c.error.is_(None)).distinct()
    )
    found: dict[str, set[str]] = {}
    for key, model in rows:
        found.setdefault(key, set()).add(model)
    return {key: sorted(models) for key, models in found.items()}


def asked_models(connection: Connection, session_id: str | None = None) -> dict[str, list[str]]:
    """Per session (or for `session_id` alone), the models its calls asked for
    (`parameters.model`), sorted: the configured name when the call was made. A condition moved
    to another model in study.toml between rounds, its name kept, did not ask the new one in its
    earlier sessions."""
    query = select(suggestion_requests.c.session_id, suggestion_requests.c.parameters)
    if session_id is not None:
        query = query.where(suggestion_requests.c.session_id == session_id)
    found: dict[str, set[str]] = {}
    for key, parameters in connection.execute(query):
        try:
            model = json.loads(parameters).get("model")
        except (ValueError, AttributeError):
            continue
        if isinstance(model, str) and model:
            found.setdefault(key, set()).add(model)
    return {key: sorted(models) for key, models in found.items()}


def sent(connection: Connection, session_id: str, key: str, mode: str) -> list:
    """The distinct values of `key` in the `parameters` of the session's calls of `mode`, in the
    order they were first sent; none when no such call recorded it (a call made before the
    setting was recorded, or no call at all): study.toml's of today may not be what was sent."""
    query = (select(suggestion_requests.c.parameters).where(suggestion_requests.c.session_id == session_id)
             .order_by(suggestion_requests.c.id))  # fmt: skip
    found = []
    for (parameters,) in connection.execute(query):
        try:
            call = json.loads(parameters)
        except ValueError:
            continue
        if isinstance(call, dict) and call.get("mode") == mode and key in call and call[key] not in found:
            found.append(call[key])
    return found


def cell(models: list[str] | None) -> str:
    """The answering models as one CSV cell; empty when no call was answered."""
    return SEPARATOR.join(models or [])


def calls_of(connection: Connection) -> dict[str, list[tuple[dict, str | None]]]:
    """Per session, each model call as stored: what was sent (`parameters`: the configured model,
    mode and decoding settings when it was made) and the model the endpoint named (None for a
    failed call, which answered nothing). A call still waiting for its outcome (parameters "{}")
    is left out: it records nothing of what was sent."""
    query = select(suggestion_requests.c.session_id, suggestion_requests.c.parameters,
                   suggestion_requests.c.model, suggestion_requests.c.error).order_by(suggestion_requests.c.id)  # fmt: skip
    found: dict[str, list[tuple[dict, str | None]]] = {}
    for session_id, parameters, model, error in connection.execute(query):
        try:
            sent = json.loads(parameters)
        except ValueError:
            continue
        if isinstance(sent, dict) and sent:
            found.setdefault(session_id, []).append((sent, None if error else model))
    return found
