"""A deterministic judge: rule-based answers to the HAR, KED and ITR prompts, for tests and demos.

It reads the same prompts the LLM judges get (study.paradigms.proactive.metrics.har / .ked,
study.paradigms.chat.metrics.itr) and answers
in the same wire format, so `study lm serve --backend judge` serves it over real HTTP and the
OpenAI client, cache and parsers run unchanged. Its numbers are NOT the paper's metrics:

HAR, rule by rule within the asked layers: 1 start repetition (the completion starts with the
input's last 3 to 8 words, or its first 5 words are words of the input), 2 language (share of non-ASCII letters differs by more than 0.5),
4 paired punctuation and 5 markup closure (an opener left open after input + completion,
when the input itself had it closed), 12 early overlap (the completion's start is at least 80%
similar to the reference's start: accept), 14 topic divergence (no content word shared with
input or reference: reject), 17 accept when the completion and reference share at least half
their content words (token set ratio >= 50).
KED (the spec's `ked_approx`, R3): word-level alignment; numbers, units and dates are complex
entities, other capitalised words simple entities, hedges and boosters claim strength,
connectives relations, conditionals constraints; longer insertions and deletions are
propositions; punctuation and case alone are surface edits; the rest lexical.
ITR (CollabLLM's interactivity, 3/2/1): the share of the assistant's replies that ask the user
something (hold a "?"): at least half -> 3, some -> 2, none (or no reply) -> 1. It counts
questions only; it reads neither the intent, the goal nor whether the writing follows them.
"""

from __future__ import annotations

import json
import re

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

_NAMES = "USER_INPUT|REFERENCE|COMPLETION|SUGGESTION|FINAL|CONTEXT|INTENT|GOAL|CONVERSATION"
# A field's text may hold newlines (the prompt's, a writer's paragraphs): it runs to the quote
# that ends its line before the next field or the closing "Answer only" instruction.
_FIELD = re.compile(rf'^<({_NAMES})>: "(.*?)"$(?=\n<(?:{_NAMES})>: "|\nAnswer only|\Z)', re.M | re.S)
_WORD = re.compile(r"\w+|[^\w\s]")
_STOP = frozenset(
    "a an the and or but of to in on at for with by from is are was were be been it its this that "
    "he she they we you i his her their our my your as not no so if then than there here".split()
)
_NUMBER = re.compile(r"^\d|^\d+(\.\d+)?$|^(K|kg|km|mg|ml|cm|mm|Hz|kHz|MHz|GHz|%|°C|°F)$")
_HEDGES = frozenset(
    "may might could possibly perhaps likely unlikely probably certainly clearly definitely must "
    "competitive state-of-the-art best always never significantly slightly".split()
)
_RELATIONS = frozenset("because therefore thus hence so however although though but while causes caused enables leads due".split())
_CONSTRAINTS = frozenset("if unless when only provided except whenever until".split())


def _fields(prompt: str) -> dict[str, str]:
    return {match.group(1): match.group(2) for match in _FIELD.finditer(prompt)}


