"""One simulated chat user on a chat study's path (CollabLLM §6, App. E), over real HTTP.

/task?access_code=... -> consent -> instructions -> intent (one of those offered, or the
assigned one) -> pre-writing answers (the study's minimums) -> the chat page: messages through
the chat API until the user ends the chat (the termination marker, after at least
`min_exchanges`), or the turn limit ([chat.simulator] max_exchanges), every blocking rating
answered when it is due,
the document logged through the chat page's event API as study/paradigms/chat/static/chat.js logs it
(chat-send/chat-receive; with [chat] document_pane = "merged" each reply's chat-merge and the
text event it made (study.paradigms.chat.merge), with "edited" chat-insert with its api
text-insert and the user's own text-insert; survey-open/survey-submit) -> finish -> the final
survey -> completion page.
"""

from __future__ import annotations

import html as html_lib
import re
import time
import uuid

import httpx

from study.curation.replay import to_units
from study.paradigms.chat import merge
from study.paradigms.chat.simulated_user import ChatUser
from study.simulate.forms import Question, questions
from study.simulate.pages import read_page
from study.simulate.participant import (
    Participant,
    SessionResult,
    SimulationError,
)

EVENT_BATCH = 200  # schemas/chat-event-batch.schema.json: maxItems
RETRIES = 6  # a refused or failed reply is asked again under the same client id, as the page does
_MODEL_FAILED = (429, 502, 503, 504)


# `study simulate`'s hooks (study.paradigms.base.Paradigm.simulate).
NOUN = "document"
# A chat user's intent comes from the study's own bank (the intent page), not from --intent.
INTENT = "one of the chat study's intents, chosen on its intent page"


def writer(persona, intent, noun, *, client, model, seed, study) -> ChatUser:
    return ChatUser(persona, intent, noun, client=client, model=model, seed=seed,
                    temperature=study.chat.simulator.temperature)  # fmt: skip


def participant(http, writer, access_code, *, study, mark, choose_prompt, record) -> ChatParticipant:
    return ChatParticipant(http, writer, access_code, mark=mark, settings=study.chat, record=record)


def describe(number, persona, result, participant, writer) -> str:
    return (f"chat user {number} ({persona.description[:40]}...): session {result.session_id}, "
            f"intent {result.prompt_code}, {result.queries} exchanges (ended: "
            f"{participant.end_reason.replace('_', ' ')}; goal: {writer.goal_source}), "
            f"{result.accepted} replies inserted, {result.events} page events")  # fmt: skip


class ChatLog:
    """The chat page's numbered events (seq from 0, as the page's outbox numbers them)."""

    def __init__(self, next_seq: int, document: str) -> None:
        self.next_seq, self.document = next_seq, document
        self.unsent: list[dict] = []

    def log(self, name: str, source: str, **extra) -> None:
        self.unsent.append({"seq": self.next_seq, "eventName": name, "eventSource": source,
                            "eventTimestamp": int(time.time() * 1000), "textDelta": "", **extra})  # fmt: skip
        self.next_seq += 1

    def append(self, addition: str, source: str, **extra) -> None:
        """Text added at the end of the document pane, as StudyEditor.append's Quill delta."""
        ops = [{"retain": len(to_units(self.document))}] if self.document else []  # Quill's UTF-16 units
        ops.append({"insert": addition})
        self.document += addition
        self.log("text-insert", source, textDelta={"ops": ops}, **extra)


# What the simulated user remembers of the ending when it answers the final survey.
ENDINGS = {
    "termination_marker": "You ended the chat yourself after {exchanges} exchanges (your last thought: {thought}).",
    "turn_limit": "The chat stopped at the study's turn limit after {exchanges} exchanges, before you were done "
                  "(your last thought: {thought}).",
    "fallback": "You ended the chat after {exchanges} exchanges, as soon as the study allowed.",
}


