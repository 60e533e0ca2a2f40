"""The texts of a session's log beside its document, redacted as texts of their own (study.release.redaction).

The redactor replays the document and masks each entity where its characters were inserted.
What is not document text is redacted here, each string with a same-length mask so that the
records keep their shape:

- the suggestion lists, except that an inserted suggestion and the list item it came from are
  redacted alike (the curation core matches the two by text);
- a `currentDoc` after the first event, which is not replayed;
- the formatting `attributes` of pasted text (a link's target, `tel:...` or `mailto:...`);
- a proactive session's extension (schemas/coauthor-proactive.schema.json): the text of an
  accepted span as the writer edited it (`suggestion-modify`), an L2 suggestion's `rationale`
  (the model's, which may quote the document), L0's assistant panel requests and replies
  (`chat-send`, `chat-receive`, `chat-copy`). A span's `text` is masked as the document is
  wherever an entity lies inside the span.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from study.curation.suggestions import inserted_text
from study.release.pii import Detector, Span, redact_text
from study.release.redaction_report import Redaction, span_redactions

SUGGESTION_LISTS = ("currentSuggestions", "originalSuggestions")
EXTENSION = "proactive"  # the key of a proactive session's extension (FORMAT_PROACTIVE)
ITEM_TEXTS = ("original", "trimmed")


def redact_texts(
    session_id: str, events: list[dict], accepted: Sequence[tuple[int, str, Sequence[Mapping]]],
    detector: Detector,
) -> list[Redaction]:  # fmt: skip
    """Redact, in `events` (the log with its document already masked), every text beside the
    document; `accepted`: (event index, the suggestion's text as inserted, the list it came
    from) for each suggestion the writer inserted."""
    redactions = redact_suggestions(session_id, events, accepted, detector)
    redactions += redact_later_documents(session_id, events, detector)
    redactions += redact_attributes(session_id, events, detector)
    redactions += redact_extension(session_id, events, detector)
    return redactions


def redact_suggestions(
    session_id: str, events: list[dict], accepted: Sequence[tuple[int, str, Sequence[Mapping]]],
    detector: Detector,
) -> list[Redaction]:  # fmt: skip
    # The redacted form of each accepted suggestion's text, as it now stands in the log.
    as_inserted: dict[str, str] = {}
    for index, text, shown in accepted:
        redacted = inserted_text(events[index])
        if redacted == text:
            continue
        lead, trail = len(text) - len(text.lstrip()), len(text) - len(text.rstrip())
        core = redacted[lead : len(redacted) - trail]
        for item in shown:
            for key in ITEM_TEXTS:
                value = item.get(key) if isinstance(item, Mapping) else None
                if isinstance(value, str) and value.strip() == text.strip():
                    head = len(value) - len(value.lstrip())
                    tail = len(value) - len(value.rstrip())
                    as_inserted.setdefault(
                        value, value[:head] + core + value[len(value) - tail :]
                    )
    redactions: list[Redaction] = []
    seen: set[str] = set()
    for index, event in enumerate(events):
        for key in SUGGESTION_LISTS:
            items = event.get(key)
            if not items:
                continue
            new_items = []
            for number, item in enumerate(items):
                if not isinstance(item, Mapping):
                    new_items.append(item)
                    continue
                item = dict(item)
                for text_key in ITEM_TEXTS:
                    value = item.get(text_key)
                    if not isinstance(value, str):
                        continue
                    redacted, spans = _redact_item(value, as_inserted, detector)
                    if redacted != value:
                        item[text_key] = redacted
                        if value not in seen:
                            seen.add(value)
                            where = f"events[{index}].{key}[{number}].{text_key}"
                            redactions += _item_redactions(session_id, where, value, redacted, spans)
                new_items.append(item)
            event[key] = new_items
    return redactions


def redact_later_documents(session_id: str, events: list[dict], detector: Detector) -> list[Redaction]:
    """A `currentDoc` after the first event (the format has none; validation warns) is not
    replayed, so it is redacted as a text of its own."""
    redactions = []
    for index, event in enumerate(events[1:], start=1):
        value = event.get("currentDoc")
        if isinstance(value, str) and value:
            event["currentDoc"], spans = redact_text(value, detector)
            redactions += span_redactions(
                session_id, f"events[{index}].currentDoc", value, event["currentDoc"], spans
            )
    return redactions


def redact_attributes(session_id: str, events: list[dict], detector: Detector) -> list[Redaction]:
    """Formatting `attributes` of pasted text hold text of their own that is not part of the
    document (a link's target: `tel:...`, `mailto:...`): each string value is redacted as
    a text of its own, with a same-length mask, so the attributes keep their shape."""
    redactions: list[Redaction] = []
    for index, event in enumerate(events):
        delta = event.get("textDelta")
        if not isinstance(delta, Mapping) or not isinstance(delta.get("ops"), list):
            continue
        ops, changed = list(delta["ops"]), False
        for number, op in enumerate(ops):
            attributes = op.get("attributes") if isinstance(op, Mapping) else None
            if not isinstance(attributes, Mapping):
                continue
            where = f"events[{index}].textDelta.ops[{number}].attributes"
            new_attributes, found = _redact_values(session_id, attributes, where, detector)
            redactions += found
            if new_attributes != attributes:
                ops[number] = {**op, "attributes": new_attributes}
                changed = True
        if changed:
            event["textDelta"] = {**delta, "ops": ops}
    return redactions


def redact_extension(session_id: str, events: list[dict], detector: Detector) -> list[Redaction]:
    """A proactive event's extension holds text of its own (a span's text, a rationale, an
    assistant panel's request and reply): each string value is redacted as a text."""
    redactions: list[Redaction] = []
    for index, event in enumerate(events):
        extension = event.get(EXTENSION)
        if not isinstance(extension, Mapping):
            continue
        new_extension, found = _redact_values(session_id, extension, f"events[{index}].{EXTENSION}", detector)
        redactions += found
        if new_extension != extension:
            event[EXTENSION] = new_extension
    return redactions


def _redact_values(session_id: str, values: Mapping, where: str, detector: Detector) -> tuple[dict, list[Redaction]]:
    """Each string value of `values` (a paste's attributes, a proactive extension) redacted as a
    text of its own; `where` names the mapping in the session's events."""
    new_values, redactions = dict(values), []
    for name, value in values.items():
        if not isinstance(value, str):
            continue
        redacted, spans = redact_text(value, detector)
        if redacted != value:
            new_values[name] = redacted
            redactions += _item_redactions(session_id, f"{where}.{name}", value, redacted, spans)
    return new_values, redactions


def _redact_item(value: str, as_inserted: Mapping[str, str], detector: Detector) -> tuple[str, list[Span]]:
    if value in as_inserted:
        return as_inserted[value], list(detector.find(value))
    return redact_text(value, detector)


def _item_redactions(session_id: str, where: str, value: str, redacted: str, spans: list[Span]) -> list[Redaction]:
    if not spans:  # masked only because the inserted copy was masked in context
        return [Redaction(session_id, where, "IN_CONTEXT", value, redacted, 0.0, "document")]
    return span_redactions(session_id, where, value, redacted, spans)
