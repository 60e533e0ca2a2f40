"""A release's card and arms.json say what the released sessions ran with, not what study.toml
says on the day of the build: a researcher who raises a condition's temperature and swaps its
model between sessions (keeping its name) publishes both settings, each with its sessions, and
a note that study.toml now says otherwise; what nothing recorded reads "not recorded"."""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner
from sqlalchemy import event
from sqlalchemy.engine import Engine

from study import config
from study.release.cli import release
from study.release.keys import init_keyfile
from study.server import create_app
from study.store import make_engine, writing
from study.store.simulated import mark
from study.store import sessions as session_store
from tests.chat.conftest import chat_folder  # noqa: F401 - a fixture
from tests.export.served_as_run import ARM, SWAPPED, a_study, change_arm, serve_one
from tests.release.test_release_chat import WITHDRAWN, WRITER, _build, _take_part


def build(folder, tmp_path):
    key = init_keyfile(tmp_path / "study.key")
    args = ["build", str(folder), "--version", "1.0.0", "--out", str(tmp_path / "releases"),
            "--key", str(key.path), "-j", "1"]  # fmt: skip
    result = CliRunner().invoke(release, args)
    assert result.exit_code == 0, result.output
    directory = tmp_path / "releases" / "coauthor-1.0.0"
    card = (directory / "README.md").read_text(encoding="utf-8")
    arms = json.loads((directory / "arms.json").read_text(encoding="utf-8"))["arms"]
    return card, arms


def card_rows(card: str) -> dict[str, list[dict]]:
    """The card's table of the conditions (the one whose first column is `condition`):
    condition -> its rows, by column."""
    table = "| condition |" + card.split("\n| condition |", 1)[1].split("\n\n", 1)[0]
    lines = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()]
    header, rows = lines[0], lines[2:]
    found: dict[str, list[dict]] = {}
    for row in rows:
        found.setdefault(row[0], []).append(dict(zip(header, row)))
    return found


def test_a_setting_changed_between_sessions_is_published_as_each_session_ran(tmp_path, model_url):
    folder = a_study(tmp_path, model_url)
    serve_one(folder, "A1FIRSTWRITER", asks=True)
    change_arm(folder, "temperature = 0.75", "temperature = 0.9")  # after the pilot
    change_arm(folder, 'model = "davinci-002"', f'model = "{SWAPPED}"')
    serve_one(folder, "A2SECONDWRITER", asks=True)

    card, arms = build(folder, tmp_path)

    rows = card_rows(card)
    ran = [(r["model"], r.get("answered by"), r["temperature"], r.get("sessions")) for r in rows[ARM]]
    assert ran == [("davinci-002", "deterministic", "0.75", "1"), (SWAPPED, "deterministic", "0.9", "1")]
    # The other conditions of study.toml ran no released session: not in the table, said in a note.
    assert set(rows) == {ARM}
    assert ("No released session ran with `creative-low`, `argumentative-low` and `argumentative-high`, "
            "which study.toml has as conditions.") in card
    assert (f"study.toml now sets temperature 0.9 for `{ARM}`; of its 2 released sessions, 1 ran with "
            "0.75, 1 ran with 0.9.") in card  # fmt: skip
    assert f"study.toml now sets model {SWAPPED} for `{ARM}`" in card

    mine = [(a["model"], a["temperature"], a["answered_models"], a["sessions"]) for a in arms if a["name"] == ARM]
    assert mine == [("davinci-002", 0.75, ["deterministic"], 1), (SWAPPED, 0.9, ["deterministic"], 1)]
    # An arm nobody ran keeps study.toml's design, and says no session ran it.
    (low,) = [a for a in arms if a["name"] == "creative-low"]
    assert (low["temperature"], low["sessions"]) == (0.3, 0)


