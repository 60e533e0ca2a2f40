"""A simulated writer: an LLM role-playing a study participant, behind an OpenAI-compatible
endpoint (any model: the local `study lm serve`, a hosted API).

At each turn the model is asked for one JSON object: {"action": "write", "text": ...} (the
next sentence or two, typed by the writer), {"action": "ask"} (press Tab for suggestions) or
{"action": "finish"}. Shown suggestions are answered with {"choice": k} (0 dismisses). A reply
that is not such JSON (small models seldom manage it) is not discarded: its text becomes what
the writer types, and the persona's seeded habits (`Persona`) decide the rest. Every decision
is counted as the model's or the fallback's, and the run reports the split.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from study import model_client
from study.simulate.personas import Persona

SYSTEM = (
    "You are role-playing a person taking part in a writing study. You write a {noun} in an "
    "editor that has an AI writing assistant: {assistant}. Persona: {persona}. Your intent: "
    "{intent}. Stay in character as this human writer (not an assistant), keep your personality "
    "consistent, do not overthink, and occasionally make the small mistakes this person would "
    "make. Always answer with one JSON object and nothing else."
)
TURN = (
    "Your {noun} so far (the prompt first):\n<<<\n{text}\n>>>\nIt has {words} words of your own "
    "so far; you aim for about {target}. Choose your next step and answer with JSON: "
    '{{"action": "write", "text": "<the next one or two sentences you type yourself>"}}, or '
    '{{"action": "ask"}} {ask}, or {{"action": "finish"}} when your {noun} is complete.'
)
# The assistant as a Tab writer has it: what it is, and what {"action": "ask"} does. A page whose
# own part is asked instead (a chat arm's panel) says its own (study.paradigms.base: `simulate_part`).
TAB = ("pressing Tab shows up to five continuations, and you may accept one or ignore them",
       "to press Tab for suggestions")
CHOOSE = (
    "The assistant suggests these continuations:\n{items}\nWhich one do you accept? Answer with "
    'JSON {{"choice": <its number>}}, or {{"choice": 0}} to dismiss them all.'
)
SURVEY = (
    "You have finished your {noun}. Answer this survey question as your persona would.\n"
    "Question: {question}\n{how}\nAnswer with JSON {{\"answer\": ...}}."
)
_JSON = re.compile(r"\{.*\}", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
MAX_TYPED_CHARS = 400


@dataclass
class Decisions:
    by_model: int = 0
    by_fallback: int = 0
    failures: list[str] = field(default_factory=list)  # endpoint errors, for the run's summary


def parse_json(reply: str) -> dict | None:
    match = _JSON.search(reply or "")
    if not match:
        return None
    try:
        value = json.loads(match.group())
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def as_typed_text(reply: str) -> str:
    """A model's free-text reply as what the writer types: the first two sentences, plain."""
    text = " ".join((reply or "").replace("<<<", " ").replace(">>>", " ").split())
    sentences = _SENTENCE_END.split(text)
    return " ".join(sentences[:2])[:MAX_TYPED_CHARS].strip()


