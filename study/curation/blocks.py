"""Event blocks: Table 2 of Lee, Liang & Yang (CHI 2022), "CoAuthor".

An event block is "a deterministic, non-overlapping abstraction of a sequence of events"
(section 4.1), e.g. text-insert(a) text-insert(b) -> insert(ab). Table 2 gives each block as a
regular expression over events and their sources:

| block    | events (sources)                                                      |
|----------|-----------------------------------------------------------------------|
| init     | system-initialize (api)                                               |
| insert   | (text-insert)+ (user)                                                 |
| delete   | (text-delete)+ (user)                                                 |
| cursor   | (cursor-forward or cursor-backward or cursor-select)+ (user)          |
| query    | suggestion-get (user), then optionally suggestion-close or            |
|          | cursor-forward (api), then suggestion-open (api)                      |
| reopen   | suggestion-reopen (user)                                              |
| navigate | (suggestion-up or suggestion-down)+ (user)                            |
| choose   | suggestion-select (user) suggestion-close (api) text-insert (api)     |
| dismiss  | suggestion-close (user)                                               |

Readings chosen here (Table 2 is typeset ambiguously):
- Table 2 writes alternatives as a space-separated list in parentheses, "(cursor-forward
  cursor-backward cursor-select)+"; we read it as alternation, and read the query block's
  "(suggestion-close cursor-forward)?" the same way (one optional api event), which is what
  the logs show after a suggestion-get.
- `suggestion-hover` events are dropped before matching: the paper's Table 1 does not list
  them, so Table 2 cannot contain them, and hovering happens inside the navigate/choose spans.
- The choose block accepts a text-insert from either source: the later interface logs the
  inserted suggestion as a `user` text-insert.
- Events that fit no block (an unanswered suggestion-get, an api cursor-forward outside a
  query, an api suggestion-close without a select, suggestion-fail, ...) become one-event
  `unmatched` blocks, so nothing is silently lost; no metric counts them.
- Matching is leftmost and greedy (a `+` takes the longest run), so consecutive inserts
  separated only by hovers form one insert block.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

BLOCK_NAMES = (
    "init", "insert", "delete", "cursor", "query", "reopen", "navigate", "choose", "dismiss",
)  # fmt: skip
UNMATCHED = "unmatched"
DROPPED_EVENTS = frozenset({"suggestion-hover"})

# One character per (eventName, eventSource): lower case for user, upper case for api.
_TOKENS = {
    ("system-initialize", "api"): "S",
    ("text-insert", "user"): "i",
    ("text-insert", "api"): "I",
    ("text-delete", "user"): "d",
    ("text-delete", "api"): "D",
    ("cursor-forward", "user"): "f",
    ("cursor-forward", "api"): "F",
    ("cursor-backward", "user"): "b",
    ("cursor-backward", "api"): "B",
    ("cursor-select", "user"): "s",
    ("cursor-select", "api"): "L",
    ("suggestion-get", "user"): "g",
    ("suggestion-open", "api"): "O",
    ("suggestion-reopen", "user"): "r",
    ("suggestion-up", "user"): "u",
    ("suggestion-down", "user"): "n",
    ("suggestion-select", "user"): "e",
    ("suggestion-close", "user"): "c",
    ("suggestion-close", "api"): "C",
}
_OTHER = "?"

# Table 2, in the token alphabet above; the alternatives never start with the same token.
_BLOCK_PATTERN = re.compile(
    "|".join(
        f"(?P<{name}>{pattern})"
        for name, pattern in (
            ("init", "S"),
            ("insert", "i+"),
            ("delete", "d+"),
            ("cursor", "[fbs]+"),
            ("query", "g[CF]?O"),
            ("reopen", "r"),
            ("navigate", "[un]+"),
            ("choose", "eC[iI]"),
            ("dismiss", "c"),
            (UNMATCHED, "."),
        )
    ),
    re.DOTALL,
)


@dataclass(frozen=True)
class Block:
    """One event block: its name and the indices (into the session's events) it spans."""

    name: str
    events: tuple[int, ...]

    @property
    def start(self) -> int:
        return self.events[0]

    @property
    def end(self) -> int:
        return self.events[-1]


class BlockTokens:
    """A session's events as the token string `_BLOCK_PATTERN` reads, fed one event at a time
    (hover events dropped); `kept` holds the index of each token's event."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.kept: list[int] = []
        self._index = 0

    def add(self, event: Mapping) -> None:
        index = self._index
        self._index = index + 1
        name = event.get("eventName")
        if name not in DROPPED_EVENTS:
            self.kept.append(index)
            source = event.get("eventSource")
            # A malformed source (a list, an object) fits no block: unmatched, not a TypeError.
            known = type(source) is str
            self.chars.append(_TOKENS.get((name, source), _OTHER) if known else _OTHER)

    def counts(self) -> Counter[str]:
        """How many blocks of each name (`block_counts`)."""
        counts: Counter[str] = Counter({name: 0 for name in BLOCK_NAMES + (UNMATCHED,)})
        for match in _BLOCK_PATTERN.finditer("".join(self.chars)):
            counts[match.lastgroup] += 1
        return counts


def _tokens(events: Sequence[Mapping]) -> BlockTokens:
    tokens = BlockTokens()
    for event in events:
        tokens.add(event)
    return tokens


def event_blocks(events: Sequence[Mapping]) -> list[Block]:
    """The session's events as Table 2 event blocks, in order (hover events dropped)."""
    tokens = _tokens(events)
    kept = tokens.kept
    return [
        Block(match.lastgroup, tuple(kept[match.start() : match.end()]))
        for match in _BLOCK_PATTERN.finditer("".join(tokens.chars))
    ]


def block_counts(events: Sequence[Mapping]) -> Counter[str]:
    """How many blocks of each name (Table 2 names plus `unmatched`) a session has.

    Every name is present, with 0 when the session has none of that block.
    """
    return _tokens(events).counts()