def test_a_condition_moved_from_sentences_to_paragraphs_is_published_with_the_unit_each_session_had(tmp_path, model_url):
    """The researcher sets `unit = "paragraph"` on an arm after its pilot: its writers saw
    single sentences, then paragraphs, and the card and arms.json tell the two apart."""
    folder = a_study(tmp_path, model_url)
    serve_one(folder, "A1FIRSTWRITER", asks=True)
    change_arm(folder, "temperature = 0.75", 'temperature = 0.75\nunit = "paragraph"')
    serve_one(folder, "A2SECONDWRITER", asks=True)

    card, arms = build(folder, tmp_path)

    assert [(r["unit"], r.get("sessions")) for r in card_rows(card)[ARM]] == [("sentence", "1"), ("paragraph", "1")]
    assert (f"study.toml now sets unit paragraph for `{ARM}`; of its 2 released sessions, 1 ran with "
            "sentence, 1 ran with paragraph.") in card  # fmt: skip
    assert [(a["unit"], a["sessions"]) for a in arms if a["name"] == ARM] == [("sentence", 1), ("paragraph", 1)]


def test_tab_calls_stored_before_the_unit_was_recorded_are_published_as_sentences(tmp_path, model_url):
    """A study upgraded mid-run: its earlier Tab calls record no unit, and kept the first
    sentence (the only rule then). The arm is one row, not "not recorded" beside "sentence"."""
    import json as json_module

    from study.store.db import suggestion_requests

    folder = a_study(tmp_path, model_url)
    serve_one(folder, "A1FIRSTWRITER", asks=True)
    engine = make_engine(config.load(folder).database_url)
    with writing(engine) as connection:  # as a version before `unit` stored them
        for row in connection.execute(suggestion_requests.select()).mappings().all():
            sent = json_module.loads(row["parameters"])
            sent.pop("unit", None)
            connection.execute(suggestion_requests.update().where(suggestion_requests.c.id == row["id"])
                               .values(parameters=json_module.dumps(sent)))  # fmt: skip
    engine.dispose()
    serve_one(folder, "A2SECONDWRITER", asks=True)

    card, arms = build(folder, tmp_path)

    assert [(r["unit"], r.get("sessions")) for r in card_rows(card)[ARM]] == [("sentence", "2")]
    assert [(a["unit"], a["sessions"]) for a in arms if a["name"] == ARM] == [("sentence", 2)]


