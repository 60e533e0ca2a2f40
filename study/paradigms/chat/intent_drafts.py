"""Draft an intent bank with a model, for the researcher to edit (spec C6.3, G: "LLM-generated
offline, build time only"). CollabLLM's bank (about 50 intents per document type, App. E) is not
published; the toolkit ships one written by hand, and this drafts another for a new study.

One intent takes three small requests to any OpenAI-compatible endpoint (study.model_client):
a title (told the titles so far, so it picks a new one), a one-sentence description, and ten
pre-writing questions as ten choices of one request (`n = 10`). Small requests suit small local
models, and every answer is cut to its first line or sentence, so an unhelpful model still
yields a well-formed file: a draft, marked as such in its header, never a finished bank.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from study import model_client, out_file
from study.paradigms.chat.config import DocumentType

QUESTIONS = 10  # App. E: ten topic-specific pre-writing questions per intent
MAX_TITLE_WORDS = 6
# A model that keeps repeating itself gets this many tries at a new title before a number is added.
TITLE_TRIES = 3

TITLE_PROMPT = (
    "Suggest one short title (two to five words) for a {label} that someone might ask an AI "
    "assistant to help them write. Titles already taken: {taken}. Answer with the new title only."
)
DESCRIPTION_PROMPT = (
    "In one sentence, describe a {label} titled \"{title}\" as a writing task, e.g. "
    "\"A personal blog post about training for a first marathon.\" Answer with the sentence only."
)
QUESTION_PROMPT = (
    "Someone is about to write a {label} titled \"{title}\" ({description}). Ask them one short "
    "question that helps them plan it (its audience, content, structure or tone). Answer with "
    "the question only."
)


class DraftError(ValueError):
    """The endpoint could not be used; the message says what to check."""


@dataclass(frozen=True)
class Drafted:
    intents: list[dict]
    answered_model: str  # as the endpoint named it (issue 20): it goes in the file's header


def draft(document_type: DocumentType, count: int, *, endpoint: str, model: str, api_key: str = "no-key",
          timeout: float = 120.0, first_index: int = 0) -> Drafted:
    """`count` intents of `document_type`, numbered from `first_index`."""
    client = model_client.client(endpoint, api_key, timeout, 2)
    label = document_type.label.lower()
    answered: set[str] = set()

    def ask(prompt: str, n: int = 1, seed: int | None = None) -> list[str]:
        try:
            response = client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": prompt}], n=n, max_tokens=60,
                temperature=1.0, seed=seed,
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - one sentence for the researcher instead
            # Redacted (before it is shortened): an endpoint can echo the key in its error.
            said = model_client.redact(str(exc), api_key)[:200]
            raise DraftError(f"the model endpoint at {model_client.safe_url(endpoint)} failed: "
                             f"{type(exc).__name__}: {said}") from None  # fmt: skip
        if found := model_client.answered_model(response):
            answered.add(found)
        return [(choice.message.content or "") for choice in model_client.choices(response)]

    intents: list[dict] = []
    taken: list[str] = []
    for number in range(count):
        title = ""
        for attempt in range(TITLE_TRIES):
            shown = ", ".join(taken[-20:]) or "none"
            title = clean_title(ask(TITLE_PROMPT.format(label=label, taken=shown), seed=number * 31 + attempt)[0])
            if title and title.lower() not in {t.lower() for t in taken}:
                break
        if not title or title.lower() in {t.lower() for t in taken}:
            title = f"{title or document_type.label} {number + 1}"
        taken.append(title)
        description = first_sentence(ask(DESCRIPTION_PROMPT.format(label=label, title=title), seed=number)[0])
        description = description or f"A {label} titled \"{title}\"."
        asked = ask(QUESTION_PROMPT.format(label=label, title=title, description=description),
                    n=QUESTIONS, seed=number)  # fmt: skip
        questions = list(dict.fromkeys(q for q in (as_question(a) for a in asked) if q))
        while len(questions) < QUESTIONS:  # a model that answered the same question twice
            questions.append(f"What else should the reader of your {label} know? ({len(questions) + 1})")
        intents.append({"type": document_type.name, "index": first_index + number, "title": title,
                        "description": description, "questions": questions[:QUESTIONS]})  # fmt: skip
    return Drafted(intents, ", ".join(sorted(answered)) or "unknown")


def clean_title(text: str) -> str:
    line = next((part for part in text.strip().splitlines() if part.strip()), "")
    line = re.sub(r"^(title\s*:\s*|[-*#\d.\s]+)", "", line.strip(), flags=re.IGNORECASE)
    words = line.strip(" \"'*.").split()[:MAX_TITLE_WORDS]
    return " ".join(words).rstrip(",;:.")


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return (match.group(1) if match else text)[:300].strip()


def as_question(text: str) -> str:
    """The answer's first question, else its first sentence as the model wrote it (the
    researcher sees at once which ones to rewrite)."""
    text = " ".join(text.split())
    match = re.search(r"[^.!?]*\?", text)
    return match.group(0).strip()[:200] if match else first_sentence(text)[:200]


def write_bank(path: Path, drafted: Drafted, document_type: DocumentType, *, endpoint: str, model: str) -> None:
    """The bank as TOML, whole or not at all (a temporary file renamed), checked by reading it back."""
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# Intent bank: {document_type.label} - a DRAFT by a model, to be read and edited before use.",
        f"# Drafted {when} by `study chat draft-intents`: model \"{model}\" asked at {model_client.safe_url(endpoint)},",
        f"# answered by \"{drafted.answered_model}\" (as the endpoint named it).",
        "# Each [[intents]]: type, index (unique within the type), title, one-sentence description and",
        f"# {QUESTIONS} pre-writing questions (CollabLLM App. E). Use it with [chat] intent_bank = \"<this folder>\".",
    ]
    for intent in drafted.intents:
        lines += ["", "[[intents]]", f"type = {_string(intent['type'])}", f"index = {intent['index']}",
                  f"title = {_string(intent['title'])}", f"description = {_string(intent['description'])}",
                  "questions = ["] + [f"  {_string(q)}," for q in intent["questions"]] + ["]"]  # fmt: skip
    text = "\n".join(lines) + "\n"
    tomllib.loads(text)  # a bug here must never leave an unreadable bank behind
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = out_file.partial_for(path, path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    out_file.place(partial, path)


def _string(value: str) -> str:
    # A TOML basic string: JSON's escapes are valid TOML escapes.
    return json.dumps(value, ensure_ascii=False)
