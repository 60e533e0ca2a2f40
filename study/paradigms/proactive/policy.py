"""L3, adaptive proactive collaboration: when to suggest, with which strategy, how long.

MindCopilot §5.1 and App. E describe three mechanisms without numbers; this is the rule the
toolkit implements (spec A2.4, all thresholds in `[proactive]` of study.toml):

1. Writing stage: words written / `target_words`, early below `stage_cuts[0]`, middle below
   `stage_cuts[1]`, late after. The editor's text starts with the prompt (CoAuthor's layout),
   whose words are not the writer's: they are taken off.
2. Strategy: `stage_strategy[stage]`, by default L1 (stateless) early and L2 (stateful) later,
   because L1 does relatively better early and L2's advantage grows later (§5.2, Fig. 4).
3. Timing: `stage_idle_ms[stage]` (4000/3000/2000 ms), times `reject_multiplier` for every
   rejection past `reject_streak - 1` in the current run of rejections, capped at
   `max_idle_ms`; an acceptance ends the run.
4. Length: `length_factor` x the median number of words the writer kept of the last
   `length_window` accepted suggestions (all of it, or the words taken one by one, or what
   survived their edits), clamped to [`min_tokens`, the condition's max_tokens]. Before the
   first acceptance: the condition's max_tokens.

The editor applies rule 3 itself (it owns the idle timer; editor-proactive-trigger.js mirrors
`idle_threshold`), the server applies 1, 2 and 4 to each request.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from study.paradigms.proactive.settings import ProactiveSettings

_WORD = re.compile(r"\S+")


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def stage(words: int, settings: ProactiveSettings) -> str:
    progress = words / max(1, settings.target_words)
    low, high = settings.stage_cuts
    return "early" if progress < low else "middle" if progress < high else "late"


def rejection_run(outcomes: Sequence[str]) -> int:
    """Rejections since the last acceptance (outcomes oldest first: 'accepted', 'rejected', ...)."""
    run = 0
    for outcome in reversed(outcomes):
        if outcome.startswith("accepted"):
            break
        if outcome == "rejected":
            run += 1
    return run


def idle_threshold(stage_name: str, rejections: int, settings: ProactiveSettings) -> int:
    base = settings.stage_idle_ms[stage_name]
    extra = max(0, rejections - settings.reject_streak + 1)
    try:
        grown = base * settings.reject_multiplier**extra
    except OverflowError:  # a run of rejections far past the cap (a request may carry 2,000)
        grown = settings.max_idle_ms
    return int(min(settings.max_idle_ms, round(grown)))


def suggestion_tokens(kept_words: Sequence[int], max_tokens: int, settings: ProactiveSettings) -> int:
    recent = [w for w in kept_words if w > 0][-settings.length_window :]
    if not recent:
        return max_tokens
    wanted = math.ceil(statistics.median(recent) * settings.length_factor)
    return max(min(settings.min_tokens, max_tokens), min(max_tokens, wanted))


@dataclass(frozen=True)
class Plan:
    """How one L3 request is served: logged with the suggestion, never shown to the writer."""

    stage: str
    strategy: str  # "L1" or "L2"
    idle_ms: int
    max_tokens: int


def plan(
    doc: str,
    outcomes: Sequence[str],
    kept_words: Sequence[int],
    max_tokens: int,
    settings: ProactiveSettings,
    prompt: str = "",
) -> Plan:
    """`doc`: the editor's text, which starts with `prompt` (a writer may have edited it, so
    its words are subtracted rather than the prefix cut)."""
    current = stage(max(0, word_count(doc) - word_count(prompt)), settings)
    return Plan(
        stage=current,
        strategy=settings.stage_strategy[current],
        idle_ms=idle_threshold(current, rejection_run(outcomes), settings),
        max_tokens=suggestion_tokens(kept_words, max_tokens, settings),
    )
