"""Chat conversations (`conversations.jsonl`, schemas/chat-conversation.schema.json, or a
release's, schemas/chat-release.schema.json: the same with the writer's pseudonym): check them
and measure each one. Pure functions over parsed records; `study curate chat` is the CLI.

Per conversation (CollabLLM §6 and App. E; spec B2.4):
- turns: exchanges (an assistant reply to a user message), user and assistant messages;
- tokens: user and assistant tokens by `count_tokens`, a documented simple tokenizer: a token
  is a run of letters/digits/underscore or a single other non-space character (so "don't." is
  4 tokens). tiktoken is not used: its encodings are downloaded at first use, and studies must
  curate offline. Counts are comparable across conversations, not to any model's billing;
- time: interaction seconds (step 3 start -> final survey submitted, spec B3 [I]), task seconds
  (task start -> final survey), median seconds per exchange (a user message to its reply's
  next user message is not counted: from each user message to its reply);
- rating trajectory: the periodic ratings by the exchange they followed (e.g. 3:7 6:8 9:8), and
  the final interaction and document ratings when the final survey has them;
- CollabLLM's Table 1 for a simulated conversation (§4, spec B2.3): `bleu_char`, the paper's
  character BLEU-4 of the final document (the document pane at the finish, `document`) against
  the simulated user's goal document (study.paradigms.chat.metrics.bleu). Empty for a person's
  conversation, and for a simulated user whose goal was only its intent and notes
  (`goal_source` "notes": the users' model drafted no goal document, so there is none to score);
  `itr`, when `study curate chat` is given a judge: the judge's raw 1-3 interactivity score
  (study.paradigms.chat.metrics.itr), against the goal document when there is one.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jsonschema

from study.curation.metrics import count_words
from study.curation.schema import field_path
from study.paradigms.chat.metrics.bleu import bleu_nltk_char
from study.paradigms.chat.metrics.itr import itr
from study.paths import schemas_dir
from study.release import conversations as release_conversations

ARM_FORMAT = "study-chat-arm-1"  # a writing study's chat arm in a release (chat-release.schema.json)
_TOKEN = re.compile(r"\w+|[^\w\s]")
COLUMNS = (
    "session_id", "finished", "simulated", "assistant", "label", "document_type", "intent", "exchanges",
    "user_messages", "assistant_messages", "user_tokens", "assistant_tokens", "document_words",
    "interaction_seconds", "task_seconds", "median_reply_seconds", "rating_trajectory",
    "final_interaction_rating", "final_document_rating", "simulated_end_reason", "bleu_char",
)  # fmt: skip


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


@dataclass
class ChatFileReport:
    path: Path
    conversations: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _validator(record) -> jsonschema.Draft202012Validator:
    # A release's line (`study release build`, schemas/chat-release.schema.json) is an export's
    # record with the writer's pseudonym added: a reader of the release checks it by that schema.
    if isinstance(record, dict) and "worker_id" in record:
        return release_conversations.validator()
    return _export_validator()


@cache
def _export_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((schemas_dir() / "chat-conversation.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def read_conversations(path: Path) -> ChatFileReport:
    """Every line checked against the schema and for consistency; problems name the line."""
    report = ChatFileReport(path)
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                report.problems.append(f"{path} line {number}: not valid JSON ({exc.msg}, column {exc.colno})")
                continue
            if isinstance(record, dict) and record.get("format") == ARM_FORMAT:
                report.problems.append(
                    f"{path} line {number}: a writing study's chat arm ({ARM_FORMAT}: the panel "
                    "beside its editor log), not a chat study's conversation: it has no intent, "
                    "ratings or document to measure")
                continue
            errors = sorted(_validator(record).iter_errors(record), key=lambda e: list(e.absolute_path))
            for error in errors[:10]:
                where = field_path(error.absolute_path) if error.absolute_path else "record"
                report.problems.append(f"{path} line {number}: {where}: {error.message}")
            if errors:
                continue
            report.problems += [f"{path} line {number}: {p}" for p in consistency(record)]
            report.conversations.append(record)
    return report


def consistency(record: dict) -> list[str]:
    """What a schema cannot say: messages numbered 0.. and alternating user/assistant (a user
    message may end the list unanswered), ratings after exchanges that happened."""
    problems = []
    messages = record["messages"]
    for position, message in enumerate(messages):
        if message["seq"] != position:
            problems.append(f"messages[{position}].seq: expected {position}, got {message['seq']}")
            break
        expected = "user" if position % 2 == 0 else "assistant"
        if message["role"] != expected:
            problems.append(f"messages[{position}].role: expected {expected} (turns alternate), got {message['role']}")
            break
    done = exchanges(messages)
    for position, rating in enumerate(record["ratings"]):
        if rating["after_exchange"] > done:
            problems.append(
                f"ratings[{position}].after_exchange: {rating['after_exchange']} but the conversation has {done} exchanges"
            )
    return problems


def exchanges(messages: list[dict]) -> int:
    return sum(1 for m in messages if m["role"] == "assistant")


def conversation_stats(record: dict) -> dict:
    """One row of COLUMNS for a checked conversation."""
    messages = record["messages"]
    user = [m for m in messages if m["role"] == "user"]
    assistant = [m for m in messages if m["role"] == "assistant"]
    timing = record["timing"]
    replies = [
        b["timestamp"] - a["timestamp"]
        for a, b in zip(messages, messages[1:])
        if a["role"] == "user" and b["role"] == "assistant"
    ]
    trajectory = sorted(
        (r["after_exchange"], value)
        for r in record["ratings"]
        for value in r["answers"].values()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    )
    final = {}
    for answers in record["surveys"].values():
        final.update(answers)
    return {
        "session_id": record["session_id"],
        "finished": record["finished"],
        "simulated": bool(record.get("simulated")),  # written by `study simulate`
        "assistant": record["assistant"]["condition"],
        "label": record["assistant"]["label"],
        "document_type": record["document_type"],
        "intent": (record["intent"] or {}).get("key", ""),
        "exchanges": exchanges(messages),
        "user_messages": len(user),
        "assistant_messages": len(assistant),
        "user_tokens": sum(count_tokens(m["content"]) for m in user),
        "assistant_tokens": sum(count_tokens(m["content"]) for m in assistant),
        "document_words": count_words(record["document"]),
        "interaction_seconds": _span(timing.get("chat_started_at"), timing.get("completed_at")),
        "task_seconds": _span(timing.get("created_at"), timing.get("completed_at")),
        "median_reply_seconds": round(statistics.median(replies), 3) if replies else None,
        "rating_trajectory": " ".join(f"{k}:{v:g}" for k, v in trajectory),
        "final_interaction_rating": final.get("interaction_rating"),
        "final_document_rating": final.get("document_rating"),
        # Why a simulated conversation ended (study simulate); "" for a person's.
        "simulated_end_reason": (record.get("simulation") or {}).get("end_reason", ""),
        "bleu_char": goal_bleu(record),
    }


def goal_document(record: dict) -> str:
    """The simulated user's goal document, or "" (a person's conversation, or a goal that was
    only the intent and the notes: `goal_source` "notes")."""
    simulation = record.get("simulation") or {}
    goal = simulation.get("goal_document", "")
    return goal if goal.strip() and simulation.get("goal_source") != "notes" else ""


def goal_bleu(record: dict) -> float | None:
    """The final document's character BLEU against the simulated user's goal document (Table 1's
    Doc BLEU, in [0, 1]), or None without a goal document."""
    goal = goal_document(record)
    return bleu_nltk_char(goal, record["document"]) if goal else None


def judged_itr(record: dict, judge) -> int | None:
    """The judge's raw interactivity score (3, 2 or 1) of the conversation, or None when it has
    no exchange or the judge's answer stayed unreadable."""
    if not exchanges(record["messages"]):
        return None
    intent = record["intent"] or {}
    wanted = f"{intent.get('title', '')}: {intent.get('description', '')}" if intent else ""
    wanted = f"a {record['document_type'].replace('_', ' ')}" + (f", {wanted}" if wanted else "")
    return itr(record["messages"], wanted, judge, goal=goal_document(record)).score


def _span(start, end) -> float | None:
    return round(end - start, 3) if start is not None and end is not None else None
