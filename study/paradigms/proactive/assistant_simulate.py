"""`study simulate`'s writer at L0's assistant panel (MindCopilot's user-initiated paradigm,
[proactive] l0 = "assistant"): where a Tab writer presses Tab, this one asks the panel through
its API as static/editor-assistant.js does (POST /api/sessions/<id>/assistant, study.paradigms
.proactive.api), and logs what that script and editor.js log of it:

  panel-focus (user, panel "assistant")  the writer clicks into the panel
  chat-send (user, text)                 their request, sent
  chat-receive (api, chatId, text)       the response as the server sent it, or
  suggestion-fail (api, reason)          when none came (the request goes back into the box,
                                         and a person presses Send again a couple of times)
  chat-copy (user, chatId, text)         the passage they select in the response and copy
  panel-focus (user, panel "editor")     back in the editor
  text-insert (user, paste, chatId)      the passage pasted at the end of their text

or, where the study turns on the "Insert at cursor" button ([proactive] insert_button, the
boot data's `insertButton`) and the writer presses it under a response, in place of the last
three, what its click does (editor-assistant.js insertAtCursor; the click itself stays in the
panel, so no panel-focus of its own):

  panel-focus (user, panel "editor")     the button puts the focus back in the editor
  text-insert (user, chatId, insert)     all of the response, as it is, at the caret (the end
                                         of their text: no space of the writer's before it)

tests/browser/test_proactive_assistant.py holds these records to the ones Chromium's page logs.
The panel keeps no conversation (study.paradigms.proactive.assistant), so each request stands
alone. What to ask and what to copy are the chat arm's writer's choices (study.paradigms.chat
.arm_simulate: the writers' model's answers, else the persona's seeded habits); whether to press
the button is the model's answer too, else the persona's `insert_rate` of the responses it takes.
"""

from __future__ import annotations

import time

from study.paradigms.chat.arm_simulate import copied, named_passage, passage, request
from study.simulate.writer import parse_json

KEY = "assistantPanel"  # the boot key of the panel (study.paradigms.proactive.editor)
# The assistant as the writer has it (study.simulate.writer.TAB for a Tab writer's).
ASSISTANT = ("an AI assistant in a panel beside the editor, which answers each request you type "
             "to it with a complete response; it changes nothing in your text by itself, but you "
             "may copy from its responses into your text (or, where a response has an "
             "\"Insert at cursor\" button, put all of it in with that)",
             "to ask the assistant in its panel")
INSERT_OR_COPY = (
    "The assistant responds:\n<<<\n{reply}\n>>>\nUnder the response is a button, \"Insert at cursor\", "
    "which puts all of it into your {noun} where your cursor is (the end of your text). Do you press "
    'it, copy part of it, or neither? Answer with JSON {{"insert": true}} to press the button, '
    '{{"copy": "<the sentences you copy, exactly as the response has them>"}} to copy those, or '
    '{{"copy": ""}} for neither.'
)
TRIES = 3  # Send pressed again after "No answer this time", then the writer writes on
_WAIT = (429, 502, 503, 504)  # a refusal for now (limits, the model): worth another try


def ask(http, writer, log, part: dict) -> str | None:
    """One request at the panel, logged on `log` (whose records all carry `proactive`: the page's boot data says so):
    None when no response came, else the passage pasted ("" for none). The hook
    `simulate_part` (study.paradigms.base)."""
    log.record("panel-focus", "user", proactive={"panel": "assistant"})
    text = request(writer, log.text)[: part.get("maxRequest") or 4000].strip()
    answer = _send(http, log, part["url"], text)
    if answer is None:
        log.record("panel-focus", "user", proactive={"panel": "editor"})
        return None
    chat_id, response = answer
    how, taken = moved(writer, response, button=bool(part.get("insertButton")))
    if how == "insert" and taken:
        press_insert(log, chat_id, response)
        return response
    if taken:
        log.record("chat-copy", "user", proactive={"chatId": chat_id, "text": taken})
    log.record("panel-focus", "user", proactive={"panel": "editor"})
    if taken:
        log.paste(taken, proactive={"paste": True, "chatId": chat_id})
    return taken


def press_insert(log, chat_id: int, response: str) -> None:
    """The writer presses Insert at cursor under response `chat_id`, their caret at the end of
    their text: logged as editor-assistant.js's insertAtCursor and editor.js log it."""
    log.record("panel-focus", "user", proactive={"panel": "editor"})
    log.put(response, proactive={"chatId": chat_id, "insert": True})


def moved(writer, response: str, *, button: bool) -> tuple[str, str]:
    """How the writer moves text of `response` into theirs: ("insert", response) when they
    press Insert at cursor (only where the page has the button), else ("copy", the passage they
    copy and paste, "" for none), as the writers' model answers, else by the persona's habits."""
    if not button:
        return "copy", copied(writer, response)
    answer = parse_json(writer.ask_model(INSERT_OR_COPY.format(reply=response[:3000], noun=writer.noun),
                                         max_tokens=200))  # fmt: skip
    if answer is not None and answer.get("insert") is True:
        writer.decided(True)
        return "insert", response
    # A "copy" answer reads as the chat arm's (a passage the response holds, "" for none);
    # any other leaves it to the persona's habits.
    named = named_passage(answer, response) if answer is not None and "copy" in answer else None
    if named is not None:
        writer.decided(True)
        return "copy", named
    writer.decided(False)
    persona, rng = writer.persona, writer.rng
    if rng.random() >= persona.accept_rate:
        return "copy", ""
    if rng.random() < persona.insert_rate:
        return "insert", response
    return "copy", passage(response, rng.choice((1, 2)))


def _send(http, log, url: str, text: str) -> tuple[int, str] | None:
    """(chatId, response), asked as the page asks; each try is the writer pressing Send."""
    for attempt in range(TRIES):
        log.record("chat-send", "user", proactive={"text": text})
        response = http.post(url, json={"request": text, "doc": log.text})
        is_json = response.headers.get("content-type", "").startswith("application/json")
        body = response.json() if is_json else {}
        if response.status_code == 200 and isinstance(body.get("response"), str):
            log.record("chat-receive", "api", proactive={"chatId": body["chatId"], "text": body["response"]})
            return body["chatId"], body["response"]
        log.record("suggestion-fail", "api", proactive={"reason": str(body.get("error") or f"HTTP {response.status_code}")[:300]})
        if response.status_code not in _WAIT or attempt + 1 == TRIES:
            return None
        time.sleep(attempt + 1)  # a person reads "No answer this time", then presses Send again
    return None
