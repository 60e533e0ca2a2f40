"""A chat study's assistant closed to new participants (`assign = false`) mid-study: new
sessions are balanced over the open assistants, a session given it before goes on, and with
every assistant closed a newcomer is told the study takes no new writers."""

from __future__ import annotations

from collections import Counter

from study import config
from study.server import create_app
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.chat.flow import start_chat
from tests.server.study_edits import edit_arms


def _close(folder, *names) -> None:
    edit_arms(folder, lambda arms: [{**c, "assign": False} if c["name"] in names else c for c in arms])


def _client(folder):
    return create_app(config.load(folder)).test_client()  # no model is asked in these steps


def _conditions(folder) -> dict[str, str]:
    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        given = {s["session_id"]: s["condition"] for s in session_store.all_sessions(connection)}
    engine.dispose()
    return given


def test_a_closed_assistant_is_given_to_no_new_session(chat_folder):
    client = _client(chat_folder)
    early = start_chat(client, access_code="early")
    client.get(f"/s/{early}/intent")
    closed = _conditions(chat_folder)[early]  # the assistant is drawn at random among the least used
    others = sorted({"base", "proactive-base", "collabllm"} - {closed})

    _close(chat_folder, closed)
    client = _client(chat_folder)
    later = []
    for n in range(4):
        later.append(start_chat(client, access_code=f"p{n}"))
        assert client.get(f"/s/{later[-1]}/intent").status_code == 200
    given = _conditions(chat_folder)
    # Balanced over the two open assistants: the closed one, least used, would take the next turn.
    assert Counter(given[s] for s in later) == {others[0]: 2, others[1]: 2}
    assert client.get(f"/s/{early}/intent").status_code == 200 and _conditions(chat_folder)[early] == closed

    _close(chat_folder, "base", "proactive-base", "collabllm")
    client = _client(chat_folder)
    newcomer = start_chat(client, access_code="new")
    refused = client.get(f"/s/{newcomer}/intent")
    assert refused.status_code == 403
    assert "This study is not taking new writers at the moment." in refused.get_data(as_text=True)
    assert _conditions(chat_folder)[newcomer] is None
