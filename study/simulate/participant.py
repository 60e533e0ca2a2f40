"""One simulated participant on the real participant's path, over real HTTP.

/task?access_code=... -> consent -> instructions -> prompt -> writing (the event API and the
suggestion API, or the API of the page's own part to ask such as a chat arm's panel, exactly as
the editor's JavaScript calls them) -> finish -> self-evaluation ->
survey -> completion page, and within subjects again from the completion page's link to the
next part (`another=1`) for each arm still owed. Each page is read and its form filled as the page shows it; a page
the simulator does not expect stops the run with the server's own words.
"""

from __future__ import annotations

import re
import string
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from study import paradigms
from study.simulate.editor import EditorLog, clean_suggestions
from study.simulate.forms import Question, questions
from study.simulate.pages import Page, read_page
from study.simulate.writer import SimulatedWriter, at_least_words

EVENT_BATCH = 100
MAX_TURNS = 80
MAX_PAGES = 20
_SESSION_PATH = re.compile(r"/s/([0-9a-f]{32})/(\w+)")


class SimulationError(RuntimeError):
    pass


@dataclass
class SessionResult:
    session_id: str
    prompt_code: str
    verification_code: str
    events: int
    queries: int
    accepted: int
    failed_queries: int
    # Why the failed queries failed, as the server said it ("HTTP 429: ..."), with their counts.
    failure_reasons: Counter = field(default_factory=Counter)


# The writing path's participant and writer, in the shape of a paradigm's `simulate` hooks
# (study.paradigms.base.Paradigm), which `study simulate` takes when no paradigm declares its own.


def participant(http, writer, access_code, *, study, mark, choose_prompt, record) -> Participant:
    return Participant(http, writer, access_code, mark=mark, choose_prompt=choose_prompt)


def writer(persona, intent, noun, *, client, model, seed, study) -> SimulatedWriter:
    return SimulatedWriter(persona, intent, noun, client=client, model=model, seed=seed)


