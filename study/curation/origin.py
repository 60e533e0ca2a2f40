"""Where a session's text came from: typed by the writer, from the study's assistant, or from
outside the study (issue 27, item 6).

CoAuthor's writer share (Table 3, `study.curation.metrics.writer_share_final`) counts every
character a `user` event inserted as the writer's, which is right for the paper's interface,
but a paste of another model's text is also a `user` insert: a session written entirely by an
outside model would read 100% human. Veselovsky et al. (2023) found 33-46% of MTurk writers
did exactly that, and spotted them from keystroke logs. This module reads the same log:

- **typed**: a `user` insert shorter than `min_chars` (a keystroke, an autocorrection, a word
  the spell checker swapped in), or a longer one whose text the document holds or held before
  (the writer duplicated, moved or undid the deletion of text of the session: it keeps the
  author of the text it copied; in the 2021 release an undo restores a deleted sentence so),
  or that a selection held (a copy pasted after the writer changed the text it was copied from);
- **assistant**: what `study.curation.replay` attributes to suggestions (an `api` insert, or a
  `user` insert matching the list just chosen from; a long `api` insert only when a suggestion
  the log showed holds it, since a script may post its own text as `api`), and, in a chat arm, a long insert of text
  one of the assistant's replies holds (`assistant_texts`: the writer pasted it from the panel;
  an L0 assistant panel's responses are in the log itself, as chat-receive's `proactive.text`);
- **outside**: a `user` insert of `min_chars` characters or more, in one event (so with no
  keystroke for each character), of text the document did not hold. When it comes within
  `switch_ms` of the window regaining focus (`window-focus`, logged where the study watches
  pastes) it is marked `after_window_switch`: the writer was elsewhere just before.

The shares are over the final text with the prompt removed, like the writer share, so the two
read side by side; the CoAuthor writer share keeps the paper's definition (outside text counts
as the writer's there) so Table 3 still reproduces. Pure: a parsed session's events in, an
`Origin` out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from study.curation.replay import (
    PROMPT,
    SUGGESTION,
    WRITER,
    DeltaError,
    Document,
    apply_delta,
    delta_ops,
    from_units,
    keystroke,
    to_units,
)
from study.curation.suggestions import inserted_text, match_suggestion, shown_texts

TYPED, ASSISTANT, OUTSIDE = "T", "A", "O"
SOURCES = {TYPED: "typed", ASSISTANT: "assistant", OUTSIDE: "outside"}
# A placeholder author while a long insert's source is decided (never left in the result).
_PENDING = "?"
# The assistant's text copied by the writer: the assistant's here, the writer's in `replay`.
_COPIED = "C"
# Outside text a log claims as the assistant's (an `api` insert no suggestion shown holds): the
# suggestions' in `replay`, which reads the source alone.
_FROM_API = "F"
# The authors of one replay in `replay`'s codes, and the authors a copy of held text takes.
_AS_REPLAY = str.maketrans(
    {TYPED: WRITER, OUTSIDE: WRITER, _COPIED: WRITER, ASSISTANT: SUGGESTION, _FROM_API: SUGGESTION}
)
_AS_COPY = str.maketrans({PROMPT: TYPED, ASSISTANT: _COPIED, _FROM_API: OUTSIDE})
# Defaults of [session] outside_min_chars and of the window-switch mark.
MIN_CHARS = 20
SWITCH_MS = 10_000
# The columns `study curate stats` (and a release's statistics table) add per session.
COLUMNS = ("typed_share", "assistant_share", "outside_share", "outside_inserts")


@dataclass(frozen=True)
class OutsideInsert:
    """One insert of text from outside: where in the log, how long, and its context."""

    event_index: int
    chars: int
    timestamp: int | None
    after_window_switch: bool
    preview: str  # its first 60 characters, for a reviewer

    def describe(self) -> str:
        when = " right after the window regained focus" if self.after_window_switch else ""
        return f"event {self.event_index}: {self.chars} characters inserted at once{when} ({self.preview!r})"


@dataclass(frozen=True)
class Origin:
    """Surviving characters of the final text (prompt excluded) by source, and every insert
    from outside (surviving or not)."""

    typed: int
    assistant: int
    outside: int
    inserts: tuple[OutsideInsert, ...] = ()

    def share(self, source: str) -> float:
        """Percentage of the final text (prompt excluded) from `source` ("typed",
        "assistant", "outside"); NaN when nothing beyond the prompt survives."""
        total = self.typed + self.assistant + self.outside
        if total == 0:
            return math.nan
        return 100 * getattr(self, source) / total

    @property
    def flagged(self) -> bool:
        """Whether any text arrived from outside (even if later deleted)."""
        return bool(self.inserts)

    def row(self) -> dict:
        """The statistics columns (COLUMNS) of this session."""
        return {
            "typed_share": self.share("typed"),
            "assistant_share": self.share("assistant"),
            "outside_share": self.share("outside"),
            "outside_inserts": len(self.inserts),
        }


def origin(
    events: Sequence[Mapping], *, min_chars: int = MIN_CHARS, switch_ms: int = SWITCH_MS,
    assistant_texts: Sequence[str] = (),
) -> Origin:
    """Where each character of the session's final text came from (module docstring).

    Raises ValueError when the log does not start with system-initialize, DeltaError when a
    delta cannot apply (as `study.curation.replay.replay`)."""
    return document_and_origin(
        events, min_chars=min_chars, switch_ms=switch_ms, assistant_texts=assistant_texts
    )[1]


def document_and_origin(
    events: Sequence[Mapping], *, min_chars: int = MIN_CHARS, switch_ms: int = SWITCH_MS,
    assistant_texts: Sequence[str] = (),
) -> tuple[Document, Origin]:
    """The final document as `study.curation.replay.replay` gives it and the session's
    `Origin`, from one replay (`study curate stats` needs both; see `Attribution`).

    Raises as `replay` does."""
    attribution = Attribution(min_chars=min_chars, switch_ms=switch_ms, assistant_texts=assistant_texts)
    for event in events:
        attribution.add(event)
    return attribution.result()


class Attribution:
    """One replay, fed one event at a time, that reads both `replay`'s authors and `origin`'s.

    The two read authorship alike but for one case: text the writer copied from an assistant
    reply or from the assistant's earlier text is the assistant's to `origin` and the writer's
    to `replay` (a `user` insert). `_COPIED` marks it while replaying, so one author string
    holds both readings."""

    def __init__(
        self, *, min_chars: int = MIN_CHARS, switch_ms: int = SWITCH_MS, assistant_texts: Sequence[str] = ()
    ) -> None:
        self.min_chars, self.switch_ms = min_chars, switch_ms
        self.assistant_texts = list(assistant_texts)  # and every L0 panel response logged
        self.index = -1  # of the last event added
        self.text = self.authors = ""
        # The last record whose keystroke (study.curation.replay.keystroke) was applied, and
        # the text it was applied to (study.curation.checker.Replayed: the validator of the
        # same pass reads them).
        self.keystroke: Mapping | None = None
        self.before = ""
        self.shown: Sequence[Mapping] = ()
        # Every suggestion list shown, and their texts with whitespace collapsed, made only when
        # an `api` insert is not in the list just shown (`_was_offered`): the one pass reads
        # every session, and most never need it.
        self.shown_lists: list[Sequence[Mapping]] = []
        self.offered: set[str] = set()
        self.collapsed_lists = 0
        self.awaiting_choice = False
        self.focused_at: int | None = None
        self.inserts: list[OutsideInsert] = []
        self.removed: list[tuple[str, str]] = []  # text deletions took away, with its authors
        # Long selections, with their authors: what the writer may have copied, and may paste
        # after changing the original (the document then no longer holds the copy).
        self.selected: list[tuple[str, str]] = []

    def add(self, event: Mapping) -> None:
        """Replay one more event. Raises ValueError when the first is not system-initialize with
        the prompt, DeltaError when a delta cannot apply (naming the event, as `replay`)."""
        self.index = index = self.index + 1
        name = event.get("eventName")
        if index == 0:
            prompt = event.get("currentDoc")
            if name != "system-initialize" or not isinstance(prompt, str):
                raise ValueError(
                    "the first event must be system-initialize carrying the prompt in currentDoc"
                )
            self.text = to_units(prompt)
            self.authors = PROMPT * len(self.text)
            return
        if name == "suggestion-open":
            self.shown = event.get("currentSuggestions") or self.shown
            self.shown_lists.append(self.shown)
            return
        if name == "suggestion-select":
            self.awaiting_choice = True
            return
        if name == "window-focus":
            self.focused_at = _timestamp(event)
            return
        if name == "cursor-select":
            self._select(event.get("cursorRange"))
            return
        if name == "chat-receive":  # L0's assistant panel: its response, for the writer to paste
            extension = event.get("proactive")
            response = extension.get("text") if isinstance(extension, Mapping) else None
            if isinstance(response, str) and response:
                self.assistant_texts.append(response)
            return
        delta = event.get("textDelta")
        if not delta:
            return
        ops = delta_ops(delta)
        before_text, before_authors = self.text, self.authors
        edit = keystroke(before_text, ops)
        if edit is None:
            code = self._walk(event, name, ops)
        else:  # the common case, spliced here as apply_delta would
            self.text, at, inserted, deleted = edit
            code = self._code(event, name, len(inserted))
            if deleted:
                self.removed.append((before_text[at : at + deleted], before_authors[at : at + deleted]))
            self.authors = f"{before_authors[:at]}{code * len(inserted)}{before_authors[at + deleted :]}"
            self.keystroke, self.before = event, before_text
        if code == _PENDING:
            source = self._source(inserted_text(event), event, before_text, before_authors)
            if event.get("eventSource") == "api":  # a suggestion to `replay` whatever it holds
                source = "".join(_FROM_API if code == OUTSIDE else ASSISTANT for code in source)
            self.authors = _fill(self.authors, source)

    def _code(self, event: Mapping, name: str, units: int) -> str:
        """The author of what a delta inserts (`units` UTF-16 units long): the assistant's,
        typed, or `_PENDING` for a long insert whose source `_source` decides. Any delta ends
        the wait for the insert of a chosen suggestion."""
        awaiting_choice, self.awaiting_choice = self.awaiting_choice, False
        if event.get("eventSource") == "api":
            # The editor logs a suggestion it inserts as `api`, but so may a script posting its
            # own text: a long `api` insert is the assistant's when a suggestion shown holds it.
            if units < self.min_chars or self._was_offered(inserted_text(event)):
                return ASSISTANT
            return _PENDING
        if awaiting_choice and name == "text-insert" and match_suggestion(inserted_text(event), self.shown):
            return ASSISTANT
        return _PENDING if units >= self.min_chars else TYPED

    def _was_offered(self, inserted: str) -> bool:
        core = inserted.strip()
        if any(core in text for text in shown_texts(self.shown)):  # the list just shown: most
            return True
        for shown in self.shown_lists[self.collapsed_lists :]:
            self.offered.update(" ".join(text.split()) for text in shown_texts(shown))
        self.collapsed_lists = len(self.shown_lists)
        collapsed = " ".join(inserted.split())
        return any(collapsed in offered for offered in self.offered)

    def _walk(self, event: Mapping, name: str, ops: Sequence) -> str:
        """Apply any delta but a keystroke (`apply_delta` walks it op by op); returns the
        code its inserts took."""
        code = self._code(event, name, len(to_units(inserted_text(event))))
        self.removed += _removed(self.text, self.authors, ops)
        try:
            self.text, self.authors = apply_delta(self.text, ops, self.authors, code)
        except DeltaError as error:
            raise DeltaError(error.field, f"{error.detail} (event {self.index})") from None
        return code

    def _select(self, selected: object) -> None:
        if not isinstance(selected, Mapping):
            return
        index, length = selected.get("index"), selected.get("length")
        if type(index) is not int or type(length) is not int or index < 0 or length < self.min_chars:
            return
        found = (self.text[index : index + length], self.authors[index : index + length])
        if self.selected and self.selected[-1][0] in found[0]:
            self.selected[-1] = found  # a selection growing key by key: keep the longest
        else:
            self.selected.append(found)

    def _source(self, inserted: str, event: Mapping, before_text: str, before_authors: str) -> str:
        """The authors of a long insert: held text keeps its own, a chat reply is the
        assistant's, anything else is outside (and listed in `inserts`)."""
        units = to_units(inserted)
        source = _held(units, [(before_text, before_authors), *reversed(self.removed), *reversed(self.selected)])
        # A reply copied with a space or line break around it (the writer's own) is still it.
        if source is None and any(inserted.strip() in reply for reply in self.assistant_texts):
            source = _COPIED * len(units)
        if source is None:
            source = OUTSIDE * len(units)
            at, focused_at = _timestamp(event), self.focused_at
            self.inserts.append(
                OutsideInsert(
                    event_index=self.index,
                    chars=len(inserted),
                    timestamp=at,
                    after_window_switch=(
                        focused_at is not None and at is not None and 0 <= at - focused_at <= self.switch_ms
                    ),
                    preview=inserted[:60],
                )
            )
        return source

    def result(self) -> tuple[Document, Origin]:
        """The final document (in `replay`'s author codes) and the `Origin`."""
        if self.index < 0:
            raise ValueError("the first event must be system-initialize carrying the prompt in currentDoc")
        text, authors = from_units(self.text, self.authors)
        document = Document(text=text, authors=authors.translate(_AS_REPLAY), event_index=self.index)
        found = Origin(
            typed=authors.count(TYPED),
            assistant=authors.count(ASSISTANT) + authors.count(_COPIED),
            outside=authors.count(OUTSIDE) + authors.count(_FROM_API),
            inserts=tuple(self.inserts),
        )
        return document, found


