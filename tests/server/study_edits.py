"""Helpers for tests that edit study.toml mid-study and serve the study again on the same
database (study.server.within's arm lists, arms closed with `assign = false`)."""

from __future__ import annotations

import tomllib

import tomli_w

from study import config
from study.cli import write_study_files
from study.server import create_app
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.conftest import CONTACT
from tests.server.flow import finish, start, to_writing

DHILLON_ARMS = ["no-ai", "next-sentence", "next-paragraph"]  # the dhillon design, in study.toml order


def dhillon_study(tmp_path):
    """A within-subjects study of three creative arms (`study init --design dhillon`)."""
    folder = tmp_path / "dhillon"
    write_study_files(folder, design="dhillon", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    return folder


def edit_arms(folder, edit) -> list[dict]:
    """study.toml's [[conditions]] as `edit` makes them; returns them as they were."""
    toml = folder / config.CONFIG_NAME
    data = tomllib.loads(toml.read_text(encoding="utf-8"))
    before = data["conditions"]
    data["conditions"] = edit(before)
    toml.write_text(tomli_w.dumps(data), encoding="utf-8")
    return before


def keep_prompts(folder, count: int) -> None:
    """study.toml with its first `count` prompts only."""
    toml = folder / config.CONFIG_NAME
    data = tomllib.loads(toml.read_text(encoding="utf-8"))
    data["prompts"] = data["prompts"][:count]
    toml.write_text(tomli_w.dumps(data), encoding="utf-8")


def five_arms(conditions: list[dict]) -> list[dict]:
    """The dhillon design's arms and two more Tab arms: with five arms, Williams' design's first
    rows are not the cyclic square's, as they are with three (study.server.within)."""
    return [*conditions, *({**conditions[1], "name": f"next-{n}-sentences", "max_tokens": 30 * n} for n in (2, 3))]


def serve_again(folder):
    """A test client of the study as study.toml says now (`study serve` again)."""
    return create_app(config.load(folder), suggestion_engine=object()).test_client()


def write_part(client, code: str, first: bool) -> str:
    """One whole session of the participant with this access code (a later one by `another=1`)."""
    session_id = start(client, access_code=code, **({} if first else {"another": "1"}))
    to_writing(client, session_id, prompt=None)  # a prompt of their own for each arm
    finish(client, session_id)
    return session_id


def sessions_of(folder) -> list[dict]:
    """Every session the study in `folder` has stored, as the study database holds it."""
    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        found = session_store.all_sessions(connection)
    engine.dispose()
    return found


def conditions_given(folder) -> dict[str, str]:
    return {s["session_id"]: s["condition"] for s in sessions_of(folder)}


def told_all_done(client, code: str) -> bool:
    """Whether a participant coming back is told they have written in every part."""
    page = client.get(f"/task?access_code={code}&another=1").get_data(as_text=True)
    return "You have written in every part of this study." in page
