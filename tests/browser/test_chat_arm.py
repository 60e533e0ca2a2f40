"""A chat arm's panel when a reply does not come (study/paradigms/chat/static/editor-chat.js): the
model endpoint fails, or the page is reloaded while the message waits, or another tab's message
waits first, or the message never reaches the server. Each time the message stays in the panel
with "Try again", which gets its reply, and the participant's text is never dropped.

The task server runs in a thread; the model is a real OpenAI-compatible endpoint over HTTP
(tests/server/counting_endpoint.py) that the test makes fail or hold its answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from study.cli import write_study_files
from study.paradigms.chat import store as chat_store
from study.store import make_engine, reading
from tests.browser.conftest import CONTACT, MIN_SECONDS
from tests.browser.participant import start_writing
from tests.browser.routed import Routed
from tests.browser.screen_reader import live_text, wait_said

pytestmark = pytest.mark.browser

CALM = "not available right now"


def chat_arm_study(folder: Path) -> Path:
    """RealHumanEval's design with its chat arm only: every writer has the panel."""
    write_study_files(folder, design="realhumaneval",
                      replacements={"min_seconds = 600": f"min_seconds = {MIN_SECONDS}", **CONTACT})  # fmt: skip
    toml = folder / "study.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text[: text.index("[[conditions]]")] + text[text.index('[[conditions]]\nname = "chat"') :], encoding="utf-8")
    return folder


@pytest.fixture
def study_dir(tmp_path: Path) -> Path:
    return chat_arm_study(tmp_path / "study")


@pytest.fixture
def endpoint(model) -> str:
    return model.url


def _ask(page, text: str) -> None:
    page.get_by_test_id("chat-input").fill(text)
    page.get_by_test_id("chat-send").click()


def _messages(page, role: str):
    return page.locator(f'#chat-messages li[data-role="{role}"]')


def _stored(task_server, session_id: str) -> list[tuple[str, str]]:
    engine = make_engine(task_server.study.database_url)
    with reading(engine) as connection:
        stored = [(m["role"], m["content"]) for m in chat_store.messages(connection, session_id)]
    engine.dispose()
    return stored


def _offered_again(page, text: str) -> None:
    """The message is in the panel, marked as waiting, with Try again and Send held back."""
    waiting = _messages(page, "user").last
    expect(waiting).to_have_text(text)
    expect(waiting).to_have_attribute("data-state", "unanswered")
    expect(page.get_by_test_id("chat-retry")).to_be_visible()
    expect(page.get_by_test_id("chat-send")).to_be_disabled()  # the waiting message goes first


def test_a_failed_reply_keeps_the_message_and_try_again_gets_the_reply(page, task_server, model):
    session_id = start_writing(page, task_server.url)
    model.fail_next()
    _ask(page, "Give me an opening line.")
    error = page.get_by_test_id("chat-error")
    expect(error).to_contain_text(CALM)
    assert "HTTP" not in error.inner_text() and "127.0.0.1" not in error.inner_text()
    _offered_again(page, "Give me an opening line.")
    expect(_messages(page, "assistant")).to_have_count(0)

    page.get_by_test_id("chat-retry").click()
    expect(_messages(page, "assistant")).to_have_count(1)
    expect(page.get_by_test_id("chat-error")).to_be_hidden()
    expect(page.get_by_test_id("chat-retry")).to_be_hidden()
    expect(_messages(page, "user").last).not_to_have_attribute("data-state", "unanswered")

    # The panel goes on as before the failure.
    _ask(page, "And a closing line?")
    expect(_messages(page, "assistant")).to_have_count(2)
    assert model.calls == 3
    assert [role for role, _ in _stored(task_server, session_id)] == ["user", "assistant"] * 2


