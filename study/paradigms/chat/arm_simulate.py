"""`study simulate`'s writer at a chat arm's panel (study.paradigms.chat.arm): where a Tab writer
presses Tab, this one asks the chat assistant beside the editor, through the panel's API as
static/editor-chat.js calls it (POST /api/sessions/<id>/assistant/messages, study.paradigms.chat
.arm_api), and may copy a passage of the reply into their text.

The panel has no insert button: a person selects a passage of the reply, copies it and pastes it
at their text, which the editor logs as any paste (one `user` text-insert of all of it,
study.simulate.editor.EditorLog.paste). The passage is the reply's own text, verbatim, so the
curation reads it as the assistant's (study.curation.origin's `assistant_texts`), as a person's.
What to ask, and whether and what to copy, are the writers' model's answers, else the persona's
seeded habits (its acceptance rate; the Tab writer's rate of taking a suggestion).
"""

from __future__ import annotations

import re
import time
import uuid

from study.simulate.writer import as_typed_text, parse_json

KEY = "chat"  # the boot key of the panel (study.paradigms.chat.editor), as its EditorPart's
# The assistant as the writer has it (study.simulate.writer.TAB for a Tab writer's).
ASSISTANT = ("a chat assistant in a panel beside the editor, which answers what you type to it; "
             "it inserts nothing, but you may copy from its replies into your text",
             "to ask the chat assistant")
ASK = (
    "You open the chat assistant beside your editor. Your {noun} so far (the prompt first):\n"
    "<<<\n{text}\n>>>\nWhat do you ask it? Answer with JSON "
    '{{"message": "<your message to the assistant, one or two sentences, as you would type it>"}}.'
)
COPY = (
    "The chat assistant replies:\n<<<\n{reply}\n>>>\nDo you copy part of it into your {noun}? "
    'Answer with JSON {{"copy": "<the sentences you copy, exactly as the reply has them>"}}, or '
    '{{"copy": ""}} to copy nothing.'
)
# A writer's own message when the model's answer has no text: what a person stuck asks.
REQUESTS = (
    "What could come next in my {noun}?",
    "can you give me a sentence to continue this",
    "Any ideas for the next part?",
    "How should I go on from here?",
)
# The panel's "Try again" after a reply that did not come (the server keeps the message, and
# answers the same client id with its reply): a person tries a couple of times, then writes on.
TRIES = 3
_KEPT = (429, 502, 503, 504)  # editor-chat.js KEPT: the message is stored, the same id asks again
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
MAX_COPIED = 600  # characters: a passage a person selects, not the whole of a long reply


def ask(http, writer, log, part: dict) -> str | None:
    """One question to the panel: None when no reply came, else the passage of the reply the
    writer pastes ("" for none). The hook `simulate_part` (study.paradigms.base)."""
    message = request(writer, log.text)[: part.get("maxMessageChars") or 4000]
    reply = _send(http, part["url"], message)
    if reply is None:
        return None
    taken = copied(writer, reply)
    if taken:
        log.paste(taken)
    return taken


def request(writer, text: str) -> str:
    """What the writer types to an assistant beside the editor about `text` (the text so far):
    the writers' model's message, else what a person stuck asks. L0's panel asks so too
    (study.paradigms.proactive.assistant_simulate)."""
    answer_text = writer.ask_model(ASK.format(noun=writer.noun, text=text[-3000:]))
    answer = parse_json(answer_text)
    message = " ".join(str(answer.get("message", "")).split()) if answer else ""
    if message:
        writer.decided(True)
        return message
    writer.decided(False)
    # As the writer's other free-text answers: a reply that is no such JSON is typed as written.
    return as_typed_text(answer_text) or writer.rng.choice(REQUESTS).format(noun=writer.noun)


def _send(http, url: str, message: str) -> str | None:
    """The reply's text, asked as the page asks: a new client id per message, the same one for
    "Try again"; an earlier message still waiting for its reply (409 naming it) is asked first,
    whose reply is then the one the writer reads (their new message went back into the box)."""
    client_id = f"m{uuid.uuid4().hex[:16]}"
    for attempt in range(TRIES):
        response = http.post(url, json={"client_id": client_id, "content": message})
        json_reply = response.headers.get("content-type", "").startswith("application/json")
        body = response.json() if json_reply else {}
        if response.status_code == 200:
            return body["assistant"]["content"]
        if response.status_code == 409 and body.get("pending_client_id"):
            client_id = body["pending_client_id"]
            continue
        if response.status_code in _KEPT and attempt + 1 < TRIES:
            time.sleep(attempt + 1)  # a person reads "The assistant did not answer", then tries again
            continue
        return None  # refused (no longer writing) or still no reply: the writer writes on
    return None


def copied(writer, reply: str) -> str:
    """The passage the writer copies from `reply`: the one the model names when the reply holds
    it, else by the persona's habits the reply's first sentence or two ("" for none)."""
    answer = parse_json(writer.ask_model(COPY.format(reply=reply[:3000], noun=writer.noun), max_tokens=200))
    named = named_passage(answer, reply)
    if named is not None:
        writer.decided(True)
        return named
    writer.decided(False)
    if writer.rng.random() >= writer.persona.accept_rate:
        return ""
    return passage(reply, writer.rng.choice((1, 2)))


def named_passage(answer: dict | None, reply: str) -> str | None:
    """The passage of `reply` the model's answer names as `copy` ("" for none); None when the
    answer names nothing the reply holds (the persona's habits decide then). L0's panel reads
    its writers' answers so too (study.paradigms.proactive.assistant_simulate)."""
    named = str(answer.get("copy", "")).strip() if answer else None
    if named == "":
        return ""
    if named and named in reply:  # a passage the reply has; a paraphrase would be typed, not pasted
        return named[:MAX_COPIED]
    return None


def passage(reply: str, sentences: int) -> str:
    """The reply's first `sentences` sentences as the reply has them (a selection from its start
    to a sentence's end), cut at a word before MAX_COPIED characters."""
    found = [m for m in _SENTENCE.finditer(reply) if m.group().strip()]
    if not found:
        return ""
    start = found[0].start() + len(found[0].group()) - len(found[0].group().lstrip())
    end = found[min(sentences, len(found)) - 1].end()
    chosen = reply[start:end].rstrip()
    if len(chosen) > MAX_COPIED:
        chosen = chosen[:MAX_COPIED].rsplit(" ", 1)[0].rstrip()
    return chosen
