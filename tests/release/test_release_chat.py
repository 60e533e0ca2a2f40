"""A chat study's conversations are released as its writing sessions would be: confirmed
participants only, withdrawn writers left out, keyed ids, redacted messages and documents (the
document pane's log too, where an address is typed one key at a time), counted in the curator's
report, byte-identical builds, and a `study release verify` that checks conversations.jsonl."""

from __future__ import annotations

import csv
import json
import shutil

from click.testing import CliRunner

from study.curation.replay import apply_delta
from study.release.checksums import sha256_file, write_sums
from study.release.cli import release
from study.release.keys import init_keyfile
from study.release.pseudonyms import ReidentificationTable, is_pseudonym
from study.release.withdraw import record_withdrawal
from tests.chat.conftest import chat_app, chat_client, chat_folder, chat_study  # noqa: F401 - fixtures
from tests.chat.flow import CONFIRMED, choose_intent, prewrite, rate, say
from tests.chat.test_chat_path import FINAL
from tests.release.conftest import EMAIL, PHONE

WRITER = "chatlab-writer-0001"  # a lab access code: the participant's id in a lab study
WITHDRAWN = "chatlab-writer-0002"
SECRET = "Withdrawn writer's plan for the harbour festival"
UNCONFIRMED = "A2CHATNOTSYNCED9"  # an MTurk worker whose assignment no sync confirmed
TYPED = f"Mail me: {EMAIL}"  # typed into the document pane one key at a time


def _start(client, **query) -> str:
    session_id = client.get("/task", query_string=query).location.split("/")[2]
    assert client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    assert client.post(f"/s/{session_id}/instructions", data=CONFIRMED).location.endswith("/intent")
    return session_id


def _take_part(client, first_message: str, **query) -> str:
    """A whole conversation: intent, notes, the document typed key by key, 8 exchanges with the
    ratings owed, the finish and the final survey."""
    session_id = _start(client, **query)
    choose_intent(client, session_id)
    prewrite(client, session_id)
    events = [{"seq": 0, "eventName": "system-initialize", "eventSource": "api", "eventTimestamp": 1_700_000_000_000}]
    for n, char in enumerate(TYPED):
        events.append({"seq": n + 1, "eventName": "text-insert", "eventSource": "user",
                       "eventTimestamp": 1_700_000_001_000 + n,
                       "textDelta": {"ops": ([{"retain": n}] if n else []) + [{"insert": char}]}})  # fmt: skip
    assert client.post(f"/api/sessions/{session_id}/chat/events", json={"events": events}).status_code == 200
    for n in range(1, 9):
        if n in (4, 7):
            assert rate(client, session_id, n - 1).status_code == 200
        assert say(client, session_id, first_message if n == 1 else f"Point {n}, please.").status_code == 200
    finish = {"last_seq": len(events) - 1, "pending": 0, "document": TYPED}
    assert client.post(f"/s/{session_id}/chat/finish", json=finish).status_code == 200
    assert client.post(f"/s/{session_id}/survey", data=FINAL).location.endswith("/complete")
    return session_id


def _build(folder, key, out, version: str):
    args = ["build", str(folder), "--version", version, "--out", str(out), "--key", str(key.path), "-j", "1"]
    result = CliRunner().invoke(release, args)
    assert result.exit_code == 0, result.output
    return out / f"collabllm-{version}"


def _records(directory) -> list[dict]:
    return [json.loads(line) for line in (directory / "conversations.jsonl").read_text(encoding="utf-8").splitlines()]


