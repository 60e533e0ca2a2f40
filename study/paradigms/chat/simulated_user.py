"""A simulated chat user (CollabLLM's user simulator, §3.1.2 and App. C.1; spec B4.2): the
users' model role-plays a participant who creates a document with a chat assistant.

As in the paper, the user has memory and a goal: every turn the model reads the whole
conversation so far (up to `history_chars` from its end), the intent and the **goal document**
(the document this user would be satisfied with: a researcher's file for the intent, or one the
model drafted from the intent and the user's pre-writing notes), and answers
{"current_answer", "thought", "response"}. A response holding the termination marker ends the
chat (`turn` says so); the participant (study.paradigms.chat.simulate) stops at the turn limit otherwise.
A reply that is not such JSON still becomes the message when it has text; an empty one falls
back to a seeded follow-up request, and a user on that fallback ends as soon as the study
allows (its habit, recorded as such). Whether a reply goes into the document pane and whether
the user then edits it are the persona's habits too (accept_rate, query_rate).
"""

from __future__ import annotations

from dataclasses import dataclass

from study.simulate.writer import SimulatedWriter, as_typed_text, at_least_words, parse_json

SYSTEM = (
    "You are role-playing a person taking part in a study where you create a {noun} together "
    "with an AI chat assistant; you keep the document in a pane next to the chat. Persona: "
    "{persona}. Your intent: {intent}. You are the human USER, not an assistant: keep your "
    "personality consistent. Always answer with one JSON object and nothing else."
)
TURN = (
    "Below are the conversation so far, and your goal document: the {noun} you would be happy "
    "to end up with. Use the goal only to know what you want (length, structure, tone, "
    "content); never copy it into the chat.\n"
    "<conversation>\n{history}\n</conversation>\n"
    "<goal document>\n{goal}\n</goal document>\n"
    "How to behave: minimise your effort (early on, ask briefly and vaguely rather than spelling "
    "out everything); answer the assistant's questions; point out where its draft falls short of "
    "what you want; mention your preferences; keep to your goal, no small talk; now and then make "
    "the small slips a real user makes (a typo, an unclear request).\n"
    "{where}\n"
    "When the assistant's document is what you want, or it cannot help you further, your "
    'response is exactly "{marker}". Answer with JSON {{"current_answer": "<the assistant\'s '
    'current document, in a few words>", "thought": "<what you think as this user: satisfied? '
    'what is missing? did it ask you something?>", "response": "<your next message, one to '
    'three sentences>"}}.'
)
FIRST = "Start the conversation: nobody has written yet, so make your first request."
LAST_REPLY = "This is exchange {number}. The assistant's last reply:\n<<<\n{reply}\n>>>"
KEEP_GOING = (
    " You wanted to end the chat, but the study asks for at least {needed} exchanges and this "
    "is exchange {number}: do not end yet; ask for something that brings the document closer to "
    "your goal."
)
GOAL = (
    "Before the chat, picture the {noun} you would be satisfied with for your intent. Your "
    "notes:\n{notes}\nWrite that {noun} in {low} to {high} words. Answer with JSON "
    '{{"document": "<the whole {noun}>"}}.'
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
MAX_MESSAGE_TOKENS = 700  # the JSON carries a summary and a thought besides the message


@dataclass
class Turn:
    """What the user does next: send `message`, or end the chat (`ends`)."""

    message: str
    ends: bool
    thought: str
    by_model: bool
    wished_to_end: bool = False  # sent the marker before the study allowed ending


def transcript(messages: list[dict], limit: int) -> str:
    """The conversation as the user reads it, cut to its last `limit` characters."""
    text = "\n\n".join(f"{m['role'].upper()}: {m['content']}" for m in messages)
    return text if len(text) <= limit else "[...]" + text[-limit:]


class ChatUser(SimulatedWriter):
    goal: str = ""
    goal_source: str = ""
    ending: str = ""  # how the chat ended, once it has: the final survey's answers know it

    @property
    def system(self) -> str:
        system = SYSTEM.format(noun=self.noun, persona=self.persona.description, intent=self.intent)
        return f"{system} {self.ending}" if self.ending else system

    def hold_goal(self, document: str | None, notes: list[str], target: tuple[int, int]) -> None:
        """The goal document: the researcher's file when given, else one the model drafts from
        the intent and the notes, else (a model that gave none) the intent and the notes."""
        if document:
            self.goal, self.goal_source = document.strip(), "file"
            return
        reply = self.ask_model(GOAL.format(noun=self.noun, notes="\n".join(f"- {n}" for n in notes),
                                            low=target[0], high=target[1]), max_tokens=1200)  # fmt: skip
        answer = parse_json(reply)
        drafted = str(answer.get("document", "")).strip() if answer else ""
        # Not counted as a decision: the goal's source is recorded instead (simulated_conversations).
        if drafted:
            self.goal, self.goal_source = drafted, "drafted"
        else:
            self.goal, self.goal_source = "\n".join([self.intent, *notes]), "notes"

    def turn(self, messages: list[dict], number: int, *, needed: int, marker: str, history_chars: int,
             limit: int) -> Turn:  # fmt: skip
        """The user's message for exchange `number` (1-based) given the whole conversation so far,
        or the end of the chat. Before `needed` exchanges the user may not end: a marker then is
        met by one more request to carry on."""
        where = FIRST if not messages else LAST_REPLY.format(
            number=number, reply=next(m["content"] for m in reversed(messages) if m["role"] == "assistant")[-3000:]
        )  # fmt: skip
        prompt = TURN.format(noun=self.noun, history=transcript(messages, history_chars) or "(empty)",
                             goal=self.goal, where=where, marker=marker)  # fmt: skip
        turn = self._read(self.ask_model(prompt, max_tokens=MAX_MESSAGE_TOKENS), marker)
        if turn.ends and number <= needed:
            again = self._read(self.ask_model(prompt + KEEP_GOING.format(needed=needed, number=number),
                                               max_tokens=MAX_MESSAGE_TOKENS), marker)  # fmt: skip
            turn = Turn(again.message if not again.ends else "", False, turn.thought,
                        again.by_model and not again.ends, wished_to_end=True)  # fmt: skip
        self.decided(turn.by_model)
        if turn.ends:
            return turn
        text = turn.message
        if not text:
            text = (f"Please help me write this: {self.intent}." if not messages
                    else self.rng.choice(FOLLOW_UPS))  # fmt: skip
        return Turn(text[:limit], False, turn.thought, turn.by_model, turn.wished_to_end)

    def _read(self, reply: str, marker: str) -> Turn:
        answer = parse_json(reply)
        if answer is not None:
            # "message" is the earlier one-key form of the same answer.
            said = str(answer.get("response", answer.get("message", ""))).strip()
            thought = str(answer.get("thought", ""))[:2000]
            if marker in said:
                return Turn("", True, thought, True)
            text = as_typed_text(said)
            if text:
                return Turn(text, False, thought, True)
        if marker in (reply or ""):
            return Turn("", True, "", False)
        return Turn(as_typed_text(reply) if answer is None else "", False, "", False)

    def prewrite(self, question: str, words: int) -> str:
        reply = self.ask_model(PREWRITE.format(question=question, words=words))
        answer = parse_json(reply)
        given = " ".join(str(answer.get("answer", "")).split()) if answer else ""
        self.decided(bool(given))
        return at_least_words(given or as_typed_text(reply), words)[:1000]

    def inserts(self) -> bool:
        """Whether the user copies the assistant's reply into the document pane."""
        return self.rng.random() < self.persona.accept_rate

    def edits(self) -> bool:
        """Whether the user then types a line of their own into the document."""
        return self.rng.random() < max(0.2, self.persona.query_rate / 2)