@pytest.mark.parametrize("how", ["failed", "still-asking"])
def test_after_a_reload_the_message_without_a_reply_is_offered_again(page, task_server, model, how):
    session_id = start_writing(page, task_server.url)
    _ask(page, "Warm up?")
    expect(_messages(page, "assistant")).to_have_count(1)
    if how == "failed":
        model.fail_next()
        _ask(page, "Give me an opening line.")
        expect(page.get_by_test_id("chat-error")).to_contain_text(CALM)
    else:  # reloaded while the model is still being asked
        model.hold()
        _ask(page, "Give me an opening line.")
        expect(_messages(page, "user").last).to_have_attribute("data-state", "sending")
        for _ in range(100):  # until the server has stored it and asks the model
            if model.calls == 2:
                break
            page.wait_for_timeout(50)
        assert model.calls == 2

    page.reload()
    expect(page.get_by_test_id("editor")).to_be_editable()
    expect(_messages(page, "assistant")).to_have_count(1)
    _offered_again(page, "Give me an opening line.")
    expect(page.get_by_test_id("chat-error")).to_contain_text("no reply yet")
    if how == "still-asking":
        model.release()  # the first request's reply comes and is stored; the page does not know

    page.get_by_test_id("chat-retry").click()
    expect(_messages(page, "assistant")).to_have_count(2)
    expect(page.get_by_test_id("chat-retry")).to_be_hidden()
    expect(page.get_by_test_id("chat-send")).to_be_enabled()
    # One reply, whichever request stored it.
    assert [role for role, _ in _stored(task_server, session_id)] == ["user", "assistant"] * 2


def test_a_message_refused_while_another_waits_goes_back_to_the_box_and_the_waiting_one_is_offered(page, task_server, model):
    session_id = start_writing(page, task_server.url)
    # Another tab of the same session sent a message whose reply failed.
    model.fail_next()
    other_tab = page.request.post(f"{task_server.url}/api/sessions/{session_id}/assistant/messages",
                                  data={"client_id": "m-other-tab", "content": "From the other tab."})  # fmt: skip
    assert other_tab.status == 502

    _ask(page, "My own question.")
    _offered_again(page, "From the other tab.")
    expect(page.get_by_test_id("chat-input")).to_have_value("My own question.")  # not lost
    expect(_messages(page, "user")).to_have_count(1)

    page.get_by_test_id("chat-retry").click()
    expect(_messages(page, "assistant")).to_have_count(1)
    expect(page.get_by_test_id("chat-send")).to_be_enabled()
    page.get_by_test_id("chat-send").click()
    expect(_messages(page, "assistant")).to_have_count(2)
    stored = _stored(task_server, session_id)
    assert [text for role, text in stored if role == "user"] == ["From the other tab.", "My own question."]


def test_a_message_that_never_reached_the_server_survives_a_reload(page, task_server, model):
    messages = Routed(page, "**/assistant/messages")
    session_id = start_writing(page, task_server.url)
    cut = {"left": 1}

    def cut_once(route):
        if route.request.method == "POST" and cut["left"]:
            cut["left"] -= 1
            route.abort("connectionreset")
        else:
            route.continue_()

    messages.answer = cut_once
    _ask(page, "Give me an opening line.")
    expect(page.get_by_test_id("chat-error")).to_contain_text("cannot reach the server")
    _offered_again(page, "Give me an opening line.")
    assert _stored(task_server, session_id) == [] and model.calls == 0
    page.get_by_test_id("chat-input").fill("A half-written next question")

    page.reload()
    expect(page.get_by_test_id("editor")).to_be_editable()
    _offered_again(page, "Give me an opening line.")
    expect(page.get_by_test_id("chat-input")).to_have_value("A half-written next question")
    page.get_by_test_id("chat-retry").click()
    expect(_messages(page, "assistant")).to_have_count(1)
    assert _stored(task_server, session_id)[0] == ("user", "Give me an opening line.")


def test_a_new_reply_is_said_but_a_reload_does_not_read_the_conversation_again(page, task_server, model):
    # The panel's list was a live region: a reload filled it again, and a screen reader read the
    # whole conversation out before the writer could go on.
    start_writing(page, task_server.url)
    _ask(page, "Give me an opening line.")
    expect(_messages(page, "assistant")).to_have_count(1)
    reply = _messages(page, "assistant").first.inner_text()
    wait_said(page, f"The assistant replied: {reply}")

    page.reload()
    expect(page.get_by_test_id("editor")).to_be_editable()
    expect(_messages(page, "assistant")).to_have_count(1)
    page.wait_for_timeout(500)  # an announcement is made 50 ms after its call
    said = live_text(page)
    assert reply not in said and "Give me an opening line." not in said, said

    _ask(page, "And a closing line?")
    expect(_messages(page, "assistant")).to_have_count(2)
    said = wait_said(page, f"The assistant replied: {_messages(page, 'assistant').last.inner_text()}")
    assert "Give me an opening line." not in said and "And a closing line?" not in said, said