class SimulatedWriter:
    def __init__(self, persona: Persona, intent: str, noun: str, *, client, model: str,
                 seed: int, temperature: float = 1.0) -> None:  # fmt: skip
        self.persona, self.intent_template, self.noun = persona, intent, noun
        self.client, self.model, self.temperature = client, model, temperature
        self.rng = random.Random(seed)
        self.decisions = Decisions()
        self.assistant = TAB

    @property
    def intent(self) -> str:
        return self.intent_template.replace("{noun}", self.noun)

    @property
    def system(self) -> str:
        # The noun is known once the writer has picked a prompt (story or essay).
        return SYSTEM.format(noun=self.noun, assistant=self.assistant[0], persona=self.persona.description,
                             intent=self.intent)

    # -- the model -------------------------------------------------------------------------

    def ask_model(self, message: str, max_tokens: int = 160) -> str:
        try:
            response = self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": self.system},
                          {"role": "user", "content": message}],
                temperature=self.temperature, max_tokens=max_tokens,
            )  # fmt: skip
            return response.choices[0].message.content or ""
        except Exception as error:  # noqa: BLE001 - any endpoint failure falls back, and is counted
            # Redacted before it is shortened: an endpoint can echo the key in its error, and
            # the run prints the first failure (study.simulate.cli).
            said = model_client.redact(str(error), self.client.api_key)
            self.decisions.failures.append(f"{type(error).__name__}: {said}"[:200])
            return ""

    def decided(self, by_model: bool) -> None:
        if by_model:
            self.decisions.by_model += 1
        else:
            self.decisions.by_fallback += 1

    # -- decisions -------------------------------------------------------------------------

    def next_step(self, text: str, own_words: int) -> tuple[str, str]:
        """("write", text to type) | ("ask", "") | ("finish", "")."""
        target = self.persona.target_words
        reply = self.ask_model(TURN.format(noun=self.noun, text=text[-3000:], words=own_words,
                                            target=target, ask=self.assistant[1]))  # fmt: skip
        answer = parse_json(reply)
        if answer and answer.get("action") in ("write", "ask", "finish"):
            action = answer["action"]
            typed = as_typed_text(str(answer.get("text", ""))) if action == "write" else ""
            if action != "write" or typed:
                self.decided(True)
                return action, typed
        self.decided(False)
        if own_words >= target:
            return "finish", ""
        if self.rng.random() < self.persona.query_rate:
            return "ask", ""
        typed = as_typed_text(reply) or self.rng.choice(FILLERS)
        return "write", typed

    def choose(self, items: Sequence[dict]) -> int | None:
        """The position of the accepted suggestion, or None to dismiss the list."""
        listing = "\n".join(f"{i}. {item['trimmed']}" for i, item in enumerate(items, start=1))
        answer = parse_json(self.ask_model(CHOOSE.format(items=listing), max_tokens=20))
        if answer is not None and isinstance(answer.get("choice"), int) and \
                0 <= answer["choice"] <= len(items):  # fmt: skip
            self.decided(True)
            return answer["choice"] - 1 if answer["choice"] else None
        self.decided(False)
        if self.rng.random() < self.persona.accept_rate:
            return self.rng.randrange(len(items))
        return None

    def typo(self) -> bool:
        return self.rng.random() < self.persona.typo_rate

    def answer(self, question: str, kind: str, options: Sequence[str]) -> str:
        """A survey answer: a point 1-7, one of `options`, or free text."""
        if kind == "scale":
            how = f"Answer with one of: {', '.join(options)}."
        elif kind == "choice":
            how = f"Answer with exactly one of: {', '.join(options)}."
        else:
            how = "Answer in one or two sentences."
        reply = self.ask_model(SURVEY.format(noun=self.noun, question=question, how=how))
        answer = parse_json(reply)
        given = str(answer.get("answer", "")).strip() if answer else ""
        if kind in ("scale", "choice") and given in options:
            self.decided(True)
            return given
        if kind == "text" and given:
            self.decided(True)
            return given[:1000]
        self.decided(False)
        if kind == "scale":
            # A persona's habits do not tell its opinions: answers lean to the scale's upper half.
            return self.rng.choice(options[len(options) // 2 :])
        if kind == "choice":
            return self.rng.choice(list(options))
        return as_typed_text(reply) or "No comment."


PADDING = "I have not decided everything yet, but this is roughly what I have in mind."


def at_least_words(text: str, words: int) -> str:
    """`text` lengthened with a plain sentence until it has `words` words (a form's minimum)."""
    while len(text.split()) < words:
        text = f"{text} {PADDING}".strip()
    return text


FILLERS = ("I kept writing.", "Then I thought about it again.", "That was the main point.")
