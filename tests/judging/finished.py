"""Finished writing sessions stored as the task server stores them, for tests whose subject is
what happens after writing (judging, preregistration, release)."""

from __future__ import annotations

import time
import tomllib

import tomli_w

from study.store import sessions as session_store
from study.store import writing


def finish_sessions(engine, study, texts: list[str], *, worker_prefix: str = "W") -> list[str]:
    """One finished session per text, in the study's conditions in turn; returns their ids."""
    made = []
    with writing(engine) as connection:
        for number, text in enumerate(texts):
            session = session_store.create(connection, worker_id=f"{worker_prefix}{number}",
                                           assignment_id=f"A{worker_prefix}{number}", hit_id="H1")  # fmt: skip
            condition = study.conditions[number % len(study.conditions)]
            prompt = next(p for p in study.prompts if p.genre == condition.genre)
            now = time.time()
            session_store.update_session(
                connection, session["session_id"], stage="complete", condition=condition.name,
                paradigm=condition.paradigm, prompt_code=prompt.code, final_text=f"{prompt.text.strip()} {text}\n",
                writing_started_at=now - 600, writing_finished_at=now, completed_at=now,
            )  # fmt: skip
            made.append(session["session_id"])
    return made


def set_section(folder, name: str, values: dict) -> None:
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data[name] = values
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
