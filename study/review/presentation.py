"""What a reviewer is shown of a submission: the final text coloured by who wrote it, the replay,
the writer's self-evaluation and the key statistics. Never who the writer is.

The view is built field by field from the session (never the session row itself, which holds
the worker, assignment and HIT ids), and every text that reaches the page, the replay included,
has the writer's own identifiers masked: a writer who typed or pasted their worker id into the
story does not reveal it. Masks keep the length, so the replay's positions stay valid. (A worker
id typed one key at a time never appears whole in a single change, and is masked in the final
text.)
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
from study.review import playback, rules
from study.server.participant import evaluation_items
from study.store import events as event_store
from study.store import sessions as session_store

MASK = "▒"


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

    def replay_json(self) -> str:
        return json.dumps(self.replay, ensure_ascii=False)


def masker(session: dict):
    """A function masking the session's worker, assignment and HIT ids and access code."""
    secrets = [
        value
        for value in (
            session.get("worker_id"),
            session.get("assignment_id"),
            session.get("hit_id"),
            session.get("access_code"),
        )
        if value and len(value) >= 4
    ]
    if not secrets:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(s) for s in secrets), re.IGNORECASE)
    return lambda text: pattern.sub(lambda m: MASK * len(m.group()), text)


def _mask_ops(ops: list, mask) -> list:
    return [
        {**op, "insert": mask(op["insert"])}
        if isinstance(op, dict) and isinstance(op.get("insert"), str)
        else op
        for op in ops
    ]


def show(connection: Connection, study: Study, submission: dict) -> Shown:
    session = session_store.get(connection, submission["session_id"])
    events = event_store.records(connection, submission["session_id"])
    mask = masker(session)
    try:
        prompt = study.prompt(session["prompt_code"])
        heading, noun = prompt.heading, prompt.noun
    except KeyError:
        heading, noun = session["prompt_code"] or "", "text"
    shown = Shown(submission["submission_id"], mask(heading), noun, spans=[], replay=None)
    try:
        start, steps, final = playback.steps(events)
    except (ValueError, DeltaError) as error:
        shown.problem = (
            f"The session's events cannot be replayed ({error}); the text the editor sent is shown."
        )
        shown.spans = [("writer", mask(session["final_text"] or ""))]
    else:
        shown.spans = [(name, mask(final.text[a:b])) for name, a, b in final.spans()]
        shown.replay = {
            "prompt": mask(start),
            "duration": steps[-1].t if steps else 0,
            "steps": [[s.t, s.event_index, s.author, _mask_ops(s.ops, mask)] for s in steps],
        }
        shown.stats = _stats(session, events, final)
    answers = json.loads(session["self_evaluation"] or "{}")
    shown.self_evaluation = [(text, bool(answers.get(key))) for key, text in evaluation_items(noun)]
    return shown


def _stats(session: dict, events: list, final) -> list[tuple[str, str]]:
    meta = official_metadata(events)
    started, finished = session["writing_started_at"], session["writing_finished_at"]
    writing = f"{(finished - started) / 60:.1f} min" if started and finished else "not recorded"
    share = writer_share_final(final)
    return [
        ("Writing time", writing),
        ("Session time (log)", f"{meta['time']:.1f} min"),
        ("AI requests (Tab)", str(rules.ai_requests(events))),
        ("Suggestion lists shown", str(meta["num_query"])),
        ("Suggestions accepted", str(meta["num_selected"])),
        ("Acceptance", f"{meta['perc_selected']}%" if meta["num_query"] else "no queries"),
        ("Written by the writer", "—" if math.isnan(share) else f"{share:.0f}% of the final text"),
        ("Words (without prompt)", str(final_words(final))),
    ]
