"""`study judging build`: the round's items and tasks, from the study's finished sessions.

An item is a session's final text as its event log replays it, without its prompt (the writer
did not write the prompt), whole (unit = "document") or split into sentences with pysbd
(unit = "sentence"; the splitter the suggestion engine and the report already use). Simulated sessions (`study simulate`) are
left out: judges rate what people wrote. Item ids are random pseudonyms, so nothing on a
judge's page leads back to a session.

Building again replaces the round only while no judge has taken a task; after that it is
refused, since ratings already given name the old items.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from sqlalchemy import Connection, delete, func, select

from study.config import Study
from study.curation.replay import DeltaError, replay
from study.judging import design as design_module
from study.judging import gold as gold_module
from study.judging.settings import JudgingSettings
from study.review.presentation import identifiers
from study.store import events as event_store
from study.store import sessions as session_store
from study.store.judging import judging_items, judging_ratings, judging_task_items, judging_tasks
from study.store.simulated import simulated_ids


class BuildError(ValueError):
    pass


@dataclass(frozen=True)
class Built:
    sessions: int
    items: int
    gold: int
    tasks: int
    simulated: int = 0  # finished sessions left out as written by `study simulate`


@cache
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def written_text(study: Study, session: dict, events: Sequence[Mapping] = ()) -> str:
    """What the writer added to the prompt: their event log replayed (the text a release
    publishes), without the prompt. The finish request's text is taken only for a session
    whose log does not replay (a chat session keeps its own): anyone can send that request
    by hand, with a text nobody typed."""
    try:
        return replay(events).without_prompt().strip()
    except (ValueError, DeltaError):
        pass
    text = session["final_text"] or ""
    try:
        prompt = study.prompt(session["prompt_code"]).text.strip() if session["prompt_code"] else ""
    except KeyError:
        prompt = ""
    stripped = text.strip()
    if prompt and stripped.startswith(prompt):
        stripped = stripped[len(prompt):]
    return stripped.strip()


def units(text: str, unit: str, min_chars: int) -> list[str]:
    """The texts a judge rates from one document."""
    if unit == "document":
        return [text] if len(text) >= min_chars else []
    return [s.strip() for s in _segmenter().segment(text) if len(s.strip()) >= min_chars]


def new_item_id() -> str:
    return secrets.token_hex(6)


def build(connection: Connection, study: Study, settings: JudgingSettings) -> Built:
    claimed = connection.execute(
        select(func.count()).select_from(judging_tasks).where(judging_tasks.c.claimed_at.is_not(None))
    ).scalar()
    if claimed:
        raise BuildError(
            f"{claimed} judging task(s) are already taken, so the round's items cannot change. "
            "Fix: finish this round (study judging export) before building another in a copy of the study."
        )
    for table in (judging_ratings, judging_task_items, judging_tasks, judging_items):
        connection.execute(delete(table))
    simulated = simulated_ids(connection)
    now = time.time()
    rows, sessions_used, simulated_left_out = [], 0, 0
    for session in session_store.all_sessions(connection, finished_only=True):
        if session["session_id"] in simulated:
            simulated_left_out += 1
            continue
        # Blind: a worker id (or assignment id, access code) the writer typed into the text is
        # masked as the reviewers' workspace masks it (study.review.identifiers).
        events = event_store.records(connection, session["session_id"])
        text = identifiers(session).mask_text(written_text(study, session, events))
        pieces = units(text, settings.unit, settings.min_chars)
        sessions_used += bool(pieces)
        for position, text in enumerate(pieces):
            rows.append({"item_id": new_item_id(), "session_id": session["session_id"],
                         "unit": settings.unit, "position": position, "text": text,
                         "gold_score": None, "created_at": now})  # fmt: skip
    gold_rows = []
    if settings.gold:
        try:
            found = gold_module.read(study.directory / settings.gold, settings.scores)
        except gold_module.GoldError as error:
            raise BuildError(str(error)) from None
        gold_rows = [{"item_id": new_item_id(), "session_id": None, "unit": "gold",
                      "position": 0, "text": g.text, "gold_score": g.score, "created_at": now}
                     for g in found]  # fmt: skip
    if not rows and simulated_left_out:
        # A pilot's folder holds only `study simulate`'s sessions: "no finished session" would
        # send the researcher looking for a fault in sessions they can see are finished.
        raise BuildError(
            f"no session a person finished has text to judge: the {simulated_left_out} finished "
            "session(s) in this study were written by `study simulate`, and judges rate only what "
            "people wrote. Fix: build the round once people have finished sessions (study status "
            "counts them)."
        )
    if not rows:
        raise BuildError(
            "no finished session has text to judge yet. Fix: build the round once writers have finished."
        )
    connection.execute(judging_items.insert(), rows + gold_rows)
    tasks = design_module.design(
        [r["item_id"] for r in rows], k=settings.k, items_per_task=settings.items_per_task,
        gold_ids=[g["item_id"] for g in gold_rows], gold_per_task=settings.gold_per_task,
        seed=settings.seed,
    )  # fmt: skip
    task_rows, placed = [], []
    for number, task in enumerate(tasks):
        task_id = secrets.token_hex(16)
        task_rows.append({"task_id": task_id, "pass_no": task.pass_no, "number": number})
        placed += [{"task_id": task_id, "item_id": item, "position": i} for i, item in enumerate(task.items)]
    connection.execute(judging_tasks.insert(), task_rows)
    connection.execute(judging_task_items.insert(), placed)
    return Built(sessions_used, len(rows), len(gold_rows), len(task_rows), simulated_left_out)
