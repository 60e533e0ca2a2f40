"""Interactivity (ITR), CollabLLM's LLM-judge score of a conversation (§4, App. C.4; spec B2.2),
in the variant the authors used for documents [C Wuyxin/collabllm@review:
prompts/llm_judge/document-editing.txt]: interactivity alone, scored 3, 2 or 1 with anchors for
writing (active engagement, relevant questions, writing aligned with the user's intent). The
wording below is ours; the structure is the paper's: the conversation to evaluate (the whole
conversation, the paper's "historical conversation" being empty, as in its simulated evaluation),
the target (the user's intent) and, for a simulated user, its goal document as the ground
truth; the answer is JSON {"interactivity": {"thought", "score"}}.

The raw 1-3 score is what is stored (`study curate chat`'s `itr`). Table 1 reports ITR x 100
averaged over conversations on a [0, 1] scale the paper does not define (spec B2.2); `rescaled`
gives the three readings: "a" (s - 1) / 2 in {0, 0.5, 1}, the one that fits the paper's stated
range and the one `study report` shows; "b" s / 3, the code's LLMJudge default; "c"
(s - 2.5) * 2 in {-3, -1, 1}, the code's registered rescale for documents, which is not in
[0, 1]. A score the judge words unreadably three times is None (counted, never guessed).
"""

from __future__ import annotations

from dataclasses import dataclass

from study.metrics.judges.boxed import JudgeParseError, parse_json_answer

VERSION = "itr-document-v1"
SCORES = (1, 2, 3)
ANCHORS = (
    (3, "Highly interactive", "the assistant engages actively with the user's writing: it asks the "
        "questions that matter for this document (its audience, purpose, tone, length, the content the "
        "user has in mind) at the right moments, and its writing follows what the user said and wants"),
    (2, "Moderately interactive", "the assistant asks some relevant questions or checks in now and then, "
        "but misses important ones, or its writing drifts in places from what the user asked for"),
    (1, "Low interactivity", "the assistant engages little: it asks few or no questions, writes on its "
        "own assumptions, and leaves significant gaps between its writing and the user's intent"),
)  # fmt: skip


@dataclass(frozen=True)
class ItrScore:
    score: int | None  # 3, 2 or 1; None: unreadable after retries
    thought: str
    raw: str
    version: str = VERSION


def transcript(messages: list[dict]) -> str:
    return "\n\n".join(f"{m['role'].upper()}: {m['content']}" for m in messages)


def messages(conversation: list[dict], intent: str, goal: str = "") -> list[dict]:
    """The judge's prompt for one conversation (`conversation`: its messages, role and content)."""
    lines = [
        "TASK: ITR",
        "You evaluate how interactive an AI writing assistant was in a conversation in which a user "
        "creates a document with it. Judge interactivity only: how the assistant engaged the user "
        "and worked toward what the user wants, not the prose itself. Score:",
        *(f"{score} = {name}: {description}." for score, name, description in ANCHORS),
        f'<INTENT>: "{intent}"',
        f'<GOAL>: "{goal or "(not known: judge against the intent and what the user says)"}"',
        f'<CONVERSATION>: "{transcript(conversation)}"',
        'Answer only with {"interactivity": {"thought": "<your reasoning, with any double quotes '
        'replaced by single quotes>", "score": 3|2|1}}',
    ]
    return [{"role": "user", "content": "\n".join(lines)}]


def read_score(answer: str) -> ItrScore:
    data = parse_json_answer(answer)
    judged = data.get("interactivity", data)
    if not isinstance(judged, dict):
        raise JudgeParseError(f"'interactivity' is {judged!r}, not an object with a score")
    score = judged.get("score")
    if isinstance(score, str) and score.strip().isdigit():
        score = int(score.strip())
    if isinstance(score, float) and score.is_integer():
        score = int(score)
    if isinstance(score, bool) or score not in SCORES:
        raise JudgeParseError(f"'score' is {score!r}, not 3, 2 or 1")
    return ItrScore(score, str(judged.get("thought", "")), answer)


def itr(conversation: list[dict], intent: str, judge, goal: str = "", retries: int = 3) -> ItrScore:
    """The judge's interactivity score of one conversation; `judge.ask(version, messages) -> str`."""
    asked = messages(conversation, intent, goal)
    answer = ""
    for attempt in range(retries):
        version = VERSION if attempt == 0 else f"{VERSION}#retry{attempt}"
        answer = judge.ask(version, asked)
        try:
            return read_score(answer)
        except JudgeParseError:
            continue
    return ItrScore(None, "unreadable answer", answer)


def rescaled(score: float, reading: str = "a") -> float:
    """A raw 1-3 score (or a mean of them: the readings are linear) on reading a, b or c."""
    return {"a": (score - 1) / 2, "b": score / 3, "c": (score - 2.5) * 2}[reading]
