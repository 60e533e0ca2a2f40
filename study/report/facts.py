"""What the report needs from one session's log, computed once (events are then let go, so a
report over the full release does not hold 2.7 million events in memory)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace

from study import control_arm, paradigms
from study.curation.formats import Session
from study.curation.metrics import distinct_n
from study.curation.replay import replay
from study.curation.stats import condition_of, session_stats
from study.report.entities import SessionEntities, session_entities
from study.report.grammar import LanguageToolError, errors_per_word
from study.report.sentences import authored_sentences


@dataclass
class SessionFacts:
    session_id: str
    condition: str
    prompt_code: str
    genre: str
    # high / low (the paper's two decoding settings of the genre), or T=<t> FP=<fp>, or unknown:
    # from the metadata's temperature and frequency penalty, else the log's (constant in it).
    randomness: str
    writer: str
    simulated: bool
    stats: dict
    # False in a control arm (metadata paradigm "none", study.control_arm): no suggestion
    # figure applies to the session.
    assistant: bool = True
    # False where the session's paradigm has no Tab list (a chat arm: an assistant beside the
    # editor, its conversation in a file of its own): its suggestion counts are not applicable,
    # empty, as `study export`'s metadata.csv leaves them (study.export.coauthor).
    tab_list: bool = True
    sentence_distinct: list[tuple[str, float]] = field(default_factory=list)
    suggestion_distinct: list[float] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)  # suggestion-get -> suggestion-open
    queries: int = 0  # suggestion-get events
    unanswered: int = 0  # gets followed by suggestion-fail or by no list at all
    entities: SessionEntities | None = None
    grammar: list[tuple[str, float]] | None = None  # (author class, errors per word) per sentence
    grammar_error: str = ""  # why LanguageTool could not check this session


def suggestion_timing(events: Sequence[Mapping]) -> tuple[int, int, list[float]]:
    """(queries, unanswered, latencies in ms) as the writer lived them, from the log alone.

    Not every get is answered (shared data README), and a writer may press Tab again before the
    answer: CoAuthor then logged a get per press and opened each list that came, in order (the
    sample's 2f923aba events 68-72), and our editor does the same, dropping an older press's
    list that comes after a newer one's. So the gets pressed one after another, and the lists
    (`suggestion-open`) and failures (`suggestion-fail`) that follow them before the next get,
    are taken together: the last gets are answered by those results in order, and the earlier
    ones, one per missing result, got no list (a get pressed again 3-150 s after one that was
    never answered, 40 times in the sample, leaves that one unanswered).
    """
    queries = unanswered = 0
    latencies: list[float] = []
    asked: list[float] = []  # the gets of the run, their times
    results: list[tuple[str, float]] = []  # what came after them: ("open" | "fail", time)

    def settle() -> None:
        nonlocal unanswered
        answered = asked[len(asked) - len(results):] if results else []
        unanswered += len(asked) - len(answered)
        for (kind, at), pressed in zip(results, answered):
            if kind == "open":
                latencies.append(at - pressed)
            else:
                unanswered += 1
        asked.clear()
        results.clear()

    for event in events:
        name = event.get("eventName")
        at = float(event.get("eventTimestamp") or 0)
        if name == "suggestion-get":
            if results:
                settle()
            queries += 1
            asked.append(at)
        elif name in ("suggestion-open", "suggestion-fail") and len(results) < len(asked):
            results.append(("open" if name == "suggestion-open" else "fail", at))
    settle()
    return queries, unanswered, latencies


def _randomness(meta: Mapping, events: Sequence[Mapping]) -> str:
    if meta.get("temperature") not in (None, ""):
        return condition_of(meta.get("temperature"), meta.get("frequency_penalty"))
    for event in events[:50]:  # the later interface may leave the first event's values empty
        if event.get("currentTemperature") not in (None, ""):
            return condition_of(event["currentTemperature"], event.get("currentFrequencyPenalty"))
    return "unknown"


def session_facts(session: Session, meta: Mapping, *, nlp=None,
                  languagetool: str | None = None) -> SessionFacts:
    events = session.events
    document = replay(events)
    queries, unanswered, latencies = suggestion_timing(events)
    facts = SessionFacts(
        session_id=session.session_id,
        condition=str(meta.get("condition") or "unknown"),
        prompt_code=str(meta.get("prompt_code") or "unknown"),
        genre=str(meta.get("genre") or "unknown"),
        randomness=_randomness(meta, events),
        writer=str(meta.get("worker_id") or ""),
        simulated=str(meta.get("simulated", "")).lower() == "true",
        assistant=not control_arm.is_control_row(meta),
        stats=session_stats(session),
        queries=queries,
        unanswered=unanswered,
        latencies_ms=latencies,
    )
    if not facts.assistant:  # not applicable without a model to collaborate with
        facts.stats.update(dict.fromkeys(control_arm.COLLABORATION_SCORES))
    elif not paradigms.counts_suggestions(SimpleNamespace(paradigm=str(meta.get("paradigm") or "") or None)):
        facts.tab_list = False  # no list to query or accept from: not 0 queries, not 0 % accepted
        facts.stats.update(dict.fromkeys(control_arm.SUGGESTION_COLUMNS))
    sentences = authored_sentences(document)
    for kind, sentence in sentences:
        value = distinct_n(sentence, 2)
        if not math.isnan(value):
            facts.sentence_distinct.append((kind, value))
    for event in events:
        if event.get("eventName") == "suggestion-open":
            for item in event.get("currentSuggestions") or ():
                value = distinct_n(str(item.get("original") or ""), 2)
                if not math.isnan(value):
                    facts.suggestion_distinct.append(value)
    if nlp is not None:
        facts.entities = session_entities(events, nlp)
    if languagetool:
        try:
            facts.grammar = errors_per_word(sentences, languagetool)
        except LanguageToolError as error:
            facts.grammar_error = str(error)
    return facts
