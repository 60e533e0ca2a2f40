"""A pilot pilots the study (issue 25, item 6): a default-size pilot writes every prompt and
condition, says what it left out when it is smaller, and every persona uses the suggestions."""

from __future__ import annotations

from click.testing import CliRunner
from sqlalchemy import select

from study import config
from study.cli import main, write_study_files
from study.simulate.personas import Persona
from study.simulate.run import Options, simulate
from study.store import make_engine, reading
from study.store import sessions as session_store
from study.store.db import sessions
from tests.conftest import CONTACT


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


# study.toml's template's rounds, uncommented as a researcher running two rounds would: a
# qualification round of five creative prompts (a link without ?round= enters it), then a main
# round for the writers who passed.
QUALIFICATION = ["shapeshifter", "reincarnation", "mana", "obama", "pig"]
TEMPLATE_ROUNDS = ('# [[rounds]]\n# name = "qualification"\n# kind = "qualification"\n',
                   '# prompts = ["shapeshifter", "reincarnation", "mana", "obama", "pig"]\n',
                   '# [[rounds]]\n# name = "main"\n# kind = "main"\n# requires = "qualification"\n')


def _with_rounds(tmp_path, *, main_default: bool = False):
    """The template's study with its rounds; `main_default`: the main round is the one a link
    without ?round= enters (default = true)."""
    folder = tmp_path / "rounds"
    uncommented = {line: line.replace("# ", "") for line in TEMPLATE_ROUNDS}
    if main_default:
        uncommented[TEMPLATE_ROUNDS[2]] += "default = true\n"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 1", **uncommented, **CONTACT})
    assert [r["name"] for r in config.load(folder).raw["rounds"]] == ["qualification", "main"]
    return folder


def test_a_pilot_of_a_study_with_rounds_writes_and_reports_the_round_its_writers_enter(tmp_path, suggestion_model):
    folder = _with_rounds(tmp_path)
    study = config.load(folder)
    creative = [c.name for c in study.conditions if c.genre == "creative"]
    result = CliRunner().invoke(main, ["simulate", str(folder), "--suggestions-endpoint",
                                       suggestion_model, "--parallel", "4"])  # fmt: skip
    assert result.exit_code == 0, result.output
    # One writer per prompt of the round, not of the study's 20.
    assert "5 simulated session(s) finished, 0 stopped" in result.output
    prompts, conditions = _written(folder)
    assert prompts == set(QUALIFICATION)
    assert conditions == set(creative)
    # The 15 prompts and two arms outside the round are not reported as left out.
    assert "No session yet" not in result.output
    assert "Every prompt and condition of round 'qualification' has a session." in result.output
    assert ("Writers enter round 'qualification' (as a task link without ?round= does), which "
            f"offers 5 of the study's {len(study.prompts)} prompt(s).") in result.output  # fmt: skip


def test_a_smaller_pilot_of_a_round_names_only_what_the_round_left_out(tmp_path, suggestion_model):
    folder = _with_rounds(tmp_path)
    result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "2",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2 simulated session(s) finished, 0 stopped" in result.output  # --writers still counts
    prompts, _ = _written(folder)
    assert prompts < set(QUALIFICATION)
    missing = [code for code in QUALIFICATION if code not in prompts]
    assert (f"No session yet in round 'qualification' for 3 prompt(s): {', '.join(missing)}."
            in result.output)  # fmt: skip
    # The argumentative arms are never given in a round of creative prompts: no more writers
    # could pilot them, so they are not named.
    assert "condition(s)" not in result.output


def test_a_pilot_whose_writers_would_enter_a_round_for_qualified_writers_is_refused_before_any_writer(tmp_path):
    """The main round made the default (a researcher past the qualification round): a link
    without ?round= enters it, and the server admits only writers who passed 'qualification',
    which no simulated writer has. The run says so and what to do, instead of twenty writers
    turned away and 'Run more writers'."""
    folder = _with_rounds(tmp_path, main_default=True)
    result = CliRunner().invoke(main, ["simulate", str(folder)])
    assert result.exit_code == 1
    assert (f"{folder / 'study.toml'}: rounds: round 'main', which a task link without ?round= "
            "enters, admits only writers who passed round 'qualification'; no simulated writer "
            "has, so the server would turn every one away.") in result.output  # fmt: skip
    assert ("Fix: pilot in a copy of this folder in which 'qualification' is the round a link "
            "without ?round= enters (default = true on it, and on no other round)") in result.output  # fmt: skip
    assert "writer 0" not in result.output and "Run more writers" not in result.output
    assert not (folder / "study.db").exists()  # no writer entered: not even a database was made


def test_a_closed_condition_is_named_as_closed_not_as_wanting_more_writers(pilot_folder, suggestion_model):
    """An arm closed to new participants (assign = false) is given to no simulated writer: the
    run used to ask for more writers to pilot it, which no number of writers would."""
    toml = pilot_folder / "study.toml"
    toml.write_text(toml.read_text().replace('name = "creative-high"\n', 'name = "creative-high"\nassign = false\n'))
    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "4",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    _, conditions = _written(pilot_folder)
    assert conditions == {"creative-low", "argumentative-low", "argumentative-high"}
    assert ("Not piloted: 1 condition(s) closed to new participants (assign = false): creative-high. "
            "No writer is given one; to pilot them, pilot a copy of this folder with them open.") in result.output  # fmt: skip
    assert "condition(s): creative-high" not in result.output


def test_a_session_left_unfinished_does_not_count_as_piloting_its_prompt(pilot_folder, suggestion_model):
    """A writer stopped half-way (a run interrupted with Ctrl-C, a page the simulator did not
    expect) leaves a session at the writing page: its prompt and condition are not piloted, and
    `study export` leaves the session out, so the run must not count it."""
    from study.server import create_app
    from study.store import writing
    from study.store import simulated
    from tests.server.flow import start, to_writing

    study = config.load(pilot_folder)
    client = create_app(study, suggestion_engine=object()).test_client()
    stopped = start(client, access_code="sim-interrupted-0")
    to_writing(client, stopped, prompt="shapeshifter")
    engine = make_engine(study.database_url)
    with writing(engine) as connection:  # as the interrupted run marked it when it entered
        simulated.mark(connection, stopped, persona="a careful writer", intent="a story", model="deterministic")
    engine.dispose()

    result = CliRunner().invoke(main, ["simulate", str(pilot_folder), "--writers", "2", "--parallel", "1",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        finished = {s["prompt_code"] for s in session_store.all_sessions(connection, finished_only=True)}
    engine.dispose()
    assert "shapeshifter" not in finished  # the run's two writers wrote other prompts
    missing = [p.code for p in study.prompts if p.code not in finished]
    assert f"No session yet for {len(missing)} prompt(s): {', '.join(missing)}." in result.output
