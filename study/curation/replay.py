"""Replay a session: the text at any event, and who wrote each character.

The text starts as `currentDoc` of the first event (system-initialize: the prompt, the
authoritative starting text) and changes only through `textDelta`s. A delta is a Quill Delta
walked from position 0: `retain n` keeps n characters, `insert s` inserts s, `delete n` removes
n characters; formatting `attributes` (pasted text) are ignored, and a delta may start without a
retain (an edit at position 0).

An insert is text or a Quill embed: an object with one key, such as the pasted image
`{"image": "data:image/png;base64,..."}`. Quill gives an embed length 1 (a Delta op's length is
`insert.length` for text and 1 otherwise), so every later position counts it once; replay holds
it as one character, `EMBED` (U+FFFC OBJECT REPLACEMENT CHARACTER, Unicode's stand-in for an
embedded object, itself one UTF-16 unit), authored like text by the event that inserted it.

Positions count UTF-16 code units, as Quill (JavaScript) does: an emoji counts twice. While
replaying, text is held as UTF-16 units (`to_units`: a character outside the Basic Multilingual
Plane becomes its two surrogates), so Python indexing matches Quill's; `from_units` turns the
result back into ordinary text. Text without such characters takes the same path unchanged.

Authorship (one code per character):
- `P` prompt: the starting text;
- `W` writer: inserted by a `user` event;
- `S` suggestion: inserted by an `api` event (an accepted GPT-3 suggestion), or, in the later
  interface which logs the accepted suggestion as a `user` text-insert, the first text-insert
  after a suggestion-select whose text matches the last shown list
  (`study.curation.suggestions`).
Retained characters keep their author; replaced text takes the inserting event's author.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from study.curation.quote import quote
from study.curation.suggestions import inserted_text, match_suggestion

EMBED = "\ufffc"  # one Quill embed (a pasted image, ...): one character, as Quill counts it
PROMPT, WRITER, SUGGESTION = "P", "W", "S"
AUTHOR_NAMES = {PROMPT: "prompt", WRITER: "writer", SUGGESTION: "suggestion"}
_RUNS = re.compile(r"P+|W+|S+")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogates(match: re.Match) -> str:
    code = ord(match.group()) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def to_units(text: str) -> str:
    """`text` with one Python character per UTF-16 code unit (Quill's positions)."""
    if text.isascii() or not _ASTRAL.search(text):
        return text
    return _ASTRAL.sub(_surrogates, text)


def from_units(text: str, authors: str | None = None):
    """Undo `to_units` (surrogate pairs become one character again; a lone one becomes
    U+FFFD). With `authors` (one code per unit), returns (text, authors) kept aligned."""
    if text.isascii() or not _SURROGATE.search(text):
        return text if authors is None else (text, authors)
    merged = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if authors is None:
        return merged
    keep = []  # drop the author of each low surrogate that completes a pair
    previous_high = False
    for unit, code in zip(text, authors, strict=True):
        low = "\udc00" <= unit <= "\udfff"
        if not (low and previous_high):
            keep.append(code)
        previous_high = "\ud800" <= unit <= "\udbff" and not (low and previous_high)
    return merged, "".join(keep)


_PROMPT_RUNS = re.compile(r"P+|[^P]+")


class DeltaError(ValueError):
    """A delta that cannot apply to the text; `field` names the op, e.g. `ops[1].retain`."""

    def __init__(self, field: str, message: str, event: int | None = None) -> None:
        super().__init__(f"textDelta.{field} {message}")
        self.field = field
        self.detail = message
        self.event = event  # the index of the event whose delta failed, when replay knows it

    def __reduce__(self):
        # Raised in worker processes: unpickling calls the class with these arguments (the
        # default, the one formatted message, would not fit this __init__).
        return type(self), (self.field, self.detail, self.event)


@dataclass(frozen=True)
class Document:
    """The text at one point of a session, with one author code per character."""

    text: str
    authors: str
    event_index: int

    def spans(self) -> list[tuple[str, int, int]]:
        """(author name, start, end) for each run of characters by the same author."""
        return [
            (AUTHOR_NAMES[m.group()[0]], m.start(), m.end()) for m in _RUNS.finditer(self.authors)
        ]

    def without_prompt(self) -> str:
        """The text the session added: the prompt removed (a prompt run between added text
        becomes a newline, so words on either side stay apart)."""
        if PROMPT not in self.authors:
            return self.text
        pieces = []
        end = len(self.authors)
        for match in _PROMPT_RUNS.finditer(self.authors):
            if match.group()[0] != PROMPT:
                pieces.append(self.text[match.start() : match.end()])
            elif 0 < match.start() and match.end() < end:
                pieces.append("\n")
        return "".join(pieces)

    def count(self, code: str) -> int:
        return self.authors.count(code)


def is_embed(value: object) -> bool:
    """Whether an insert's value is a Quill embed: an object with one key (`image`, ...)."""
    return type(value) is dict and len(value) == 1


def delta_ops(delta: object) -> Sequence[Mapping]:
    """The ops of a non-empty textDelta; DeltaError when it is not {"ops": [...]}."""
    ops = delta.get("ops") if type(delta) is dict or isinstance(delta, Mapping) else None
    if not isinstance(ops, list):
        raise DeltaError("ops", f'must be a list of retain, insert and delete ops, as {{"ops": [...]}}; textDelta is {quote(delta)}')
    return ops


def keystroke(text: str, ops: Sequence[Mapping]) -> tuple[str, int, str, int] | None:
    """The common delta, [retain n, insert s] or [retain n, delete k], applied to `text` (held
    as UTF-16 units): (the new text, n, s in UTF-16 units ("" for a delete), k (0 for an
    insert)). None for any other delta and for one that does not fit the text, which
    `apply_delta` walks op by op (and reports)."""
    # This runs for every keystroke of a session: an f-string joins the pieces in one copy,
    # where `a + b + c` copies `a` twice.
    if len(ops) == 2:
        first, second = ops
        if type(first) is dict and type(second) is dict and len(first) == 1 and len(second) == 1:
            n = first.get("retain")
            if type(n) is int and 0 <= n <= len(text):
                value = second.get("insert")
                if type(value) is str:
                    if not value.isascii():
                        value = to_units(value)
                    return f"{text[:n]}{value}{text[n:]}", n, value, 0
                k = second.get("delete")
                if type(k) is int and 0 <= k <= len(text) - n:
                    return f"{text[:n]}{text[n + k :]}", n, "", k
    return None


def apply_delta(
    text: str,
    ops: Sequence[Mapping],
    authors: str | None = None,
    code: str = WRITER,
    on_embed: Callable[[int, Mapping], None] | None = None,
):
    """Apply one delta's ops to `text` held as UTF-16 units (`to_units`), and to `authors`.

    Returns the new text, or (text, authors) when `authors` is given. An embed insert becomes
    one `EMBED` character, and `on_embed(op index, embed)` is called when given. Raises
    DeltaError when an op is malformed or runs past the end of the text.
    """
    edit = keystroke(text, ops)
    if edit is not None:
        after, at, inserted, deleted = edit
        if authors is None:
            return after
        return after, f"{authors[:at]}{code * len(inserted)}{authors[at + deleted :]}"
    track = authors is not None
    pieces: list[str] = []
    owners: list[str] = []
    position = 0
    length = len(text)
    for number, op in enumerate(ops):
        if not (type(op) is dict or isinstance(op, Mapping)):
            raise DeltaError(f"ops[{number}]", f"must be an object, got {quote(op)}")
        if "insert" in op:
            value = op["insert"]
            if isinstance(value, str):
                value = to_units(value)
            elif is_embed(value):
                if on_embed is not None:
                    on_embed(number, value)
                value = EMBED
            else:
                raise DeltaError(
                    f"ops[{number}].insert",
                    f"must be text or a Quill embed (an object with one key, such as "
                    f'{{"image": ...}}), got {quote(value)}',
                )
            pieces.append(value)
            if track:
                owners.append(code * len(value))
        elif "retain" in op or "delete" in op:
            key = "retain" if "retain" in op else "delete"
            count = op[key]
            if type(count) is not int or count < 0:
                raise DeltaError(
                    f"ops[{number}].{key}", f"must be a non-negative integer, got {quote(count)}"
                )
            end = position + count
            if end > length:
                raise DeltaError(
                    f"ops[{number}].{key}",
                    f"{count} at position {position} runs past the end of the text "
                    f"(length {length})",
                )
            if key == "retain":
                pieces.append(text[position:end])
                if track:
                    owners.append(authors[position:end])
            position = end
        else:
            raise DeltaError(
                f"ops[{number}]", f"has no retain, insert or delete: {quote(dict(op))}"
            )
    if position < length:
        pieces.append(text[position:])
        if track:
            owners.append(authors[position:])
    if track:
        return "".join(pieces), "".join(owners)
    return "".join(pieces)


def replay(events: Sequence[Mapping], at: int | None = None) -> Document:
    """The document after event `at` (an index into `events`, i.e. eventNum; default: the last).

    Raises DeltaError if a delta cannot apply, ValueError if `at` is out of range or the session
    does not start with the prompt (system-initialize).
    """
    if not events:
        raise ValueError("a session needs at least one event (system-initialize)")
    last = len(events) - 1 if at is None else at
    if not 0 <= last < len(events):
        raise ValueError(f"event {at} is out of range: the session has events 0..{len(events) - 1}")
    first = events[0]
    prompt = first.get("currentDoc")
    if first.get("eventName") != "system-initialize" or not isinstance(prompt, str):
        raise ValueError(
            "the first event must be system-initialize carrying the prompt in currentDoc"
        )
    text = to_units(prompt)
    authors = PROMPT * len(text)
    shown: Sequence[Mapping] = ()
    awaiting_choice = False
    for index in range(1, last + 1):
        event = events[index]
        name = event.get("eventName")
        if name == "suggestion-open":
            shown = event.get("currentSuggestions") or shown
            continue
        if name == "suggestion-select":
            awaiting_choice = True
            continue
        delta = event.get("textDelta")
        if not delta:
            continue
        if event.get("eventSource") == "api":
            code = SUGGESTION
        elif (
            awaiting_choice
            and name == "text-insert"
            and match_suggestion(inserted_text(event), shown)
        ):
            code = SUGGESTION
        else:
            code = WRITER
        awaiting_choice = False
        try:
            text, authors = apply_delta(text, delta_ops(delta), authors, code)
        except DeltaError as error:
            raise DeltaError(error.field, f"{error.detail} (event {index})", index) from None
    text, authors = from_units(text, authors)
    return Document(text=text, authors=authors, event_index=last)