def _content(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[^\W\d_]{3,}", text)} - _STOP


def _non_ascii_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum(1 for c in letters if ord(c) > 127) / len(letters) if letters else 0.0


def _unclosed(text: str) -> bool:
    pairs = (("(", ")"), ("[", "]"), ("{", "}"))
    return any(text.count(a) > text.count(b) for a, b in pairs) or text.count('"') % 2 == 1


def _unclosed_markup(text: str) -> bool:
    return text.count("```") % 2 == 1 or len(re.findall(r"\\begin\{", text)) > len(re.findall(r"\\end\{", text))


def _verdict(accept: bool, rule: str, why: str) -> str:
    return "\\boxed{" + json.dumps({"accept": accept, "triggered_condition": rule, "reasoning": f"{rule}: {why}"}) + "}"


def judge_har(context: str, reference: str, completion: str, last_rule: int) -> str:
    body = completion.strip()
    said, start_words = context.split(), body.split()
    opening = " ".join(start_words[:5]).lower()
    if any(len(said) >= k and start_words[:k] == said[-k:] for k in range(3, 9)) or (
        len(start_words) >= 5 and opening in " ".join(said).lower()
    ):
        return _verdict(False, "1. Start repetition", "the completion repeats the input's last words")
    if abs(_non_ascii_share(context) - _non_ascii_share(completion)) > 0.5:
        return _verdict(False, "2. Language mismatch", "the scripts differ")
    if last_rule >= 4 and not _unclosed(context[-300:]) and _unclosed(context[-300:] + completion):
        return _verdict(False, "4. Paired punctuation", "an opened quote or bracket stays open")
    if last_rule >= 5 and not _unclosed_markup(context) and _unclosed_markup(context + completion):
        return _verdict(False, "5. Markup closure", "a fence or environment stays open")
    if last_rule < 12:
        return _verdict(True, "none", "no included rule fired")
    start = min(len(body), len(reference.strip()), 60)
    if start and fuzz.ratio(body[:start].lower(), reference.strip()[:start].lower()) >= 80:
        return _verdict(True, "12. Early semantic overlap", "the start matches the reference")
    if not (_content(completion) & (_content(context[-600:]) | _content(reference))):
        return _verdict(False, "14. Topic divergence", "no content word is shared")
    accept = fuzz.token_set_ratio(" ".join(sorted(_content(completion))), " ".join(sorted(_content(reference)))) >= 50
    return _verdict(accept, "17. Comprehensive judgment", "content overlap with the reference")


def _categories(before: list[str], after: list[str], op: str) -> list[str]:
    changed = before + after
    words = [w for w in changed if re.match(r"\w", w)]
    lowered = {w.lower() for w in words}
    cats = []
    if any(_NUMBER.match(w) for w in words):
        cats.append("complex_entity")
    elif any(w[:1].isupper() for w in words):
        cats.append("simple_entity")
    if lowered & _HEDGES:
        cats.append("claim_strength")
    if lowered & _RELATIONS:
        cats.append("relation")
    if op == "insert" and lowered & _CONSTRAINTS:
        cats.append("constraint")
    if not cats:
        if not words or [w.lower() for w in before] == [w.lower() for w in after]:
            cats.append("surface")
        elif op == "insert" and len(words) >= 3:
            cats.append("proposition_addition")
        elif op == "delete" and len(words) >= 3:
            cats.append("proposition_deletion")
        else:
            cats.append("lexical")
    return cats


def judge_ked(suggestion: str, final: str) -> str:
    a, b = _WORD.findall(suggestion), _WORD.findall(final)
    edits = []
    for tag, i1, i2, j1, j2 in Levenshtein.opcodes(a, b).as_list():
        if tag == "equal":
            continue
        op = {"replace": "substitute", "insert": "insert", "delete": "delete"}[tag]
        before, after = a[i1:i2], b[j1:j2]
        edits.append({"op": op, "before": " ".join(before), "after": " ".join(after),
                      "categories": _categories(before, after, op)})
    # Adjacent token edits are one edit to a person: merge runs separated by nothing.
    return "\\boxed{" + json.dumps({"edits": edits, "total": len(edits)}) + "}"


# A message of the ITR prompt's transcript starts a line with its role (study.paradigms.chat.metrics.itr).
_TURN = re.compile(r"^(USER|ASSISTANT): ", re.M)


def judge_itr(conversation: str) -> str:
    parts = _TURN.split(conversation)
    replies = [text for role, text in zip(parts[1::2], parts[2::2]) if role == "ASSISTANT"]
    asking = sum(1 for text in replies if "?" in text)
    score = 3 if replies and asking * 2 >= len(replies) else 2 if asking else 1
    thought = f"{asking} of {len(replies)} assistant replies ask the user a question"
    return json.dumps({"interactivity": {"thought": thought, "score": score}})


def answer(prompt: str) -> str:
    """The judge's answer to a HAR, KED or ITR prompt, in the LLM judges' wire format."""
    fields = _fields(prompt)
    if "TASK: HAR" in prompt:
        layers = re.search(r"^LAYERS: (\S+)", prompt, re.M)
        last = {"L1": 5, "L1+L2": 11}.get(layers.group(1) if layers else "full", 17)
        return judge_har(fields.get("USER_INPUT", ""), fields.get("REFERENCE", ""), fields.get("COMPLETION", ""), last)
    if "TASK: KED" in prompt:
        return judge_ked(fields.get("SUGGESTION", ""), fields.get("FINAL", ""))
    if "TASK: ITR" in prompt:
        return judge_itr(fields.get("CONVERSATION", ""))
    return "I can only judge HAR, KED and ITR prompts."


class DeterministicJudge:
    """The same answers in-process, with OpenAIJudge's `ask` interface (no HTTP)."""

    calls = 0

    def ask(self, version: str, messages: list[dict]) -> str:
        self.calls += 1
        return answer("\n".join(m["content"] for m in messages))
