"""Finished writing sessions made straight in the store, with CoAuthor events built from a
script of who writes what: ("W", text) the writer types (in one insert: 20 characters or more of
new text is a paste from outside, study.curation.origin), ("S", text) the writer asks the AI and
accepts a suggestion, ("Q", "") asks and dismisses, ("D", n) deletes the last n characters,
("F", "") the window regains focus. An L0 assistant panel (MindCopilot): ("ASK", (request,
chatId, response)) asks and gets a response, ("ASK", (request, None, reason)) gets none,
("COPY", (chatId, text)) copies from a response, ("PANEL", (chatId, text)) pastes from it."""

from __future__ import annotations

import json
import time

from sqlalchemy import insert

from study.curation.replay import to_units
from study.store import events as event_store
from study.store import sessions as session_store
from study.store import writing
from study.store.db import suggestion_requests
from study.store.mturk import mturk_assignments
from study.store.review_tables import session_rounds

CONTROLS = {
    "currentN": "5", "currentMaxToken": "30", "currentTemperature": "0.3", "currentTopP": "1",
    "currentPresencePenalty": "0", "currentFrequencyPenalty": "0",
}  # fmt: skip
START_MS = 1_700_000_000_000


def _event(name: str, source: str, t: int, delta="", suggestions=None) -> dict:
    return {
        "eventName": name, "eventSource": source, "eventTimestamp": t, "textDelta": delta,
        "cursorRange": "", "currentDoc": "", "currentCursor": 0,
        "currentSuggestions": suggestions or [], "currentSuggestionIndex": 0,
        "currentHoverIndex": "", **CONTROLS,
    }  # fmt: skip


def _l0(name: str, source: str, t: int, **extension) -> dict:
    return {**_event(name, source, t), "proactive": {"paradigm": "L0", **extension}}


def build_events(prompt: str, script: list[tuple[str, object]], step_ms: int = 1000) -> list[dict]:
    doc = prompt.rstrip("\n") + "\n"
    first = _event("system-initialize", "api", START_MS)
    first["currentDoc"] = doc
    events = [first]
    clock = START_MS

    def tick() -> int:
        nonlocal clock
        clock += step_ms
        return clock

    for kind, value in script:
        end = (
            len(to_units(doc)) - 1
        )  # before Quill's final newline, in UTF-16 units as Quill counts
        if kind == "W":
            events.append(
                _event("text-insert", "user", tick(), {"ops": [{"retain": end}, {"insert": value}]})
            )
            doc = doc[:-1] + value + "\n"
        elif kind in ("S", "Q"):
            shown = [
                {
                    "index": 0,
                    "original": value or " and then",
                    "trimmed": (value or " and then").strip(),
                }
            ]
            events.append(_event("suggestion-get", "user", tick()))
            events.append(_event("suggestion-open", "api", tick(), suggestions=shown))
            if kind == "S":
                events.append(_event("suggestion-select", "user", tick(), suggestions=shown))
                events.append(_event("suggestion-close", "api", tick()))
                events.append(
                    _event(
                        "text-insert", "api", tick(), {"ops": [{"retain": end}, {"insert": value}]}
                    )
                )
                doc = doc[:-1] + value + "\n"
            else:
                events.append(_event("suggestion-close", "user", tick()))
        elif kind == "F":
            events.append(_event("window-focus", "user", tick()))
        elif kind == "ASK":
            request, chat_id, answer = value
            events.append(_l0("chat-send", "user", tick(), text=request))
            if chat_id is None:
                events.append(_l0("suggestion-fail", "api", tick(), reason=answer))
            else:
                events.append(_l0("chat-receive", "api", tick(), chatId=chat_id, text=answer))
        elif kind == "COPY":
            events.append(_l0("chat-copy", "user", tick(), chatId=value[0], text=value[1]))
        elif kind == "PANEL":
            chat_id, text = value
            event = _event("text-insert", "user", tick(), {"ops": [{"retain": end}, {"insert": text}]})
            events.append({**event, "proactive": {"paradigm": "L0", "paste": True, "chatId": chat_id}})
            doc = doc[:-1] + text + "\n"
        elif kind == "D":
            events.append(
                _event(
                    "text-delete",
                    "user",
                    tick(),
                    {"ops": [{"retain": end - value}, {"delete": value}]},
                )
            )
            doc = doc[: len(doc) - 1 - value] + "\n"  # (deletes are used on ASCII text only)
        else:
            raise ValueError(kind)
    return events


STORY = [("W", " She met him again."), ("S", " He smiled, and she knew."), ("W", " The end.")]


def finished_session(
    engine,
    *,
    worker_id: str | None = None,
    access_code: str | None = None,
    prompt_code: str = "shapeshifter",
    prompt: str = "A woman keeps dating the same shapeshifter.",
    script=STORY,
    round_name: str | None = None,
    completed_at: float | None = None,
) -> str:
    """A session at the completion page with its events stored; returns its id."""
    events = build_events(prompt, script)
    with writing(engine) as connection:
        session = session_store.create(
            connection,
            worker_id=worker_id,
            assignment_id=f"ASSIGN{worker_id}" if worker_id else None,
            hit_id="HITQUALIFICATION1" if worker_id else None,
            access_code=access_code,
        )
        session_id = session["session_id"]
        now = completed_at or time.time()
        session_store.update_session(
            connection, session_id, prompt_code=prompt_code, condition="creative-low",
            stage="complete", writing_started_at=now - 700, writing_finished_at=now - 60,
            completed_at=now, final_text="...", verification_code=session_store.new_verification_code(),
            self_evaluation=json.dumps({"clear_ending": True, "collaborated": True}),
            survey=json.dumps({}),
        )  # fmt: skip
        if round_name:
            connection.execute(
                insert(session_rounds).values(session_id=session_id, round=round_name)
            )
    event_store.ingest(engine, session_id, [{"seq": i, **e} for i, e in enumerate(events)])
    # Each Tab press reached the task server, which asked the model: its own record is what
    # review and the qualification rules count, never the browser's suggestion-get events.
    # So did each request of an L0 assistant panel (its chatId is the request's row).
    asked = [e for e in events if e["eventName"] in ("suggestion-get", "chat-send")]
    with writing(engine) as connection:
        for event in asked:
            connection.execute(insert(suggestion_requests).values(
                session_id=session_id, created_at=event["eventTimestamp"] / 1000,
                condition="creative-low", model="test-model", parameters="{}", raw="[]",
                suggestions="[]", latency_ms=1.0,
            ))  # fmt: skip
    return session_id


def confirm_by_sync(engine, worker_id: str, assignment_id: str | None = None) -> None:
    """The worker's assignment as `study mturk sync` records it: only sessions MTurk confirmed
    count for releases and repeat checks (issue 10). `finished_session`'s assignment id unless
    another is given."""
    with writing(engine) as connection:
        connection.execute(insert(mturk_assignments).values(
            environment="sandbox", assignment_id=assignment_id or f"ASSIGN{worker_id}",
            hit_id="HITQUALIFICATION1", worker_id=worker_id, status="Submitted",
            synced_at=time.time(),
        ))  # fmt: skip
