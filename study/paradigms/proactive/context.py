"""What the model sees of the document: the L1 local window and the L2 marked-up snapshot.

MindCopilot App. H: Completion_L2's context is a `document_snapshot` in which unchanged text
stands as is and `<del>`, `<accept>`, `<reject>` and `<add>` mark what the writer deleted,
what they accepted of earlier suggestions, what they rejected, and what they added.

The interaction history is a list of items in the order they happened, each one of
- a span of the current document: `{"kind": "accept" | "add", "index": i, "length": n}`;
- a text anchored at a position but not in the document: `{"kind": "reject" | "del" |
  "accept" | "add", "index": i, "text": "..."}` (a rejected suggestion, deleted text, or, in
  the simulation, a suggestion recorded as accepted although the reference text goes on).
Positions are the document's character indices. The editor keeps them up to date as the writer
edits (static/editor-proactive-memory.js); the simulation builds them itself (study.metrics...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

KINDS = ("accept", "reject", "del", "add")


class HistoryError(ValueError):
    """A history item the snapshot cannot place; the message names the item and the fix."""


@dataclass(frozen=True)
class HistoryItem:
    kind: str
    index: int
    length: int = 0  # a span of the document (accept/add)
    text: str | None = None  # or a text anchored at `index`, not in the document

    @property
    def is_span(self) -> bool:
        return self.text is None


def parse_history(items: object, doc_length: int) -> list[HistoryItem]:
    """Checked history items from a request body; raises HistoryError naming the bad item."""
    if not isinstance(items, list):
        raise HistoryError("'history' must be a list of {kind, index, length | text} objects")
    parsed = []
    for i, item in enumerate(items):
        where = f"history[{i}]"
        if not isinstance(item, Mapping):
            raise HistoryError(f"{where} must be an object")
        kind, index = item.get("kind"), item.get("index")
        if kind not in KINDS:
            raise HistoryError(f"{where}.kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if type(index) is not int or not 0 <= index <= doc_length:
            raise HistoryError(f"{where}.index must be a position 0..{doc_length}, got {index!r}")
        text = item.get("text")
        if text is not None:
            if not isinstance(text, str):
                raise HistoryError(f"{where}.text must be a string")
            parsed.append(HistoryItem(kind, index, text=text))
            continue
        length = item.get("length")
        if kind not in ("accept", "add"):
            raise HistoryError(f"{where}: a {kind} item carries the text that is gone, as 'text'")
        if type(length) is not int or length < 0 or index + length > doc_length:
            raise HistoryError(f"{where}.length must fit in the document, got {length!r}")
        parsed.append(HistoryItem(kind, index, length=length))
    return parsed


def local_window(doc: str, chars: int) -> str:
    """L1's context (spec A2.2, reading (a)): the last `chars` characters, cut at a word start
    so the model does not see half a word."""
    if len(doc) <= chars:
        return doc
    window = doc[-chars:]
    space = window.find(" ")
    return window[space + 1 :] if 0 <= space < 40 else window


def snapshot(
    doc: str, history: Sequence[HistoryItem], cap: int | None = None, text_chars: int | None = None
) -> str:
    """The L2 document snapshot: `doc` with the last `cap` suggestion events (<accept>,
    <reject>) and the last `cap` edits (<add>, <del>) marked up, each text not in the document
    (a rejected suggestion, deleted text) cut to its first `text_chars`. The two are capped
    apart (spec A2.3: "a cap of the last 20 suggestion events"), so a writer's typing and typo
    fixes never push the feedback on earlier suggestions out of the snapshot.

    Spans that overlap an earlier-placed span are clipped so the tags always nest properly.
    """
    items = list(history)
    if cap:
        feedback = [i for i, item in enumerate(items) if item.kind in ("accept", "reject")][-cap:]
        edited = [i for i, item in enumerate(items) if item.kind not in ("accept", "reject")][-cap:]
        items = [items[i] for i in sorted(feedback + edited)]
    anchored: dict[int, list[HistoryItem]] = {}
    opens: dict[int, HistoryItem] = {}
    for item in items:
        if item.is_span:
            if item.length > 0:
                opens[item.index] = item
        else:
            anchored.setdefault(item.index, []).append(item)
    out: list[str] = []
    close_at: int | None = None
    closing = ""
    for position in range(len(doc) + 1):
        if close_at == position:
            out.append(f"</{closing}>")
            close_at = None
        for item in anchored.get(position, ()):
            text = item.text if text_chars is None else item.text[:text_chars]
            out.append(f"<{item.kind}>{text}</{item.kind}>")
        if position == len(doc):
            break
        span = opens.get(position)
        if span is not None and close_at is None:
            out.append(f"<{span.kind}>")
            close_at, closing = position + span.length, span.kind
        out.append(doc[position])
    if close_at is not None:
        out.append(f"</{closing}>")
    return "".join(out)