def _held(text: str, places: Sequence[tuple[str, str]]) -> str | None:
    """The authors of `text` where the session held it (the document, or text deleted from
    it), the prompt's read as typed (the writer chose to copy it) and the assistant's as
    copied (`_COPIED`); None when it never did."""
    for held, authors in places:
        at = held.find(text)
        if at >= 0:
            return authors[at : at + len(text)].translate(_AS_COPY)
    return None


def _removed(text: str, authors: str, ops: Sequence) -> list[tuple[str, str]]:
    """What a delta's delete ops take away from `text` (malformed ops are left to
    apply_delta to report)."""
    found, position = [], 0
    for op in ops:
        if not isinstance(op, Mapping):
            return found
        count = op.get("retain", op.get("delete"))
        if "insert" in op or type(count) is not int:
            continue
        if "delete" in op and op.get("delete") is count:
            found.append((text[position : position + count], authors[position : position + count]))
        position += count
    return found


def _fill(authors: str, source: str) -> str:
    """The placeholder authors of one long insert replaced, in order, by `source`'s (an insert
    with several string ops is read as one text, as `inserted_text` joins them)."""
    out, taken = [], 0
    for code in authors:
        if code == _PENDING:
            out.append(source[taken] if taken < len(source) else TYPED)
            taken += 1
        else:
            out.append(code)
    return "".join(out)


def _timestamp(event: Mapping) -> int | None:
    value = event.get("eventTimestamp")
    return value if type(value) is int else None