class Participant:
    def __init__(self, http: httpx.Client, writer: SimulatedWriter, access_code: str, *,
                 mark: Callable[[str], None], choose_prompt: Callable[[list[str]], str]) -> None:  # fmt: skip
        self.http, self.writer, self.access_code = http, writer, access_code
        self.mark, self.choose_prompt = mark, choose_prompt
        self.queries = self.accepted = self.failed_queries = 0
        self.failure_reasons: Counter = Counter()
        self.prompt_code = ""
        # Whether the last completion page linked a next part (a within-subjects arm still owed)
        # and whether it offered another session (between subjects: more of the same; within
        # subjects: the arms of another genre, once one genre's are all written).
        self.next_part = self.another_session = False

    # -- the path --------------------------------------------------------------------------

    def run(self, *, another: bool = False) -> SessionResult:
        """The participant's path, page by page, until the completion page; `another`: a later
        session of the same participant, as the completion page's link asks for one. Each
        page's stage is handled by `_step`, which a chat participant
        (study.paradigms.chat.simulate) overrides."""
        self.queries = self.accepted = self.failed_queries = 0
        self.failure_reasons = Counter()
        self.prompt_code, self.next_part, self.another_session = "", False, False
        params = {"access_code": self.access_code, **({"another": "1"} if another else {})}
        response = self.http.get("/task", params=params)
        location = self._redirect(response, "the entry page /task")
        session_id = _SESSION_PATH.search(location).group(1)
        self.mark(session_id)
        events = 0
        for _ in range(MAX_PAGES):
            stage = _SESSION_PATH.search(location).group(2)
            response = self.http.get(location)
            if response.status_code in (301, 302, 303):
                location = response.headers["location"]
                continue
            if response.status_code != 200:
                raise SimulationError(f"GET {location}: HTTP {response.status_code}")
            if stage == "complete":
                shown = read_page(response.text).testids
                self.next_part = "next-part" in shown
                self.another_session = "another-session" in shown
                return self._result(session_id, shown.get("verification-code", ""), events)
            location, events = self._step(stage, location, response.text, events)
        raise SimulationError(f"session {session_id} did not reach the completion page")

    def _result(self, session_id: str, code: str, events: int) -> SessionResult:
        # With prompt_selection = "assign" the server picked the prompt.
        prompt = self.prompt_code or "(assigned by the study)"
        return SessionResult(session_id, prompt, code, events, self.queries,
                             self.accepted, self.failed_queries, self.failure_reasons)  # fmt: skip

    def _step(self, stage: str, location: str, text: str, events: int) -> tuple[str, int]:
        """Answer one page; returns where the server sent the participant and the events sent."""
        page = read_page(text)
        if stage == "writing":
            return self._write(page)
        if stage == "prompt":
            return self._pick_prompt(location, page), events
        # consent, instructions, self-evaluation, surveys: whatever form the page shows. The
        # survey's questions are answered from what they show (a slider is answered only once
        # moved, word minimums, follow-ups), as a person answers them; the rest (consent boxes,
        # hidden fields) by `_fill`.
        shown = questions(text)
        asked = {q.id for q in shown}
        page.fields = {k: f for k, f in page.fields.items() if k not in asked}
        data = {**self._fill(page), **self._answers(shown)}
        return self._redirect(self.http.post(location, data=data), f"the {stage} page"), events

    def _redirect(self, response: httpx.Response, what: str) -> str:
        if response.status_code in (301, 302, 303):
            return response.headers["location"]
        message = re.sub(r"<[^>]+>", " ", response.text)
        errors = re.findall(r'class="error"[^>]*>([^<]+)<', response.text)
        detail = errors[0] if errors else " ".join(message.split())[:300]
        raise SimulationError(f"{what} answered HTTP {response.status_code}: {detail}")

    def _pick_prompt(self, location: str, page: Page) -> str:
        codes = [value for name, value in page.buttons if name == "prompt"]
        if not codes:
            raise SimulationError(f"{location}: no prompt is offered (every prompt is taken as "
                                  "often as the study allows)")  # fmt: skip
        self.prompt_code = self.choose_prompt(codes)
        return self._redirect(self.http.post(location, data={"prompt": self.prompt_code}),
                              "the prompt page")  # fmt: skip

    def _fill(self, page: Page) -> dict[str, str]:
        """Answers to a page's form: every box ticked (consent, self-evaluation), every
        question answered by the writer."""
        data = {}
        for name, entry in page.fields.items():
            if entry.kind == "checkbox":
                data[name] = entry.options[0]
            elif entry.kind == "hidden":
                data[name] = entry.value
            elif entry.kind == "radio":
                scale = all(o.isdigit() for o in entry.options)
                data[name] = self.writer.answer(entry.question or name,
                                                "scale" if scale else "choice", entry.options)  # fmt: skip
            elif entry.kind in ("textarea", "text"):
                data[name] = self.writer.answer(entry.question or name, "text", [])
        return data

    def _answers(self, shown: list[Question]) -> dict:
        """An answer to every question the form shows (and to those its answers reveal)."""
        answers: dict = {}
        for question in shown:
            if not question.shown(answers):
                continue
            if question.type in ("likert", "single", "multiple"):
                kind = "scale" if question.type == "likert" else "choice"
                value = self.writer.answer(question.text or question.id, kind, question.options)
                answers[question.id] = [value] if question.type == "multiple" else value
            elif question.type == "slider":
                scale = [str(n) for n in range(question.low, question.high + 1)]
                answers[question.id] = self.writer.answer(question.text or question.id, "scale", scale)
            else:
                text = self.writer.answer(question.text or question.id, "text", [])
                answers[question.id] = at_least_words(text, question.min_words)
        return answers

    # -- writing ---------------------------------------------------------------------------

    def _write(self, page: Page) -> tuple[str, int]:
        boot = page.boot()
        log = self.editor_log(boot)
        prompt_chars = len(log.text)
        most = int(boot["controls"].get("currentN") or 5)
        # The page's own part to ask, where it is not the Tab list (a chat arm's panel).
        part = next((module for module in paradigms.simulated_parts() if module.KEY in boot), None)
        # A control arm's page has neither (study.control_arm).
        can_ask = part is not None or "suggestionsUrl" in boot
        if part is not None:
            self.writer.assistant = part.ASSISTANT
        for _ in range(MAX_TURNS):
            added = len(log.text[prompt_chars:].split())
            action, text = self.writer.next_step(log.text, added)
            if action == "finish" and added >= 10 and self.queries == 0 and can_ask:
                # A pilot writer who never asked pilots nothing of the assistant's interface:
                # even the careful persona (asks "mostly when stuck") asks once before finishing.
                action = "ask"
            elif action == "finish" and added >= 10:
                break
            if action == "ask" and part is not None:
                self._ask_part(log, part, boot[part.KEY])
            elif action == "ask":
                if "suggestionsUrl" in boot:  # a control arm's page has none: nothing to ask
                    self._ask(log, boot["suggestionsUrl"], most)
            else:
                self._type(log, text)
            if len(log.unsent) >= EVENT_BATCH:
                self._send(log, boot["eventsUrl"])
        self._send(log, boot["eventsUrl"])
        return self._finish(log, boot), log.next_seq

    def editor_log(self, boot: dict) -> EditorLog:
        """The page's log; a paradigm's participant may keep records of its own kind."""
        return EditorLog(boot["prompt"], boot["controls"], extension=boot.get("extension"))

    def _type(self, log: EditorLog, text: str) -> None:
        if log.text and not log.text[-1].isspace() and not text.startswith((" ", "\n")):
            text = " " + text
        for character in text:
            if character.isalpha() and self.writer.typo():
                log.type(self.writer.rng.choice(string.ascii_lowercase))
                log.backspace()
            log.type(character)

    def _ask(self, log: EditorLog, url: str, most: int) -> None:
        log.ask()
        self.queries += 1
        response = self.http.post(url, json={"doc": log.text, "on_screen": []})
        items = []
        if response.status_code == 200:
            items = clean_suggestions(response.json().get("suggestions") or [])[:most]
        if not items:
            # As the editor does: a query without a list is logged as suggestion-fail.
            log.failed()
            self.count_failure(response)
            if response.status_code == 429:
                time.sleep(1)  # the server's per-minute limit: a person would wait too
            return
        log.shown(items)
        position = self.writer.choose(items)
        if position is None:
            log.dismiss()
            return
        for _ in range(position):
            log.move_down()
        log.accept(items[position])
        self.accepted += 1

    def _ask_part(self, log: EditorLog, part, settings: dict) -> None:
        """One question at the page's own part (study.paradigms.base: `simulate_part`), which
        logs it as the page does, the text the writer takes from its answer included."""
        self.queries += 1
        taken = part.ask(self.http, self.writer, log, settings)
        if taken is None:
            self.count_failure(None)
        elif taken:
            self.accepted += 1

    def count_failure(self, response: httpx.Response | None) -> None:
        """Count a query that showed the writer nothing, and why: the run's summary names the
        reasons, so a pilot whose requests were refused (a per-minute limit, a model too slow)
        is not read as a model that had nothing to say."""
        self.failed_queries += 1
        self.failure_reasons[failure_reason(response)] += 1

    def _send(self, log: EditorLog, url: str) -> None:
        batch = log.take_unsent()
        for start in range(0, len(batch), EVENT_BATCH):
            part = batch[start : start + EVENT_BATCH]
            response = self.http.post(url, json={"events": part})
            if response.status_code != 200:
                raise SimulationError(f"the event API refused a batch: HTTP {response.status_code} "
                                      f"{response.text[:300]}")  # fmt: skip

    def _finish(self, log: EditorLog, boot: dict) -> str:
        body = {"last_seq": log.last_seq, "text": log.document, "pending": 0}
        while True:
            response = self.http.post(boot["finishUrl"], json=body)
            if response.status_code == 200:
                return response.json()["next"]
            wait = re.search(r"for (\d+) more seconds", response.text)
            if response.status_code == 409 and wait:
                # The study's minimum writing time: a person keeps the page open until then.
                time.sleep(int(wait.group(1)) + 1)
                continue
            raise SimulationError(f"finishing was refused: HTTP {response.status_code} "
                                  f"{response.text[:300]}")  # fmt: skip


def failure_reason(response: httpx.Response | None) -> str:
    """Why a query showed nothing, in the server's words: its status and error message, or
    that it answered with no suggestion (every output empty, a duplicate or blocked)."""
    if response is None:
        return "the page's part gave no answer"
    if response.status_code == 200:
        return "answered with no suggestion to show"
    try:
        said = response.json().get("error") or ""
    except ValueError:
        said = ""
    return f"HTTP {response.status_code}" + (f": {' '.join(str(said).split())[:200]}" if said else "")
