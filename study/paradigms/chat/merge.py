"""The running document of a chat study (`[chat] document_pane = "merged"`, CollabLLM App. E).

The paper's page merged the assistant's text into a document the participant saw and asked them
"not to take text merging into account"; how it merged is not published. The rule, which the
chat page applies in the browser (static/chat-merge.js, `merge`) and `study simulate`'s chat
users apply here, so a simulated conversation's document grows as a person's would:

- a reply's draft is its paragraphs (split at blank lines) that are not talk to the
  participant: a paragraph ending in "?" (a question) or ":" (a lead-in such as "Here is a
  draft:"), closing quotes and brackets aside;
- a reply without a draft leaves the document as it is;
- a draft at least half as long as the document (in words) is a new version: it replaces it;
- a shorter one is added at the end as a new paragraph.
"""

from __future__ import annotations

import re

from study.curation.replay import from_units, to_units

_TALK = re.compile(r"[?:][\"'”’)]*$")


def draft_of(reply: str) -> str:
    parts = [part.strip() for part in re.split(r"\n\s*\n", reply)]
    return "\n\n".join(part for part in parts if part and not _TALK.search(part))


def merge(document: str, reply: str) -> str:
    draft = draft_of(reply)
    if not draft:
        return document
    if not document.strip() or 2 * len(draft.split()) >= len(document.split()):
        return draft
    return f"{document.rstrip()}\n\n{draft}"


def delta(before: str, after: str) -> dict | None:
    """The Quill delta from `before` to `after` (one changed span), or None when equal.
    Positions count UTF-16 code units, as Quill's and the server's replay do (an emoji is two),
    and never split an emoji's pair."""
    if before == after:
        return None
    before, after = to_units(before), to_units(after)
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end = 0  # common suffix, not overlapping the prefix
    while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
        end += 1
    if start and "\ud800" <= before[start - 1] <= "\udbff":
        start -= 1  # the texts differ inside a surrogate pair: change the whole character
    if end and "\udc00" <= before[len(before) - end] <= "\udfff":
        end -= 1
    ops: list[dict] = [{"retain": start}] if start else []
    if len(before) - start - end:
        ops.append({"delete": len(before) - start - end})
    if len(after) - start - end:
        ops.append({"insert": from_units(after[start : len(after) - end])})
    return {"ops": ops}
