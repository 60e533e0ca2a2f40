"""A simulated chat user (CollabLLM's user simulator, spec B4.2): the LLM writer model
role-plays a participant who creates a document with a chat assistant.

Each turn the model sees the persona, the intent and the assistant's last reply and answers
{"message": ...} (what the user sends next). A reply that is not such JSON still becomes the
message when it has text; otherwise, as on the writing path, the persona's seeded habits decide
(a follow-up request from a short list). Whether a reply goes into the document pane and
whether the user then edits it are the persona's habits too (accept_rate, typo_rate).
"""

from __future__ import annotations

from study.simulate.writer import SimulatedWriter, as_typed_text, parse_json

SYSTEM = (
    "You are role-playing a person taking part in a study where you create a {noun} together "
    "with an AI chat assistant; you keep the document in a pane next to the chat. Persona: "
    "{persona}. Your intent: {intent}. Stay in character as this human user (not an "
    "assistant): keep your personality consistent, minimise your effort, stay focused on "
    "your goal, and occasionally make the small mistakes this person would make. Always answer "
    "with one JSON object and nothing else."
)
FIRST = (
    "Start the conversation: tell the assistant what you need. Answer with JSON "
    '{{"message": "<your message, one to three sentences>"}}.'
)
TURN = (
    "The assistant's last reply:\n<<<\n{reply}\n>>>\nThis is exchange {number}. What do you send "
    'next? Answer with JSON {{"message": "<your message, one to three sentences>"}}.'
)
PREWRITE = (
    "Before the chat you jot down your thoughts. Question: {question}\nAnswer with JSON "
    '{{"answer": "<at least {words} words>"}}.'
)
FOLLOW_UPS = (
    "Can you make it a bit shorter and clearer?",
    "Please add one concrete example to the second part.",
    "That is close, but the tone should be warmer and more personal.",
    "Could you restructure it with a short opening and a clear ending?",
    "Good. Now please check the wording and fix anything awkward.",
)
PADDING = "I have not decided everything yet, but this is roughly what I have in mind."


def at_least_words(text: str, words: int) -> str:
    """`text` lengthened with a plain sentence until it has `words` words (a form's minimum)."""
    while len(text.split()) < words:
        text = f"{text} {PADDING}".strip()
    return text


class ChatUser(SimulatedWriter):
    @property
    def system(self) -> str:
        return SYSTEM.format(noun=self.noun, persona=self.persona.description, intent=self.intent)

    def message(self, last_reply: str | None, number: int, limit: int) -> str:
        """The user's next chat message (exchange `number`, 1-based), at most `limit` characters."""
        prompt = FIRST if last_reply is None else TURN.format(reply=last_reply[-3000:], number=number)
        reply = self._ask_model(prompt)
        answer = parse_json(reply)
        text = as_typed_text(str(answer.get("message", ""))) if answer else ""
        self._decided(bool(text))
        if not text:
            text = as_typed_text(reply) if answer is None else ""
        if not text:
            text = (f"Please help me write this: {self.intent}." if last_reply is None
                    else self.rng.choice(FOLLOW_UPS))  # fmt: skip
        return text[:limit]

    def prewrite(self, question: str, words: int) -> str:
        reply = self._ask_model(PREWRITE.format(question=question, words=words))
        answer = parse_json(reply)
        given = " ".join(str(answer.get("answer", "")).split()) if answer else ""
        self._decided(bool(given))
        return at_least_words(given or as_typed_text(reply), words)[:1000]

    def inserts(self) -> bool:
        """Whether the user copies the assistant's reply into the document pane."""
        return self.rng.random() < self.persona.accept_rate

    def edits(self) -> bool:
        """Whether the user then types a line of their own into the document."""
        return self.rng.random() < max(0.2, self.persona.query_rate / 2)
