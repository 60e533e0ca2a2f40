"""What a reviewer is shown of a submission: the final text coloured by who wrote it (text
pasted from outside the study marked as such, study.review.pastes), the replay, an L0 session's
assistant panel conversation (study.review.panel), the writer's self-evaluation and the key
statistics. Never who the writer is.

The view is built field by field from the session (never the session row itself, which holds
the worker, assignment and HIT ids), and every text that reaches the page, the replay included,
has the writer's own identifiers masked: a writer who typed or pasted their worker id into the
story does not reveal it. The replay and the final text come from the log as the release
redactor rewrites it (`study.review.identifiers`), so an id typed one key at a time is masked
keystroke by keystroke, at every moment of the replay. Masks keep the length (`<WORKER___>`, as
in releases), so the replay's positions stay valid.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from sqlalchemy import Connection

from study.config import Study
from study.curation.metadata import official_metadata
from study.curation.metrics import final_words, writer_share_final
from study.curation.replay import DeltaError
from study.release.redaction import redact_session
from study.review import evidence, panel, pastes, playback, rules
from study.review.identifiers import IdentifierDetector
from study.store import events as event_store
from study.store import sessions as session_store
from study.store.simulated import simulated_ids
from study.survey.evaluation import evaluation_items

# The page's names of playback's author codes (study.curation.replay's, and OUTSIDE).
AUTHOR_NAMES = {"P": "prompt", "W": "writer", "S": "suggestion", playback.OUTSIDE: "outside"}
_RUNS = re.compile(r"P+|W+|S+|O+")

@dataclass
class Shown:
    submission_id: str
    prompt_heading: str
    noun: str
    spans: list[tuple[str, str]]  # (author name, text) runs of the final text
    replay: dict | None  # the payload of review-replay.js, None if the log cannot be replayed
    problem: str = ""
    stats: list[tuple[str, str]] = field(default_factory=list)
    self_evaluation: list[tuple[str, bool]] = field(default_factory=list)
    simulated: bool = False  # written by `study simulate`'s writer, not a participant
    pastes: pastes.Pastes | None = None  # text from outside; None if the log cannot be replayed
    panel: list[panel.Message] = field(default_factory=list)  # an L0 assistant panel's messages

    def replay_json(self) -> str:
        return json.dumps(self.replay, ensure_ascii=False)


def identifiers(session: dict) -> IdentifierDetector:
    """The session's worker, assignment and HIT ids and access code, to be masked."""
    return IdentifierDetector(
        session.get(column) for column in ("worker_id", "assignment_id", "hit_id", "access_code")
    )


def show(connection: Connection, study: Study, submission: dict) -> Shown:
    session = session_store.get(connection, submission["session_id"])
    events = event_store.records(connection, submission["session_id"])
    detector = identifiers(session)
    mask = detector.mask_text
    try:
        prompt = study.prompt(session["prompt_code"])
        heading, noun = prompt.heading, prompt.noun
    except KeyError:
        heading, noun = session["prompt_code"] or "", "text"
    shown = Shown(submission["submission_id"], mask(heading), noun, spans=[], replay=None)
    # A pilot's machine-written text is not to be judged as a person's (study.store.simulated).
    shown.simulated = session["session_id"] in simulated_ids(connection)
    try:
        redacted = _panel_text_as_the_ais(redact_session(session["session_id"], events, detector).events)
        found = pastes.find(redacted, evidence.assistant_texts(connection, session["session_id"]))
        start, steps, final = playback.steps(redacted, outside=found.event_indices())
    except (ValueError, DeltaError) as error:
        shown.problem = (
            f"The session's events cannot be replayed ({error}); the text the editor sent is shown."
        )
        shown.spans = [("writer", mask(session["final_text"] or ""))]
    else:
        text, authors = playback.play(start, steps)
        runs = _RUNS.finditer(authors)
        shown.spans = [(AUTHOR_NAMES[run.group()[0]], text[run.start() : run.end()]) for run in runs]
        shown.pastes = found
        shown.panel = panel.conversation(redacted)
        shown.replay = {
            "prompt": start,
            "duration": steps[-1].t if steps else 0,
            "steps": [[s.t, s.event_index, s.author, s.ops] for s in steps],
        }
        shown.stats = _stats(session, events, final, found)
    answers = json.loads(session["self_evaluation"] or "{}")
    shown.self_evaluation = [(text, bool(answers.get(key))) for key, text in evaluation_items(noun)]
    return shown


def _panel_text_as_the_ais(events: list[dict]) -> list[dict]:
    """The log as the page colours it: text an L0 assistant panel's response put into the
    document (the writer's paste of it, or Insert at cursor: a `user` text-insert carrying the
    response's `proactive.chatId`) is the AI's, as study.curation.origin reads it. The log keeps
    it the writer's act, and CoAuthor's replay the writer's text; a reviewer must see it is not."""
    return [
        {**event, "eventSource": "api"}
        if event.get("eventName") == "text-insert"
        and isinstance(event.get("proactive"), dict)
        and event["proactive"].get("chatId") is not None
        else event
        for event in events
    ]


def _stats(session: dict, events: list, final, found: pastes.Pastes) -> list[tuple[str, str]]:
    meta = official_metadata(events)
    started, finished = session["writing_started_at"], session["writing_finished_at"]
    writing = f"{(finished - started) / 60:.1f} min" if started and finished else "not recorded"
    share = writer_share_final(final)
    return [
        ("Writing time", writing),
        ("Session time (log)", f"{meta['time']:.1f} min"),
        ("AI requests", str(rules.ai_requests(events))),
        ("Suggestion lists shown", str(meta["num_query"])),
        ("Suggestions accepted", str(meta["num_selected"])),
        ("Acceptance", f"{meta['perc_selected']}%" if meta["num_query"] else "no queries"),
        # CoAuthor's writer share (Table 3) counts a paste as the writer's: say so beside it.
        ("Written by the writer", "—" if math.isnan(share) else f"{share:.0f}% of the final text"
         + (" (pastes from outside included)" if found.share > 0 else "")),
        ("Pasted from outside", found.summary()),
        ("Words (without prompt)", str(final_words(final))),
    ]
