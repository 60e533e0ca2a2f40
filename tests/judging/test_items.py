"""The texts a judging round is built from (study.judging.items)."""

from __future__ import annotations

from click.testing import CliRunner
from sqlalchemy import select

from study import config
from study.cli import main, write_study_files
from study.server import create_app
from study.store import make_engine, reading
from study.store.judging import judging_items
from tests.conftest import CONTACT
from tests.judging.finished import set_section
from tests.server.flow import INIT_EVENT, start, to_writing


def test_judges_rate_the_text_the_log_shows_not_a_text_sent_at_finish(tmp_path):
    # The finish request carries the editor's text, and anyone can send it by hand: what a
    # writer wrote is what their event log replays to, which the release publishes too.
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    set_section(folder, "judging", {"unit": "document", "k": 1, "items_per_task": 1})
    study = config.load(folder)
    app = create_app(study, suggestion_engine=object())
    client = app.test_client()
    session_id = start(client)
    to_writing(client, session_id, prompt="shapeshifter")
    prompt = study.prompt("shapeshifter").text.rstrip("\n") + "\n"  # as the writing page starts it
    typed = " The storm came at night."
    events = [
        {**INIT_EVENT, "seq": 0, "currentDoc": prompt, "currentCursor": len(prompt) - 1},
        {**INIT_EVENT, "seq": 1, "eventName": "text-insert", "eventSource": "user",
         "textDelta": {"ops": [{"retain": len(prompt) - 1}, {"insert": typed}]},
         "currentDoc": "", "currentCursor": len(prompt) - 1 + len(typed)},
    ]  # fmt: skip
    stored = client.post(f"/api/sessions/{session_id}/events", json={"events": events})
    assert stored.status_code == 200, stored.json
    forged = prompt.rstrip("\n") + " An essay the writer never typed, sent with the finish button.\n"
    finished = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 1, "text": forged})
    assert finished.status_code == 200, finished.json
    both = {"clear_ending": "yes", "collaborated": "yes"}
    assert client.post(f"/s/{session_id}/evaluation", data=both).status_code == 302
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302
    app.extensions["study.engine"].dispose()

    built = CliRunner().invoke(main, ["judging", "build", str(folder)])

    assert built.exit_code == 0, built.output
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        texts = connection.execute(select(judging_items.c.text)).scalars().all()
    engine.dispose()
    assert texts == [typed.strip()]


def _pilot(tmp_path, texts: list[str], simulated: int):
    """A study whose first `simulated` finished sessions were written by `study simulate`
    (marked as it marks them), the rest by people."""
    from study.store import create_tables
    from study.store import simulated as simulated_store
    from study.store import writing
    from tests.judging.finished import finish_sessions

    folder = tmp_path / "study"
    write_study_files(folder, replacements=CONTACT)
    set_section(folder, "judging", {"unit": "document", "k": 1, "items_per_task": 2})
    study = config.load(folder)
    engine = make_engine(study.database_url)
    create_tables(engine)
    made = finish_sessions(engine, study, texts)
    with writing(engine) as connection:
        for session_id in made[:simulated]:
            simulated_store.mark(connection, session_id, persona="careful", intent="a story", model="deterministic")
    engine.dispose()
    return folder


def test_a_pilot_of_simulated_writers_only_is_told_why_nothing_is_judged(tmp_path):
    # Right after `study simulate` every session is finished, so "no finished session" would
    # send the researcher looking for a fault in the sessions instead of for people.
    folder = _pilot(tmp_path, ["A simulated story.", "Another simulated essay."], simulated=2)

    built = CliRunner().invoke(main, ["judging", "build", str(folder)])

    assert built.exit_code == 1
    assert "the 2 finished session(s) in this study were written by `study simulate`" in built.output
    assert "Fix: build the round once people have finished sessions" in built.output


def test_building_says_how_many_simulated_sessions_it_left_out(tmp_path):
    folder = _pilot(tmp_path, ["A simulated story.", "A person's essay.", "Another person's story."], simulated=1)

    built = CliRunner().invoke(main, ["judging", "build", str(folder)])

    assert built.exit_code == 0, built.output
    assert "2 document item(s) from 2 session(s)" in built.output
    assert "Left out 1 simulated session(s) (study simulate)" in built.output