def _files(directory) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_a_chat_study_is_released_redacted_keyed_and_without_withdrawn_or_unconfirmed_writers(
    chat_client, chat_app, chat_folder, tmp_path
):
    kept = _take_part(chat_client, f"Write to {EMAIL} or call {PHONE}; I am {WRITER}.", access_code=WRITER)
    gone = _take_part(chat_client, SECRET, access_code=WITHDRAWN)
    unconfirmed = _take_part(chat_client, "Nobody confirmed me.", workerId=UNCONFIRMED, assignmentId="3NOSYNC",
                             hitId="3HIT1", turkSubmitTo="https://workersandbox.mturk.com")  # fmt: skip
    chat_app.extensions["study.engine"].dispose()
    key = init_keyfile(tmp_path / "keys" / "study.key")
    out = tmp_path / "releases"

    first = _build(chat_folder, key, out, "1.0.0")
    table = ReidentificationTable(key)
    studied = {table.lookup_session(r["session_id"])[0][1] for r in _records(first)}
    assert studied == {kept, gone}  # the unconfirmed session is not released
    assert unconfirmed not in studied

    record_withdrawal(key, WITHDRAWN, today="2026-01-02")
    second = _build(chat_folder, key, out, "1.0.1")  # a patch: the only change is a withdrawal
    (record,) = _records(second)
    assert table.lookup_session(record["session_id"]) == [("collabllm", kept)]
    assert record["format"] == "study-chat-1" and is_pseudonym(record["worker_id"])
    assert len(record["messages"]) == 16 and record["surveys"]["final"]["end_reason_other"] == "I ran out of time"

    # The e-mail and phone typed in a message are masked, and so is the address typed key by key
    # into the document pane: in the final document and at every state of its log.
    assert EMAIL not in record["messages"][0]["content"] and PHONE not in record["messages"][0]["content"]
    assert record["messages"][0]["content"].startswith("Write to <EMAIL_____________> or call <PHONE_______>;")
    assert record["document"] == "Mail me: <EMAIL_____________>"
    text = ""
    for event in record["events"]:
        if isinstance(event.get("textDelta"), dict):
            text = apply_delta(text, event["textDelta"]["ops"])
    assert text == record["document"]

    # The curator's report counts them, with the original, beside the key; the card counts them.
    with open(key.companion(".redactions") / "collabllm-1.0.1.csv", newline="", encoding="utf-8") as handle:
        report = list(csv.DictReader(handle))
    found = {(r["where"], r["entity"], r["original"]) for r in report}
    assert ("conversation messages[0].content", "EMAIL_ADDRESS", EMAIL) in found
    assert ("conversation messages[0].content", "PHONE_NUMBER", PHONE) in found
    assert ("conversation document", "EMAIL_ADDRESS", EMAIL) in found
    assert any(w.startswith("conversation document pane, text at event") and o == EMAIL for w, _, o in found)
    card = (second / "README.md").read_text(encoding="utf-8")
    assert "in conversations" in card and "**1 conversations** by **1 participants** (16 messages)" in card
    assert "`conversations.jsonl`: 1 conversations" in card
    assert "sessions affected" not in card and "conversations affected):" in card
    assert "**Withdrawals.** Conversations of participants who withdrew are left out (1 in this release)." in card

    # No raw id, no withdrawn or unconfirmed writer's words, in any released byte.
    for name, data in _files(second).items():
        lowered = data.lower()
        for secret in (WRITER, WITHDRAWN, UNCONFIRMED, "3NOSYNC", kept, gone, unconfirmed, SECRET, EMAIL, "555-2671"):
            assert secret.lower().encode() not in lowered, (name, secret)
    package = json.loads((second / "datapackage.json").read_text(encoding="utf-8"))
    assert "conversations.jsonl" in {r["path"] for r in package["resources"]}
    # The changelog and the diff count a chat study's conversations, as its card does.
    changelog = (second / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "- 1 conversation whose participant withdrew from the study." in changelog
    assert "Personal data redacted before release (" in changelog and "in 1 conversation." in changelog
    diff = CliRunner().invoke(release, ["diff", str(first), str(second)])
    assert "added 0 conversations\nremoved 1 conversation:\n" in diff.output, diff.output
    assert "session" not in diff.output

    # The same source, key and version: the same bytes.
    again = tmp_path / "again"
    again.mkdir()
    shutil.copytree(first, again / first.name)
    assert _files(_build(chat_folder, key, again, "1.0.1")) == _files(second)
    assert (again / "collabllm-1.0.1.tar.gz").read_bytes() == (out / "collabllm-1.0.1.tar.gz").read_bytes()


def test_verify_checks_the_conversations_file(chat_client, chat_app, chat_folder, tmp_path):
    _take_part(chat_client, f"Write to {EMAIL} or call {PHONE}, please.", access_code=WRITER)
    chat_app.extensions["study.engine"].dispose()
    key = init_keyfile(tmp_path / "keys" / "study.key")
    directory = _build(chat_folder, key, tmp_path / "releases", "1.0.0")
    assert CliRunner().invoke(release, ["verify", str(directory), "--key", str(key.path)]).exit_code == 0

    # A mask put back to the phone number it hid (no byte pattern knows phone numbers), and the
    # checksums made again to match: datapackage.json's hash and the leak scan still find it.
    path = directory / "conversations.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace("<PHONE_______>", PHONE, 1), encoding="utf-8")
    write_sums(directory)
    result = CliRunner().invoke(release, ["verify", str(directory), "--key", str(key.path)])
    assert result.exit_code != 0
    assert "conversations.jsonl line 1 messages[0].content: PHONE_NUMBER" in result.output, result.output
    assert "FAIL schemas" in result.output and "FAIL leak scan" in result.output

    # A line that breaks the schema, with every checksum made to match: named with its field.
    path.write_text(path.read_text(encoding="utf-8").replace(PHONE, "<PHONE_______>", 1)
                    .replace('"role": "user"', '"role": "writer"', 1), encoding="utf-8")  # fmt: skip
    package = json.loads((directory / "datapackage.json").read_text(encoding="utf-8"))
    (resource,) = [r for r in package["resources"] if r["path"] == "conversations.jsonl"]
    resource.update(bytes=path.stat().st_size, hash="sha256:" + sha256_file(path))
    (directory / "datapackage.json").write_text(json.dumps(package, indent=2), encoding="utf-8")
    write_sums(directory)
    result = CliRunner().invoke(release, ["verify", str(directory), "--key", str(key.path)])
    assert result.exit_code != 0 and "FAIL schemas" in result.output and "FAIL leak scan" not in result.output
    assert "conversations.jsonl line 1: messages[0].role: 'writer' is not one of" in result.output, result.output


def test_a_chat_arms_conversations_are_released_beside_its_logs(model_url, tmp_path):
    """A writing study with a chat arm (RealHumanEval's design): the chat arm's conversation is
    in conversations.jsonl under its log's released id, redacted; the control arm has none."""
    from study import config
    from study.cli import write_study_files
    from study.server import create_app
    from tests.conftest import COAUTHOR, CONTACT
    from tests.release.conftest import SMALLEST
    from tests.release.test_build_study import take_part
    from tests.server.flow import start, to_writing

    folder = tmp_path / "study"
    write_study_files(folder, design="realhumaneval", replacements={
        "min_seconds = 600": "min_seconds = 0", 'endpoint = ""': f'endpoint = "{model_url}"', **CONTACT,
    })  # fmt: skip
    app = create_app(config.load(folder))
    client = app.test_client()
    events = [json.loads(line) for line in (COAUTHOR / "sessions" / f"{SMALLEST}.jsonl").read_text().splitlines()]
    arms = {}
    for code in ("lab-control-0001", "lab-ghost-0002", "lab-chat-0003"):  # the arms, in study.toml order
        arms[code] = start(client, access_code=code)
        to_writing(client, arms[code], prompt="obama")
    asked = client.post(f"/api/sessions/{arms['lab-chat-0003']}/assistant/messages",
                        json={"client_id": "c1-opening", "content": f"Is {EMAIL} a good sign-off? I am lab-chat-0003."})
    assert asked.status_code == 200, asked.json
    for code in ("lab-control-0001", "lab-chat-0003"):
        take_part(client, arms[code], events)
    from study.store import writing
    from study.store.simulated import mark

    with writing(app.extensions["study.engine"]) as connection:  # as `study simulate` marks its writers
        mark(connection, arms["lab-chat-0003"], persona="careful", intent="a story", model="deterministic")
    app.extensions["study.engine"].dispose()
    key = init_keyfile(tmp_path / "keys" / "study.key")

    result = CliRunner().invoke(release, ["build", str(folder), "--version", "1.0.0", "--out",
                                          str(tmp_path / "releases"), "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    directory = tmp_path / "releases" / "realhumaneval-1.0.0"
    rows = {r["paradigm"]: r for r in csv.DictReader((directory / "metadata.csv").open(encoding="utf-8"))}
    (record,) = _records(directory)
    assert record["format"] == "study-chat-arm-1" and record["condition"] == rows["chat"]["condition"]
    assert record["session_id"] == rows["chat"]["session_id"] and record["worker_id"] == rows["chat"]["worker_id"]
    assert (directory / "sessions" / f"{record['session_id']}.jsonl").is_file()
    assert [m["role"] for m in record["messages"]] == ["user", "assistant"]
    # A simulated writer's conversation says so, as its metadata.csv row does.
    assert rows["chat"]["simulated"] == "true" and record["simulated"] is True
    assert record["messages"][0]["content"] == "Is <EMAIL_____________> a good sign-off? I am <WORKER_____>."
    for name, data in _files(directory).items():
        for secret in (EMAIL, "lab-chat-0003", "lab-control-0001", arms["lab-chat-0003"]):
            assert secret.encode() not in data, (name, secret)
    card = (directory / "README.md").read_text(encoding="utf-8")
    assert "The conversations are in `conversations.jsonl`" in card and "`conversations.jsonl`: 1 conversations" in card
    # The chat arm as it ran: one reply of up to arm.MAX_TOKENS, not the Tab list of its
    # condition's defaults (n 5, 30 tokens); the preregistration keeps the configured values.
    from study.paradigms.chat.arm import MAX_TOKENS

    ran = {a["name"]: a for a in json.loads((directory / "arms.json").read_text(encoding="utf-8"))["arms"]}
    chat_arm = ran[rows["chat"]["condition"]]
    assert (chat_arm["paradigm"], chat_arm["mode"], chat_arm["n"], chat_arm["max_tokens"]) == ("chat", "chat", 1, MAX_TOKENS)
    assert ran["autocomplete"]["max_tokens"] == 30 and ran["autocomplete"]["paradigm"] == "L1"  # its own
    # The card's row: the model its call asked for, the one that answered, one reply of MAX_TOKENS.
    assert (f"| {chat_arm['name']} | chat | creative | {chat_arm['model']} | deterministic | chat | 1 | "
            f"{MAX_TOKENS} |") in card  # fmt: skip
    # Its editor log agrees: no Tab list, so none of the Tab settings (its writer's page sent the
    # CoAuthor session's currentN 5), in every record; CoAuthor's format allows them empty.
    from study.curation.formats import CONTROL_KEYS

    log = [json.loads(line) for line in (directory / "sessions" / f"{record['session_id']}.jsonl").read_text().splitlines()]
    assert {(key, r[key]) for r in log for key in CONTROL_KEYS} == {(key, "") for key in CONTROL_KEYS}
    assert CliRunner().invoke(release, ["verify", str(directory), "--key", str(key.path)]).exit_code == 0


def test_a_chat_studys_card_and_arms_describe_the_chat_it_ran_not_a_writing_study(
    chat_client, chat_app, chat_folder, tmp_path
):
    """A dataset user of a chat study reads what its participants did (the exchanges asked for,
    the assistants' one reply of [chat] max_tokens), not the writing path's minimum writing
    time, prompts, Tab list, recomputed log columns or keystroke logs."""
    from study import config

    _take_part(chat_client, "Help me with a post about my garden.", access_code=WRITER)
    chat_app.extensions["study.engine"].dispose()
    key = init_keyfile(tmp_path / "keys" / "study.key")
    args = ["build", str(chat_folder), "--version", "1.0.0", "--out", str(tmp_path / "releases"),
            "--key", str(key.path), "-j", "1"]  # fmt: skip
    result = CliRunner().invoke(release, args)
    assert result.exit_code == 0, result.output
    assert "(1 conversations by 1 writers, 16 messages)" in result.output, result.output
    directory = tmp_path / "releases" / "collabllm-1.0.0"
    settings = config.load(chat_folder).chat

    card = (directory / "README.md").read_text(encoding="utf-8")
    assert f"A participant could finish the chat after {settings.min_exchanges} exchanges" in card
    for writing_only in ("minimum writing time", "each prompt up to", "Recomputed columns",
                         "choose and edit suggestions", "the suggestion lists", "keystroke-logs",
                         "`metadata.csv` names each session's"):  # fmt: skip
        assert writing_only not in card, writing_only
    assert "every assistant (condition) of the study" in card and "how assistants (the conditions) differ" in card
    package = json.loads((directory / "datapackage.json").read_text(encoding="utf-8"))
    assert "keystroke-logs" not in package["keywords"] and "conversations" in package["keywords"]

    arms = json.loads((directory / "arms.json").read_text(encoding="utf-8"))["arms"]
    assert arms and all((a["paradigm"], a["mode"], a["n"], a["max_tokens"]) == ("chat", "chat", 1, settings.max_tokens)
                        for a in arms), arms  # fmt: skip


def test_a_chat_study_without_a_confirmed_conversation_says_so(chat_client, chat_app, chat_folder, tmp_path):
    key = init_keyfile(tmp_path / "keys" / "study.key")
    args = ["build", str(chat_folder), "--version", "1.0.0", "--out", str(tmp_path / "releases"),
            "--key", str(key.path), "-j", "1"]  # fmt: skip
    from study.cli import write_study_files

    never_served = tmp_path / "never-served"  # as `study init --paradigm chat` leaves it
    write_study_files(never_served, paradigm="chat")
    result = CliRunner().invoke(release, [args[0], str(never_served), *args[2:]])
    assert result.exit_code == 1 and "has not been served yet: no database at" in result.output, result.output
    assert not (never_served / "study.db").exists()  # a mistyped folder gains no database

    _take_part(chat_client, "Nobody confirmed me.", workerId=UNCONFIRMED, assignmentId="3NOSYNC",
               hitId="3HIT1", turkSubmitTo="https://workersandbox.mturk.com")  # fmt: skip
    chat_app.extensions["study.engine"].dispose()
    result = CliRunner().invoke(release, args)
    assert result.exit_code == 1 and not (tmp_path / "releases" / "collabllm-1.0.0").exists()
    assert "no conversations to release" in result.output, result.output
    assert "1 finished conversation(s) are not confirmed yet" in result.output
    assert "study mturk sync" in result.output and "access_codes_file" in result.output
