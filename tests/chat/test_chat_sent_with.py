"""A chat study's export and release say the model and system prompt each conversation's
replies were sent with (study.paradigms.chat.sent_with), not study.toml's of the day: the
researcher edits every assistant's prompt and model between two conversations, as between a
pilot and the main round."""

from __future__ import annotations

import json

from click.testing import CliRunner
from jsonschema import Draft202012Validator

from study import config
from study.cli import main as study_cli
from study.cli import write_study_files
from study.release.cli import release
from study.release.keys import init_keyfile
from study.paths import schemas_dir
from study.server import create_app
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.conftest import CONTACT
from tests.chat.flow import choose_intent, prewrite, rate, say, start_chat
from tests.chat.test_chat_path import FINAL

EDITED = "Edited after the pilot: answer in one short paragraph."


def _serve(folder):
    """A `study serve` started afresh with study.toml as it is now."""
    app = create_app(config.load(folder))
    return app, app.test_client()


def _finished(client, code: str) -> str:
    """A whole conversation by lab participant `code`: 8 exchanges, the ratings, the survey."""
    session_id = start_chat(client, access_code=code)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    event = {"seq": 0, "eventName": "system-initialize", "eventSource": "api", "eventTimestamp": 1_700_000_000_000}
    assert client.post(f"/api/sessions/{session_id}/chat/events", json={"events": [event]}).status_code == 200
    for n in range(1, 9):
        if n in (4, 7):
            assert rate(client, session_id, n - 1).status_code == 200
        assert say(client, session_id, f"Point {n}, please.").status_code == 200
    finish = {"last_seq": 0, "pending": 0, "document": "Draft."}
    assert client.post(f"/s/{session_id}/chat/finish", json=finish).status_code == 200
    assert client.post(f"/s/{session_id}/survey", data=FINAL).location.endswith("/complete")
    return session_id


def _edit_every_assistant(folder) -> None:
    """A new model and system prompt for every condition, their names kept."""
    path = folder / "study.toml"
    text = path.read_text(encoding="utf-8").replace('system_prompt = ""\n', f'system_prompt = "{EDITED}"\n')
    for condition in config.load(folder).conditions:
        text = text.replace(f'model = "{condition.model}"', f'model = "{condition.model}-v2"')
        if condition.system_prompt:
            text = text.replace(condition.system_prompt, EDITED + " " + condition.system_prompt)
    path.write_text(text, encoding="utf-8")


def _a_study_edited_between_two_conversations(tmp_path, endpoint_factory):
    endpoint = endpoint_factory()
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat", replacements={'endpoint = ""': f'endpoint = "{endpoint.url}"', **CONTACT})
    before = config.load(folder)
    app, client = _serve(folder)
    first = _finished(client, "chatlab-writer-0001")
    app.extensions["study.engine"].dispose()
    _edit_every_assistant(folder)
    after = config.load(folder)
    app, client = _serve(folder)
    second = _finished(client, "chatlab-writer-0002")
    silent = start_chat(client, access_code="chatlab-writer-0003")  # reaches the chat, never asks
    choose_intent(client, silent)
    prewrite(client, silent)
    app.extensions["study.engine"].dispose()
    assert endpoint.calls == 16  # every reply was a real call to the endpoint
    return folder, before, after, (first, second, silent)


