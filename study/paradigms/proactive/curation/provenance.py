"""Is a proactive log what this server issued? (issue 21, "logs no client can forge")

The editor writes the log, so a client could claim anything: an L2 session's rows saying
"L3", a suggestion-open naming another session's suggestion id, an accept inserting text the
model never sent, all then counted in Table 5 as accepted. The server knows better: the
session's condition says its paradigm, and every proactive suggestion it answered is a row of
`suggestion_requests` (its id is the `suggestionId` the editor logs, its `suggestions` the
text it sent). `Provenance` holds a log to that, one record at a time:

1. paradigm: a record's `proactive.paradigm` is the session's condition's paradigm; in an
   L1-L3 session every record carries `proactive`.
2. issued: a `suggestionId` is one this server answered to this session.
3. shown: a suggestion-open shows exactly the text that request returned, once.
4. inserted: an accepted text-insert (api) inserts the next part of that text (the whole of
   it, or with partial accept the next words in order), after its suggestion-open.
5. L0's assistant panel: a `chatId` is an exchange this server answered to this session, and a
   chat-receive shows exactly the response it sent (a paste or copy only names its chatId).

It is pure (records and the issued texts in, problems out). The event API runs it on arrival
and refuses the batch with 422 (study.server.arrival); `study curate validate` on a study
folder runs it over every stored session against the database (study.export.validate).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from study.curation.suggestions import inserted_text

PROACTIVE_PARADIGMS = ("L1", "L2", "L3")


@dataclass(frozen=True)
class Problem:
    field: str
    message: str


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


class Provenance:
    """`paradigm`: the session's condition's paradigm ("L0" in a plain CoAuthor study too);
    `issued`: suggestion id -> the text (`original`) this server returned to this session."""

    def __init__(self, paradigm: str, issued: Mapping[int, str]) -> None:
        self.paradigm = paradigm
        self.issued = issued
        self.opened: set[int] = set()
        self.inserted: dict[int, str] = {}  # suggestion id -> what accepts inserted so far

    def check(self, record: Mapping) -> list[Problem]:
        """The problems of the next record of the session (and remember what it did)."""
        extension = record.get("proactive")
        if extension is None:
            if self.paradigm in PROACTIVE_PARADIGMS:
                return [Problem("proactive", f"is missing: every event of an {self.paradigm} session carries it")]
            return []
        claimed = extension.get("paradigm")
        if claimed != self.paradigm:
            return [Problem("proactive.paradigm",
                            f"is {claimed!r}, but this session's condition is {self.paradigm}")]  # fmt: skip
        if extension.get("chatId") is not None:
            return self._chat(extension["chatId"], record)
        sid = extension.get("suggestionId")
        if sid is None:
            return []
        if sid not in self.issued:
            return [Problem("proactive.suggestionId",
                            f"{sid} is not a suggestion this server returned to this session")]  # fmt: skip
        name = record.get("eventName")
        if name == "suggestion-open":
            return self._open(sid, record)
        if name == "text-insert" and record.get("eventSource") == "api":
            return self._insert(sid, record)
        if name in ("suggestion-select", "suggestion-modify") and sid not in self.opened:
            return [Problem("proactive.suggestionId", f"{name} of suggestion {sid} before its suggestion-open")]
        return []

    def _chat(self, chat_id: int, record: Mapping) -> list[Problem]:
        if chat_id not in self.issued:
            return [Problem("proactive.chatId", f"{chat_id} is not an answer this server sent to this session")]
        text = (record.get("proactive") or {}).get("text")
        if record.get("eventName") == "chat-receive" and text != self.issued[chat_id]:
            return [Problem("proactive.text",
                            f"shows {_short(text or '')}; answer {chat_id} was {_short(self.issued[chat_id])}")]  # fmt: skip
        return []

    def _open(self, sid: int, record: Mapping) -> list[Problem]:
        if sid in self.opened:
            return [Problem("proactive.suggestionId", f"suggestion {sid} is opened a second time")]
        self.opened.add(sid)
        shown = record.get("currentSuggestions") or []
        texts = [item.get("original") for item in shown if isinstance(item, Mapping)]
        if texts != [self.issued[sid]]:
            return [Problem("currentSuggestions",
                            f"shows {', '.join(map(_short, texts)) or 'nothing'}; suggestion {sid} "
                            f"was {_short(self.issued[sid])}")]  # fmt: skip
        return []

    def _insert(self, sid: int, record: Mapping) -> list[Problem]:
        if sid not in self.opened:
            return [Problem("proactive.suggestionId", f"text-insert of suggestion {sid} before its suggestion-open")]
        piece = inserted_text(record)
        done = self.inserted.get(sid, "")
        rest = self.issued[sid][len(done) :]
        if not piece or not rest.startswith(piece):
            return [Problem("textDelta",
                            f"inserts {_short(piece)}, which is not the next part of suggestion "
                            f"{sid} ({_short(rest)} is left of it)")]  # fmt: skip
        self.inserted[sid] = done + piece
        return []


def issued_texts(rows) -> dict[int, str]:
    """suggestion id -> text, from (id, suggestions JSON list, error) rows of suggestion_requests:
    the requests that answered (a failed one never gave the editor an id)."""
    out: dict[int, str] = {}
    for request_id, suggestions, error in rows:
        if error is not None:
            continue
        items = json.loads(suggestions) if isinstance(suggestions, str) else suggestions
        if items:
            out[request_id] = items[0].get("original", "")
    return out
