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

The panel keeps no conversation (study.paradigms.proactive.assistant), so each request stands
alone. What to ask and what to copy are the chat arm's writer's choices (study.paradigms.chat
.arm_simulate: the writers' model's answers, else the persona's seeded habits); the
"Insert at cursor" button a study may turn on is not pressed: copy and paste is what every L0
page offers.
"""

from __future__ import annotations

import time

from study.paradigms.chat.arm_simulate import copied, request

KEY = "assistantPanel"  # the boot key of the panel (study.paradigms.proactive.editor)
# The assistant as the writer has it (study.simulate.writer.TAB for a Tab writer's).
ASSISTANT = ("an AI assistant in a panel beside the editor, which answers each request you type "
             "to it with a complete response; it inserts nothing, but you may copy from its "
             "responses into your text", "to ask the assistant in its panel")
TRIES = 3  # Send pressed again after "No answer this time", then the writer writes on
_WAIT = (429, 502, 503, 504)  # a refusal for now (limits, the model): worth another try


def ask(http, writer, log, part: dict) -> str | None:
    """One request at the panel, logged on `log` (whose records all carry `proactive`: the page's boot data says so):
    None when no response came, else the passage pasted ("" for none). The hook
    `simulate_part` (study.paradigms.base)."""
    log.record("panel-focus", "user", proactive={"panel": "assistant"})
    text = request(writer, log.text)[: part.get("maxRequest") or 4000].strip()
    answer = _send(http, log, part["url"], text)
    taken = copied(writer, answer[1]) if answer else ""
    if taken:
        log.record("chat-copy", "user", proactive={"chatId": answer[0], "text": taken})
    log.record("panel-focus", "user", proactive={"panel": "editor"})
    if answer is None:
        return None
    if taken:
        log.paste(taken, proactive={"paste": True, "chatId": answer[0]})
    return taken


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
