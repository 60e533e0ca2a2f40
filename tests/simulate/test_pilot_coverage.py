"""A pilot pilots the study (issue 25, item 6): a default-size pilot writes every prompt and
condition, says what it left out when it is smaller, and every persona uses the suggestions."""

from __future__ import annotations

from click.testing import CliRunner
from sqlalchemy import select

from study import config
from study.cli import main
from study.simulate.personas import Persona
from study.simulate.run import Options, simulate
from study.store import make_engine, reading
from study.store.db import sessions


def _written(folder) -> tuple[set[str], set[str]]:
    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        rows = connection.execute(select(sessions.c.prompt_code, sessions.c.condition)).all()
    engine.dispose()
    return {r.prompt_code for r in rows}, {r.condition for r in rows}


def test_a_pilot_of_the_default_size_writes_every_prompt_and_condition(pilot_folder, suggestion_model):
    study = config.load(pilot_folder)
    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--suggestions-endpoint",
                                       suggestion_model, "--parallel", "4"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"{len(study.prompts)} simulated session(s) finished" in result.output
    assert "Every prompt and condition has a session." in result.output
    prompts, conditions = _written(pilot_folder)
    assert prompts == {p.code for p in study.prompts}  # the argumentative ones too
    assert conditions == {c.name for c in study.conditions}


def test_a_smaller_pilot_draws_both_genres_and_names_what_it_left_out(pilot_folder, suggestion_model):
    study = config.load(pilot_folder)
    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "2",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    prompts, _ = _written(pilot_folder)
    assert {study.prompt(code).genre for code in prompts} == {p.genre for p in study.prompts}
    missing = [p.code for p in study.prompts if p.code not in prompts]
    assert f"No session yet for {len(missing)} prompt(s): {', '.join(missing)}." in result.output


def test_a_writer_who_would_never_ask_still_asks_once(pilot_folder, suggestion_model):
    never = Persona("a writer who never asks the AI", query_rate=0.0)
    summary = simulate(str(pilot_folder), Options(writers=2, personas=(never,),
                                                  suggestions_endpoint=suggestion_model), echo=lambda _: None)  # fmt: skip
    assert len(summary.sessions) == 2 and not summary.errors
    assert all(result.queries == 1 for result in summary.sessions)
