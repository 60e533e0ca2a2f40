"""The model and decoding settings each stored session ran with, which study.toml may no longer say.

A study may change a condition's settings during its run under the condition's name (a model
swapped after a pilot, a temperature raised): its earlier sessions ran with the old ones. What
ran is stored with the sessions, and this module is the one reading of it, for `study export`'s
metadata.csv and models.csv (study.export.coauthor), a proactive export's sessions.csv
(study.paradigms.proactive.export) and a release's card and arms.json
(study.release.arms_as_run), so they never disagree:

- each model call's `parameters`: the configured model, mode and decoding settings it was sent
  with (study.store.provenance.calls_of);
- the decoding settings the server wrote into every record of the session's log
  (study.server.events_api.fill_controls), for a session that made no model call.

A setting neither records is not recorded (an empty tuple), never study.toml's of today.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from sqlalchemy import Connection, select

from study.store.db import events

# `unit` (how much of each output a Tab suggestion kept) is recorded by a Tab list's calls alone
# (study.paradigms.tab.engine), and by those since it could be set: a log does not hold it.
SETTINGS = ("model", "mode", "n", "max_tokens", "temperature", "top_p", "presence_penalty",
            "frequency_penalty", "unit")  # fmt: skip
# Where a CoAuthor record keeps the decoding settings its session ran with.
LOG_KEYS = {"n": "currentN", "max_tokens": "currentMaxToken", "temperature": "currentTemperature",
            "top_p": "currentTopP", "presence_penalty": "currentPresencePenalty",
            "frequency_penalty": "currentFrequencyPenalty"}  # fmt: skip
# A chat reply's call (study.paradigms.chat.assistant.call_parameters) records mode "chat_reply"
# and no n: it is one reply from the chat API, which arms.json calls mode "chat", n 1.
CHAT_REPLY = "chat_reply"
# The later interface may leave the first records' settings empty.
LOG_RECORDS_READ = 50


def number(value):
    """A setting as one comparable value: numbers as numbers ("0.9" in a log, 0.9 in a call)."""
    if isinstance(value, bool) or value in (None, ""):
        return None if value in (None, "") else value
    try:
        found = float(value)
    except (TypeError, ValueError):
        return value
    return int(found) if found.is_integer() else found


def _sent(parameters: dict) -> dict:
    if parameters.get("mode") == CHAT_REPLY:
        return {**parameters, "mode": "chat", "n": 1}
    return parameters


def session_settings(calls: list[dict], log: dict | None, own_calls: bool,
                     tab_list: bool = False) -> tuple[tuple[str, tuple], ...]:  # fmt: skip
    """A session's settings as it ran: (setting, the distinct values it ran with), each from its
    model calls' parameters, else (a decoding setting) from its log record `log`; () where
    neither records it. `own_calls`: its paradigm calls the model otherwise than the
    condition's Tab settings say (a chat assistant), so the log's Tab settings say nothing of
    what ran. `tab_list`: its calls are Tab lists', whose calls made before `unit` was recorded
    kept the first sentence, the one rule there was."""
    found = []
    for key in SETTINGS:
        values = {number(_sent(call).get(key)) for call in calls} - {None}
        if key == "unit" and tab_list and any("unit" not in call for call in calls):
            values.add("sentence")
        if not values and log and not own_calls and key in LOG_KEYS:
            values = {number(log.get(LOG_KEYS[key]))} - {None}
        found.append((key, tuple(sorted(values, key=str))))
    return tuple(found)


def models_sent(calls: list[dict]) -> list[str]:
    """The models a session's calls were sent with (session_settings' "model"), sorted; none for
    a session that made no call: its log records no model, and study.toml's of today may have
    been swapped in after it (for models.csv and a proactive export's sessions.csv)."""
    return [str(model) for model in dict(session_settings(calls, None, own_calls=True))["model"]]


def log_settings(records: Iterable[dict]) -> dict | None:
    """The record of a session's log (its records in order) that carries its decoding settings:
    the first of the first LOG_RECORDS_READ with a temperature; None when none has one (a log
    stored before the server filled them in, or a control arm's, which has none)."""
    for i, record in enumerate(records):
        if i >= LOG_RECORDS_READ:
            break
        if isinstance(record, dict) and record.get("currentTemperature") not in (None, ""):
            return record
    return None


def stored_log_settings(connection: Connection, session_id: str) -> dict | None:
    """log_settings of the session's log as stored, reading no more of it than that needs."""
    query = (select(events.c.record).where(events.c.session_id == session_id)
             .order_by(events.c.seq).limit(LOG_RECORDS_READ))  # fmt: skip
    return log_settings(_parsed(record) for (record,) in connection.execute(query))


def _parsed(record: str):
    try:
        return json.loads(record)
    except ValueError:
        return None  # a record that does not parse carries no settings