class ChatParticipant(Participant):
    def __init__(self, http: httpx.Client, user: ChatUser, access_code: str, *, mark, settings,
                 record) -> None:  # fmt: skip
        """`settings`: the study's [chat] (its simulator table, goal documents and minimums);
        `record(session_id, **values)` stores how the conversation went
        (study.store.simulated.record_conversation)."""
        def remember(session_id: str) -> None:
            self.session_id = session_id
            mark(session_id)

        super().__init__(http, user, access_code, mark=remember, choose_prompt=lambda codes: codes[0])
        self.user, self.settings, self.record = user, settings, record
        self.session_id = ""
        self.intent_key = ""
        self.exchanges = self.inserted = self.failed = 0
        self.end_reason = ""
        self.thoughts: list[str] = []  # the pre-writing answers: what the user types into the pane

    def _result(self, session_id: str, code: str, events: int) -> SessionResult:
        return SessionResult(session_id, self.intent_key or "(assigned by the study)", code,
                             events, self.exchanges, self.inserted, self.failed)  # fmt: skip

    def _step(self, stage: str, location: str, text: str, events: int) -> tuple[str, int]:
        if stage == "intent":
            return self._intent(location, text), events
        if stage == "prewriting":
            return self._prewrite(location, text), events
        if stage == "chat":
            return self._chat(text)
        # consent, instructions, surveys: whatever form the page shows, as on the writing path
        return super()._step(stage, location, text, events)

    # -- steps 1 and 2 ---------------------------------------------------------------------

    def _intent(self, location: str, page: str) -> str:
        kind = re.search(r'data-testid="document-type">([^<]+)<', page)
        self.user.noun = html_lib.unescape(kind.group(1)).lower() if kind else "document"
        offered = re.findall(r'name="intent" value="([^"]+)"[^>]*>\s*<strong>(.*?)</strong>:\s*([^<]*)<', page)
        if not offered:
            raise SimulationError(f"{location}: no intent is offered")
        titles = [html_lib.unescape(title) for _, title, _ in offered]
        chosen = self.user.answer("Which of these intents do you choose for your document?", "choice", titles)
        key, title, description = offered[titles.index(chosen)]
        self.intent_key = key
        self.user.intent_template = html_lib.unescape(f"{title}: {description}").strip()
        return self._redirect(self.http.post(location, data={"intent": key}), "the intent page")

    def _prewrite(self, location: str, page: str) -> str:
        intent = re.search(r'data-testid="intent">(.*?)</strong>:\s*([^<]*)<', page)
        if intent:  # an assigned intent is first seen here
            self.user.intent_template = html_lib.unescape(f"{intent.group(1)}: {intent.group(2)}").strip()
        data = {}
        for question in questions(page):
            if question.id.startswith("own"):
                continue  # the rows for questions of one's own stay blank
            answer = self.user.prewrite(question.text, question.min_words)
            data[question.id] = answer
            self.thoughts.append(answer)
        return self._redirect(self.http.post(location, data=data), "the pre-writing page")

    def _rate(self, boot: dict, log: ChatLog, panels: list[Question], owed: list[dict]) -> None:
        for due in owed:
            name, occasion = due["survey"], due["occasion"]
            log.log("survey-open", "api", surveyName=name, occasion=occasion)
            shown = [q for q in panels if q.survey == name]
            answers = self._answers(shown)  # strings (lists for checkboxes), as StudySurvey.collect sends
            response = self.http.post(f"{boot['surveysUrl']}{name}/{occasion}", json={"answers": answers})
            if response.status_code != 200:
                raise SimulationError(f"the rating '{name}' after exchange {occasion} was refused: "
                                      f"HTTP {response.status_code} {response.text[:300]}")  # fmt: skip
            log.log("survey-submit", "user", surveyName=name, occasion=occasion)

    # -- step 3: the chat ------------------------------------------------------------------

    def _chat(self, page: str) -> tuple[str, int]:
        boot = read_page(page).boot()
        intent = re.search(r"Your intent: <strong>(.*?)</strong>:\s*([^<]*)<", page)
        if intent:
            self.user.intent_template = html_lib.unescape(f"{intent.group(1)}: {intent.group(2)}").strip()
        panels = questions(page)
        state = self.http.get(boot["stateUrl"]).json()
        log = ChatLog(state["next_seq"], state["document"])
        if log.next_seq == 0:
            log.log("system-initialize", "api")
        # The user's memory: the whole conversation, as the server holds it.
        conversation = [{"role": m["role"], "content": m["content"]} for m in state["messages"]]
        last_reply = next((m["content"] for m in reversed(conversation) if m["role"] == "assistant"), None)
        self.exchanges = state["exchanges"]
        self._rate(boot, log, panels, state["owed"])
        simulator, needed = self.settings.simulator, boot["minExchanges"]
        intent = self.intent_key or None
        if not self.user.goal:
            goal_file = simulator.goal_file(intent) if intent else None
            self.user.hold_goal(goal_file.read_text(encoding="utf-8") if goal_file else None,
                                self.thoughts, self.settings.target_words)  # fmt: skip
        first_wish, thought = None, ""
        while True:
            if self.exchanges >= simulator.max_exchanges:
                self.end_reason = "turn_limit"
                break
            turn = self.user.turn(conversation, self.exchanges + 1, needed=needed,
                                  marker=simulator.termination_marker,
                                  history_chars=simulator.history_chars, limit=boot["maxMessageChars"])  # fmt: skip
            thought = turn.thought or thought
            if turn.ends:
                self.end_reason = "termination_marker"
                break
            if turn.wished_to_end and first_wish is None:
                first_wish = self.exchanges
            if not turn.by_model and self.exchanges >= needed:
                self.end_reason = "fallback"  # no usable answer: the persona's habit ends here
                break
            answer = self._say(boot, log, panels, turn.message)
            log.log("chat-send", "user", messageSeq=answer["user"]["seq"])
            log.log("chat-receive", "api", messageSeq=answer["assistant"]["seq"])
            last_reply = answer["assistant"]["content"]
            conversation += [{"role": "user", "content": answer["user"]["content"]},
                             {"role": "assistant", "content": last_reply}]  # fmt: skip
            self.exchanges = answer["exchanges"]
            if self.settings.document_pane == "merged":
                self._merge(log, answer["assistant"])  # the page does it; the user cannot edit
            elif last_reply and self.user.inserts():
                self._insert(log, answer["assistant"])
            if self.thoughts and self.user.edits() and self.settings.document_pane != "merged":
                # The user's own words: one of their pre-writing thoughts typed into the pane.
                thought = self.user.rng.choice(self.thoughts)
                log.append(("\n\n" if log.document and not log.document.endswith("\n") else "") + thought, "user")
            self._rate(boot, log, panels, answer["owed"])
            if len(log.unsent) >= EVENT_BATCH // 2:
                self._send_events(boot, log)
        if not log.document.strip() and last_reply and self.settings.document_pane != "merged":
            self._insert(log, {"seq": None, "content": last_reply})  # nobody submits an empty document
        self._send_events(boot, log)
        first_wish = first_wish if first_wish is not None else (
            self.exchanges if self.end_reason == "termination_marker" else None)  # fmt: skip
        self.user.ending = ENDINGS[self.end_reason].format(exchanges=self.exchanges, thought=thought or "-")
        self.record(self.session_id, goal_source=self.user.goal_source, goal_document=self.user.goal,
                    end_reason=self.end_reason, exchanges=self.exchanges, first_wish_to_end=first_wish,
                    last_thought=thought)  # fmt: skip
        return self._finish_chat(boot, log), log.next_seq

    def _insert(self, log: ChatLog, message: dict) -> None:
        """The reply's "Insert into document" button, as chat.js's insertReply."""
        addition = ("\n\n" if log.document and not log.document.endswith("\n") else "") + message["content"]
        log.log("chat-insert", "user", messageSeq=message["seq"])
        log.append(addition, "api", messageSeq=message["seq"])
        self.inserted += 1

    def _merge(self, log: ChatLog, message: dict) -> None:
        """The running document after a reply, logged as chat.js's mergeReply logs it."""
        now = merge.merge(log.document, message["content"])
        log.log("chat-merge", "api", messageSeq=message["seq"])
        change = merge.delta(log.document, now)
        if change is not None:
            name = "text-insert" if any("insert" in op for op in change["ops"]) else "text-delete"
            log.document = now
            log.log(name, "api", textDelta=change, messageSeq=message["seq"])

    def _say(self, boot: dict, log: ChatLog, panels: list[Question], content: str) -> dict:
        client_id = uuid.uuid4().hex
        for attempt in range(RETRIES):
            response = self.http.post(boot["messagesUrl"], json={"client_id": client_id, "content": content})
            body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
            if response.status_code == 200:
                return body
            if response.status_code == 409 and body.get("pending_client_id"):
                client_id = body["pending_client_id"]  # an earlier message waits for its reply
                continue
            if response.status_code == 409 and body.get("owed"):
                self._rate(boot, log, panels, body["owed"])  # then send the same text again
                client_id = uuid.uuid4().hex
                continue
            if response.status_code in _MODEL_FAILED:
                self.failed += 1
                log.log("chat-fail", "api", detail=str(body.get("error") or response.status_code)[:500])
                time.sleep(min(2**attempt, 8))  # a person reads the line and presses retry
                continue
            raise SimulationError(f"the chat API refused a message: HTTP {response.status_code} "
                                  f"{response.text[:300]}")  # fmt: skip
        raise SimulationError(f"the assistant did not answer after {RETRIES} tries: {body.get('error', '')}")

    def _send_events(self, boot: dict, log: ChatLog) -> None:
        batch, log.unsent = log.unsent, []
        for start in range(0, len(batch), EVENT_BATCH):
            response = self.http.post(boot["eventsUrl"], json={"events": batch[start : start + EVENT_BATCH]})
            if response.status_code != 200:
                raise SimulationError(f"the chat event API refused a batch: HTTP {response.status_code} "
                                      f"{response.text[:300]}")  # fmt: skip

    def _finish_chat(self, boot: dict, log: ChatLog) -> str:
        body = {"last_seq": log.next_seq - 1, "pending": 0, "document": log.document}
        response = self.http.post(boot["finishUrl"], json=body)
        if response.status_code != 200:
            raise SimulationError(f"finishing the chat was refused: HTTP {response.status_code} "
                                  f"{response.text[:300]}")  # fmt: skip
        return response.json()["next"]
