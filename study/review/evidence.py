"""What review's rules 4 and 5 read of a session, whichever provider brought the writer
(study.mturk.review, study.prolific.review): the task server's own count of AI requests, the
characters the writer wrote, and, beside the rules, the flags for text from outside the study
and for a writer who withdrew (`study withdraw --study`), whose submitted work is still decided
and paid as anyone's.

What "wrote" means is the session's path's to say: on the core path, the characters of the final
text the writer typed and kept (the replay's authorship, study.curation.replay); on a
paradigm's own path, its `path_hooks.written_chars` (a chat study's worker writes by talking:
their messages count, since the document may rightly hold the assistant's replies). Text a
paradigm's arm showed the writer (a chat arm's replies, its `coauthor_log.assistant_texts`)
counts as the assistant's when pasted, not as text from outside.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Connection

from study import paradigms
from study.config import Study
from study.curation.origin import origin
from study.curation.replay import WRITER, DeltaError, replay
from study.store import events as event_store
from study.store import sessions as session_store
from study.store.withdrawals import recorded as withdrawal


@dataclass(frozen=True)
class Evidence:
    ai_requests: int = 0
    written: int = 0  # rule 5's characters
    own_path: bool = False  # written on a paradigm's own path (messages, not a text)
    flags: list[str] = field(default_factory=list)


# A writer who withdrew did the work they submitted: it is decided and paid as anyone's, once.
WITHDREW_FLAG = ("the writer withdrew (study withdraw --study): the session is left out of the "
                 "study's data, not of this review; the rules above decide and pay the work done")


def gather(connection: Connection, study: Study, session: dict | None) -> Evidence:
    if session is None:
        return Evidence()
    session_id = session["session_id"]
    requests = session_store.ai_requests(connection, session_id)
    withdrew = [WITHDREW_FLAG] if session["worker_id"] and withdrawal(connection, session["worker_id"]) else []
    hooks = paradigms.path_hooks(study)
    if hooks is not None:
        return Evidence(requests, hooks.written_chars(connection, session_id), own_path=True, flags=withdrew)
    records = event_store.records(connection, session_id)
    flags = []
    if study.outside_paste != "allow":
        flags = outside_text_flags(records, assistant_texts(connection, session_id))
    return Evidence(requests, writer_chars(records), flags=flags + withdrew)


def assistant_texts(connection: Connection, session_id: str) -> list[str]:
    """What every paradigm's arm showed this writer from the assistant (a chat arm's replies)."""
    found = []
    for paradigm in paradigms.registered():
        hooks = paradigm.log_hooks()
        if hooks is not None and hasattr(hooks, "assistant_texts"):
            found += hooks.assistant_texts(connection, session_id)
    return found


def outside_text_flags(records: list[dict], assistant_texts: list[str] = ()) -> list[str]:
    """One line per insert of text from outside the study (study.curation.origin), with the
    share of the final text it left; none when the log does not replay."""
    try:
        found = origin(records, assistant_texts=assistant_texts)
    except (DeltaError, ValueError):
        return []
    if not found.flagged:
        return []
    share = found.share("outside")
    left = "none" if share != share else f"{share:.0f}%"  # NaN: nothing beyond the prompt
    return [f"text from outside, {insert.describe()}; outside share of the final text: {left}"
            for insert in found.inserts]  # fmt: skip


def writer_chars(records: list[dict]) -> int:
    """Characters of the final text the writer typed (rule 5); 0 if the log does not replay."""
    if not records:
        return 0
    try:
        return replay(records).count(WRITER)
    except (DeltaError, ValueError):
        return 0
