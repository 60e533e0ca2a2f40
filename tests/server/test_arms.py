"""Paradigms as arms of one study (issue 27 item 2), through the Flask test client: a chat
arm's panel API serves only a chat arm's writing session and asks the model once per message;
`[design] assignment = "within"` walks each participant through every arm in a Latin-square
order; a study.toml mixing them wrongly is refused with the fix."""

from __future__ import annotations

import itertools
import json

import pytest

from study import config
from study.cli import write_study_files
from study.server import create_app
from study.server.within import latin_square
from tests.conftest import CONTACT
from tests.server.flow import finish, start, to_writing


def _design(tmp_path, name, endpoint=""):
    folder = tmp_path / name
    write_study_files(folder, design=name, replacements={"min_seconds = 600": "min_seconds = 0",
                                                         'endpoint = ""': f'endpoint = "{endpoint}"', **CONTACT})  # fmt: skip
    return config.load(folder)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6, 7])
def test_the_square_balances_positions_and_which_arm_follows_which(k):
    # Williams' design: k rows for an even k, 2k for an odd k (each row and its mirror image).
    square = latin_square(k)
    assert len(square) == (k if k % 2 == 0 else 2 * k)
    assert all(sorted(row) == list(range(k)) for row in square)
    each = len(square) // k
    assert all(sorted(column) == sorted(list(range(k)) * each) for column in zip(*square))
    # First-order carry-over: every arm directly after every other arm equally often.
    pairs = [(row[i], row[i + 1]) for row in square for i in range(k - 1)]
    assert sorted(pairs) == sorted(list(itertools.permutations(range(k), 2)) * each)


def test_the_chat_arm_answers_its_own_writing_session_only(tmp_path, endpoint_factory):
    endpoint = endpoint_factory()
    study = _design(tmp_path, "realhumaneval", endpoint.url)
    client = create_app(study).test_client()
    sessions = {}
    for code in ("a", "b", "c"):  # the three arms, in study.toml order
        session_id = start(client, access_code=code)
        to_writing(client, session_id)
        sessions[code] = session_id
    control, chat = sessions["a"], sessions["c"]
    page = client.get(f"/s/{chat}/writing").get_data(as_text=True)
    boot = json.loads(page.split('<script id="boot" type="application/json">')[1].split("</script>")[0])
    assert "suggestionsUrl" not in boot and boot["chat"]["url"].endswith(f"/api/sessions/{chat}/assistant/messages")

    refused = client.post(f"/api/sessions/{control}/assistant/messages", json={"client_id": "m-0000001", "content": "Hi"})
    assert refused.status_code == 409 and "no chat assistant" in refused.json["error"]
    assert endpoint.calls == 0
    sent = client.post(f"/api/sessions/{chat}/assistant/messages", json={"client_id": "m-0000001", "content": "Hi"})
    assert sent.status_code == 200, sent.json
    again = client.post(f"/api/sessions/{chat}/assistant/messages", json={"client_id": "m-0000001", "content": "Hi"})
    assert again.json["assistant"] == sent.json["assistant"] and endpoint.calls == 1  # a resend is not re-asked
    history = client.get(f"/api/sessions/{chat}/assistant/messages").json
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
    # The Tab API refuses the chat arm too: its writer has no suggestion list.
    assert client.post(f"/api/sessions/{chat}/suggestions", json={"doc": "Prompt."}).status_code == 409


def test_within_subjects_each_participant_takes_every_arm_once_then_is_told_they_are_done(tmp_path):
    study = _design(tmp_path, "dhillon")
    client = create_app(study, suggestion_engine=object()).test_client()
    taken = {}
    for code in ("p1", "p2", "p3", "p4"):
        taken[code] = []
        for part in range(3):
            session_id = start(client, access_code=code, **({"another": "1"} if part else {}))
            to_writing(client, session_id, prompt=None)  # a prompt of their own for each arm
            taken[code].append(session_id)
            finish(client, session_id)
        done = client.get(f"/task?access_code={code}&another=1")
        assert "You have written in every part of this study." in done.get_data(as_text=True)
    from study.store import make_engine, reading
    from study.store import sessions as session_store

    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        condition = {s["session_id"]: s["condition"] for s in session_store.all_sessions(connection)}
    engine.dispose()
    orders = [[condition[s] for s in taken[code]] for code in ("p1", "p2", "p3", "p4")]
    assert orders == [
        ["no-ai", "next-sentence", "next-paragraph"],
        ["next-sentence", "next-paragraph", "no-ai"],
        ["next-paragraph", "no-ai", "next-sentence"],
        # The fourth takes row 3 of Williams' design for three arms, row 0 reversed, rather than
        # row 0 again: after every three arms' rows, their mirror images, so every arm directly
        # follows every other arm equally often.
        ["next-paragraph", "next-sentence", "no-ai"],
    ]


def test_a_chat_arm_in_a_chat_study_is_refused_with_the_fix(tmp_path):
    folder = tmp_path / "chat"
    write_study_files(folder, paradigm="chat", replacements=CONTACT)
    toml = folder / "study.toml"
    text = toml.read_text()
    toml.write_text(text.replace("[[conditions]]\n", '[[conditions]]\nparadigm = "chat"\n', 1))
    with pytest.raises(config.ConfigError) as error:
        config.load(folder)
    assert 'paradigm = "chat" makes a chat arm of a writing study' in str(error.value)
    assert "Fix: remove the paradigm key" in str(error.value)


def test_jakesch_arms_differ_only_by_the_side_their_assistant_argues(tmp_path, model_url):
    study = _design(tmp_path, "jakesch", model_url)
    good, bad = study.condition("good-for-society"), study.condition("bad-for-society")
    assert {k: v for k, v in vars(good).items() if k not in ("name", "system_prompt")} == \
        {k: v for k, v in vars(bad).items() if k not in ("name", "system_prompt")}
    client = create_app(study).test_client()
    asked = {}
    for code in ("control", "good", "bad"):  # the arms in study.toml order
        session_id = start(client, access_code=code)
        to_writing(client, session_id, prompt="social-media")
        if code != "control":
            answer = client.post(f"/api/sessions/{session_id}/suggestions", json={"doc": "In my opinion,"})
            assert answer.status_code == 200, answer.json
            asked[code] = answer.json["suggestions"]
    # The same text, the same decoding: only each arm's own system prompt can tell them apart.
    assert asked["good"] != asked["bad"]


def test_within_subjects_the_last_part_s_completion_page_offers_no_further_session(tmp_path):
    # After the last arm there is nothing left to write: a "Write another session" link would
    # walk the participant through consent and instructions to "You have written in every part"
    # and leave an unfinished session behind (counted among the plan's exclusions).
    study = _design(tmp_path, "dhillon")
    client = create_app(study, suggestion_engine=object()).test_client()
    for part in range(3):
        session_id = start(client, access_code="p1", **({"another": "1"} if part else {}))
        to_writing(client, session_id, prompt=None)  # a prompt of their own for each arm
        finish(client, session_id)
    page = client.get(f"/s/{session_id}/complete").get_data(as_text=True)
    assert "another=1" not in page and "Write another session" not in page
    assert "You have written every part of this study." in page
