"""Hierarchical Acceptance Rate: one suggestion judged against an ordered checklist.

MindCopilot §4.1: an ordered set of criteria {phi_1..phi_K}; a suggestion is accepted only if
it passes all of them, and "failure at any stage terminates the process". App. B.5 groups the
criteria in three layers: interaction constraints (rules 1-5), surface and format (6-11),
semantics and intent (12-17). The judge sees `<USER_INPUT>` (the preceding text),
`<REFERENCE>` (the true continuation in simulation, the writer's own continuation live) and
`<COMPLETION>` (the suggestion), and answers `\\boxed{{"accept", "triggered_condition",
"reasoning"}}` (App. H). The rule wording below is ours (the paper's prompt is not available).

Layer ablation (Table 1): "L1" = rules 1-5, "L1+L2" = 1-11, "full" = 1-17. When no included
rule fires in "L1" or "L1+L2", the suggestion is accepted (spec A3.1 reading (a): a pure filter).
A verdict the judge words unreadably three times is `invalid`: excluded from the denominator
and counted (spec A3.1, parse failures).
"""

from __future__ import annotations

from dataclasses import dataclass

from study.metrics.judges.boxed import JudgeParseError, parse_json_answer

VERSION = "har-v1"
LAYERS = {"L1": 5, "L1+L2": 11, "full": 17}

# (number, name, what triggers it, verdict when triggered)
RULES = (
    (1, "Start repetition", "the completion begins by repeating words the user input ends with", "reject"),
    (2, "Language mismatch", "the completion is in another language or script than the user input", "reject"),
    (3, "Semantic coherence", "user input followed by the completion is contradictory or incoherent", "reject"),
    (4, "Paired punctuation", "a quote or bracket opened in the user input is left unclosed where it should close", "reject"),
    (5, "Markup closure", "a Markdown fence, LaTeX environment or code block is opened and not closed", "reject"),
    (6, "Format mismatch", "the completion is a heading, table, list or plain text where the input calls for another", "reject"),
    (7, "Format consistency", "list type, indentation or heading level diverge from what input and reference set up", "reject"),
    (8, "Depth mismatch", "the completion's level of detail differs from the reference by more than about 30%", "reject"),
    (9, "Style mismatch", "the register (academic, conversational, authoritative) differs from the reference", "reject"),
    (10, "Sentence-type mismatch", "declarative, interrogative or imperative differs from the reference", "reject"),
    (11, "Perspective shift", "the grammatical person established in the input changes", "reject"),
    (12, "Early semantic overlap", "the beginning of the completion says what the reference says (more than 80% semantic similarity)", "accept"),
    (13, "Subset acceptance", "for a list or table, the completion is an in-order subset of the reference with no new items", "accept"),
    (14, "Topic divergence", "the completion is about a different topic than the input", "reject"),
    (15, "Key entities", "key entities of the reference (names, numbers, units, dates, datasets, terms) are missing or altered", "reject"),
    (16, "Intent mismatch", "the completion does another job than the reference (e.g. summary instead of argument)", "reject"),
    (17, "Comprehensive judgment", "none of the above fired: decide on style, meaning and entities together", "judge"),
)


@dataclass(frozen=True)
class HarItem:
    context: str
    reference: str
    completion: str


@dataclass(frozen=True)
class HarVerdict:
    accept: bool | None  # None: invalid (unreadable after retries)
    rule: str
    reasoning: str
    raw: str
    layers: str = "full"
    version: str = VERSION

    @property
    def invalid(self) -> bool:
        return self.accept is None


def messages(item: HarItem, layers: str = "full") -> list[dict]:
    last = LAYERS[layers]
    lines = [
        "TASK: HAR",
        f"LAYERS: {layers}",
        "You judge whether a writer would accept an AI continuation. Check the rules IN ORDER. "
        "Stop at the first rule that fires; its verdict is final.",
    ]
    for number, name, trigger, verdict in RULES[:last]:
        outcome = "decide accept or reject" if verdict == "judge" else verdict
        lines.append(f"{number}. {name}: if {trigger} -> {outcome}.")
    if last < 17:
        lines.append("If none of these rules fires -> accept.")
    lines += [
        f'<USER_INPUT>: "{item.context}"',
        f'<REFERENCE>: "{item.reference}"',
        f'<COMPLETION>: "{item.completion}"',
        'Answer only with \\boxed{{"accept": true|false, "triggered_condition": "<number. name>", '
        '"reasoning": "<the rule and why>"}}',
    ]
    return [{"role": "user", "content": "\n".join(lines)}]


def read_verdict(answer: str, layers: str = "full") -> HarVerdict:
    data = parse_json_answer(answer)
    accept = data.get("accept")
    if isinstance(accept, str) and accept.lower() in ("true", "false"):
        accept = accept.lower() == "true"
    if not isinstance(accept, bool):
        raise JudgeParseError(f"'accept' is {accept!r}, not true or false")
    return HarVerdict(accept, str(data.get("triggered_condition", "")), str(data.get("reasoning", "")), answer, layers)


def har(item: HarItem, judge, layers: str = "full", retries: int = 3) -> HarVerdict:
    """The judge's verdict on one suggestion; `judge.ask(version, messages) -> str`."""
    asked = messages(item, layers)
    answer = ""
    for attempt in range(retries):
        version = VERSION if attempt == 0 else f"{VERSION}#retry{attempt}"
        answer = judge.ask(version, asked)
        try:
            return read_verdict(answer, layers)
        except JudgeParseError:
            continue
    return HarVerdict(None, "", "unreadable answer", answer, layers)