def test_each_conversation_exports_the_model_and_system_prompt_its_replies_were_sent_with(tmp_path, endpoint_factory):
    folder, before, after, (first, second, silent) = _a_study_edited_between_two_conversations(tmp_path, endpoint_factory)

    result = CliRunner().invoke(study_cli, ["export", str(folder), "--format", "chat", "--out", str(tmp_path / "out"), "--all"])

    assert result.exit_code == 0, result.output
    lines = (tmp_path / "out" / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
    assistants = {r["session_id"]: r["assistant"] for r in map(json.loads, lines)}
    for session_id, study in ((first, before), (second, after)):
        condition = study.condition(assistants[session_id]["condition"])
        assert assistants[session_id]["model"] == condition.model
        assert assistants[session_id]["system_prompt"] == condition.system_prompt
    # The first conversation's assistant is set otherwise today: the export does not say so of it.
    today = after.condition(assistants[first]["condition"])
    assert (assistants[first]["model"], assistants[first]["system_prompt"]) != (today.model, today.system_prompt)
    # No reply was ever sent for the third: nothing stored says, so not study.toml's either.
    assert (assistants[silent]["model"], assistants[silent]["system_prompt"]) == (None, None)
    schema = json.loads((schemas_dir() / "chat-conversation.schema.json").read_text(encoding="utf-8"))
    for line in lines:
        Draft202012Validator(schema).validate(json.loads(line))  # the schema says null: not recorded


def test_a_release_gives_each_conversation_and_arm_the_prompt_and_model_that_ran(tmp_path, endpoint_factory):
    folder, before, after, (first, second, _) = _a_study_edited_between_two_conversations(tmp_path, endpoint_factory)
    key = init_keyfile(tmp_path / "keys" / "study.key")

    result = CliRunner().invoke(release, ["build", str(folder), "--version", "1.0.0", "--out",
                                          str(tmp_path / "releases"), "--key", str(key.path), "-j", "1"])  # fmt: skip

    assert result.exit_code == 0, result.output
    directory = tmp_path / "releases" / "collabllm-1.0.0"
    lines = (directory / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
    sent = {(r["assistant"]["condition"], r["assistant"]["model"], r["assistant"]["system_prompt"])
            for r in map(json.loads, lines)}  # fmt: skip
    assert len(lines) == 2  # the silent writer never finished
    engine = make_engine(before.database_url)
    with reading(engine) as connection:
        names = [session_store.get(connection, session_id)["condition"] for session_id in (first, second)]
    engine.dispose()
    ran = [(name, study.condition(name).model, study.condition(name).system_prompt)
           for name, study in zip(names, (before, after))]  # fmt: skip
    assert sent == set(ran)
    arms = json.loads((directory / "arms.json").read_text(encoding="utf-8"))["arms"]
    for name, model, prompt in ran:
        assert any((a["name"], a["model"], a["system_prompt"], a["sessions"]) == (name, model, prompt, 1)
                   for a in arms), (name, arms)  # fmt: skip
    card = (directory / "README.md").read_text(encoding="utf-8")
    first_arm = ran[0][0]
    assert f"study.toml now sets another system prompt for `{first_arm}` than 1 of its " in card, card
    assert CliRunner().invoke(release, ["verify", str(directory), "--key", str(key.path)]).exit_code == 0


def test_a_chat_arms_conversations_beside_the_logs_say_what_their_replies_were_sent_with(tmp_path, endpoint_factory):
    """A writing study's chat arm (RealHumanEval's design): its model and prompt edited between
    two writers, `study export`'s chat-arm-conversations.jsonl gives each writer's own."""
    from tests.chat.flow import chat_arm_study
    from tests.conftest import COAUTHOR
    from tests.release.conftest import SMALLEST
    from tests.release.test_build_study import take_part
    from tests.server.flow import start, to_writing

    events = [json.loads(line) for line in (COAUTHOR / "sessions" / f"{SMALLEST}.jsonl").read_text().splitlines()]

    endpoint = endpoint_factory()
    folder = tmp_path / "study"
    chat_arm_study(folder, endpoint.url)
    asked = {}
    for code, edit in (("lab-chat-0001", False), ("lab-chat-0002", True), ("lab-chat-0003", False)):
        if edit:
            path = folder / "study.toml"
            path.write_text(path.read_text().replace('model = "davinci-002"', 'model = "gpt-4o-mini"')
                            .replace("You are a helpful writing assistant.", EDITED))  # fmt: skip
        app, client = _serve(folder)
        asked[code] = start(client, access_code=code)
        to_writing(client, asked[code], prompt="obama")
        if code != "lab-chat-0003":  # the third writer never asks the panel
            answer = client.post(f"/api/sessions/{asked[code]}/assistant/messages",
                                 json={"client_id": f"c-{code}", "content": "An opening line, please."})  # fmt: skip
            assert answer.status_code == 200, answer.json
        take_part(client, asked[code], events)
        app.extensions["study.engine"].dispose()
    assert endpoint.calls == 2

    result = CliRunner().invoke(study_cli, ["export", str(folder), "--out", str(tmp_path / "out"), "--all"])

    assert result.exit_code == 0, result.output
    lines = (tmp_path / "out" / "chat-arm-conversations.jsonl").read_text(encoding="utf-8").splitlines()
    sent = {r["session_id"]: (r["model"], r["system_prompt"]) for r in map(json.loads, lines)}
    assert sent[asked["lab-chat-0001"]] == ("davinci-002", "You are a helpful writing assistant.")
    assert sent[asked["lab-chat-0002"]] == ("gpt-4o-mini", EDITED)
    assert sent[asked["lab-chat-0003"]] == (None, None)
