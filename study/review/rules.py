"""Who passes the qualification round: the rules, as pure functions.

CoAuthor App. D: every qualification submission was rated on a 1-5 rubric and "writers whose
submissions were rated as 4 or 5 were qualified"; "writers who did not interact with the system
were automatically disqualified". The paper had its authors rate; with several reviewers per
submission a final score needs a rule, and ours, in order:

1. A researcher's adjudication is final (it may also overturn an automatic disqualification).
2. A session that asked the AI for suggestions fewer than `min_ai_requests` times is disqualified
   without review. Asking is counted as `study mturk review` counts it: the task server's own
   suggestion requests for the session, never the browser's `suggestion-get` events, which a
   worker could post without ever asking the model (issue 10).
3. Fewer ratings than `ratings_per_submission`: still awaiting ratings.
4. Ratings on both sides of the pass mark, or further apart than `max_spread`: the reviewers
   disagree and a researcher adjudicates.
5. Otherwise the final score is the median rating, the lower middle one for an even count (so
   4 and 5 give 4: the cautious reading, and the value the MTurk qualification carries).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Asking the AI, as the log says it: Tab (or the ghost text's pause), or a request to an L0
# assistant panel (MindCopilot), whose answers come as chat-receive, not as suggestion lists.
AI_REQUEST_EVENTS = ("suggestion-get", "chat-send")

DISQUALIFIED = "disqualified"
AWAITING = "awaiting ratings"
DISAGREEMENT = "needs adjudication"
PASSED = "passed"
FAILED = "failed"
STATUSES = (AWAITING, DISAGREEMENT, PASSED, FAILED, DISQUALIFIED)


@dataclass(frozen=True)
class Outcome:
    status: str  # one of STATUSES
    score: int | None = None  # the final score (passed and failed only)
    reason: str = ""

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    @property
    def final(self) -> bool:
        return self.status in (PASSED, FAILED, DISQUALIFIED)


def ai_requests(events: Sequence[Mapping]) -> int:
    """How often the log says the writer asked the AI (shown to reviewers; rule 2 counts the
    server's requests instead)."""
    return sum(event.get("eventName") in AI_REQUEST_EVENTS for event in events)


def disqualification(asked: int, min_ai_requests: int) -> str | None:
    """Why a session is disqualified without review (rule 2), or None. `asked`: how many
    suggestion requests the task server answered for the session."""
    if asked < min_ai_requests:
        return (
            f"no interaction with the AI: asked for suggestions {asked} times, "
            f"fewer than the required {min_ai_requests}"
        )
    return None


def final_score(scores: Sequence[int]) -> int:
    """The median, the lower middle value for an even count (rule 5)."""
    ordered = sorted(scores)
    return ordered[(len(ordered) - 1) // 2]


def outcome(
    scores: Sequence[int],
    *,
    needed: int,
    pass_mark: int,
    max_spread: int = 1,
    disqualified: str | None = None,
    adjudicated: int | None = None,
) -> Outcome:
    """The outcome of one submission from its ratings and decisions (rules 1-5)."""
    if adjudicated is not None:
        status = PASSED if adjudicated >= pass_mark else FAILED
        return Outcome(status, adjudicated, "adjudicated")
    if disqualified:
        return Outcome(DISQUALIFIED, None, disqualified)
    if len(scores) < needed:
        return Outcome(AWAITING, None, f"{len(scores)} of {needed} ratings")
    split = min(scores) < pass_mark <= max(scores)
    if split or max(scores) - min(scores) > max_spread:
        why = "ratings on both sides of the pass mark" if split else "ratings too far apart"
        return Outcome(DISAGREEMENT, None, f"{why}: {', '.join(map(str, sorted(scores)))}")
    score = final_score(scores)
    return Outcome(PASSED if score >= pass_mark else FAILED, score, "ratings agree")