def test_the_build_reads_the_model_calls_once_for_metadata_csv_and_arms_json(tmp_path, model_url):
    """metadata.csv's settings (the study's export) and arms.json come from one read of the stored
    model calls: a study's calls table grows with every Tab press, and two reads of it during a
    build could also see two different tables (a call settled between them)."""
    folder = a_study(tmp_path, model_url)
    serve_one(folder, "A1FIRSTWRITER", asks=True)
    change_arm(folder, "temperature = 0.75", "temperature = 0.9")
    serve_one(folder, "A2SECONDWRITER", asks=True)
    reads = []

    def note(connection, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("SELECT") and "suggestion_requests.parameters" in statement:
            reads.append(statement)

    event.listen(Engine, "before_cursor_execute", note)
    try:
        card, arms = build(folder, tmp_path)
    finally:
        event.remove(Engine, "before_cursor_execute", note)

    assert len(reads) == 1, reads
    with open(tmp_path / "releases" / "coauthor-1.0.0" / "metadata.csv", newline="", encoding="utf-8") as handle:
        temperatures = sorted(float(row["temperature"]) for row in csv.DictReader(handle))
    assert temperatures == sorted(a["temperature"] for a in arms if a["name"] == ARM) == [0.75, 0.9]


def test_a_session_without_a_model_call_has_its_model_not_recorded_and_its_settings_from_its_log(tmp_path, model_url):
    """The first writer never pressed Tab: no call says which model they would have had, so the
    card does not borrow today's; their log says the temperature the server gave them."""
    folder = a_study(tmp_path, model_url)
    serve_one(folder, "A1FIRSTWRITER", asks=False)
    change_arm(folder, "temperature = 0.75", "temperature = 0.9")
    change_arm(folder, 'model = "davinci-002"', f'model = "{SWAPPED}"')

    card, arms = build(folder, tmp_path)

    (row,) = card_rows(card)[ARM]
    assert (row["model"], row.get("answered by"), row["temperature"], row["max tokens"]) == (
        "not recorded", "not recorded", "0.75", "30")
    assert SWAPPED not in card.split("## Composition", 1)[1].split("**`study.toml` now says otherwise.**")[0]
    assert f"study.toml now sets temperature 0.9 for `{ARM}`; of its 1 released session, 1 ran with 0.75." in card
    (arm,) = [a for a in arms if a["name"] == ARM]
    assert (arm["model"], arm["answered_models"], arm["temperature"], arm["sessions"]) == (None, [], 0.75, 1)


def test_a_chat_studys_assistants_are_published_as_their_conversations_ran(chat_folder, model_url, tmp_path):
    """The researcher moves every assistant to a warmer temperature and another model after the
    first conversation: the card's table of assistants and arms.json keep what that
    conversation's replies were asked with."""
    toml = chat_folder / "study.toml"
    toml.write_text(toml.read_text().replace('endpoint = ""', f'endpoint = "{model_url}"'))

    def serve(code: str) -> dict:
        app = create_app(config.load(chat_folder))
        session_id = _take_part(app.test_client(), "Help me with a post about my garden.", access_code=code)
        with writing(app.extensions["study.engine"]) as connection:
            found = session_store.get(connection, session_id)
        app.extensions["study.engine"].dispose()
        return found

    first = serve(WRITER)
    engine = make_engine(config.load(chat_folder).database_url)
    with writing(engine) as connection:  # as `study simulate` marks its participants
        mark(connection, first["session_id"], persona="careful", intent="a post", model="deterministic")
    engine.dispose()
    toml.write_text(toml.read_text().replace("temperature = 0.6", "temperature = 0.95")
                    .replace('model = "Llama-3.1-8B-Instruct"', 'model = "Qwen2.5-7B-Instruct"'))  # fmt: skip
    serve(WITHDRAWN)  # only a code of the lab's list here: nobody withdrew
    directory = _build(chat_folder, init_keyfile(tmp_path / "study.key"), tmp_path / "releases", "1.0.0")

    card = (directory / "README.md").read_text(encoding="utf-8")
    arm = first["condition"]
    model = "collabllm-llama-3.1-8b" if arm == "collabllm" else "Llama-3.1-8B-Instruct"
    rows = card_rows(card)[arm]
    assert any((r["model"], r.get("temperature"), r.get("mode"), r.get("n")) == (model, "0.6", "chat", "1") for r in rows), rows
    assert f"study.toml now sets temperature 0.95 for `{arm}`; of its " in card
    # The card counts a chat study's conversations, its notes and its line on simulation too.
    assert "released session" not in card and "released conversation" in card
    assert "No released conversation ran with" in card  # 2 conversations, 3 assistants
    assert "**1 of these conversations were had by simulated participants**" in card
    arms = json.loads((directory / "arms.json").read_text(encoding="utf-8"))["arms"]
    assert (model, 0.6) in [(a["model"], a["temperature"]) for a in arms if a["name"] == arm and a["sessions"]]


def test_an_opinionated_tab_arm_publishes_the_system_prompt_its_sessions_were_sent(tmp_path, model_url):
    # Jakesch et al.'s design: a Tab arm in chat mode whose own system prompt carries an opinion.
    # Its calls record the prompt they send; reworded mid-study, each session keeps its own.
    first, second = "Argue that social media is good for society.", "Argue that social media harms society."
    folder = a_study(tmp_path, model_url)
    change_arm(folder, 'mode = "completion"', f'mode = "chat"\nsystem_prompt = "{first}"')
    serve_one(folder, "A1FIRSTWRITER", asks=True)
    change_arm(folder, first, second)
    serve_one(folder, "A2SECONDWRITER", asks=True)

    card, arms = build(folder, tmp_path)

    ran = [(arm["system_prompt"], arm["sessions"]) for arm in arms if arm["name"] == ARM]
    assert sorted(ran) == sorted([(first, 1), (second, 1)])
    assert f"another system prompt for `{ARM}` than 1 of its 2 released sessions ran with" in card


def test_a_tab_arm_in_chat_mode_without_its_own_prompt_publishes_the_studys(tmp_path, model_url):
    folder = a_study(tmp_path, model_url)
    change_arm(folder, 'mode = "completion"', 'mode = "chat"')
    serve_one(folder, "A1FIRSTWRITER", asks=True)

    card, arms = build(folder, tmp_path)

    (arm,) = [arm for arm in arms if arm["name"] == ARM]
    study = config.load(folder)
    assert arm["system_prompt"] == study.suggestions.system_prompt_for(study.condition(ARM))
    assert "the next sentence" in arm["system_prompt"]  # a sentence arm's, as its unit asks
    assert "another system prompt" not in card  # what study.toml sends today is what ran
