"""Event blocks follow Table 2 of the paper; hover events are dropped, leftovers kept."""

from __future__ import annotations

import pytest

from study.curation.blocks import BLOCK_NAMES, block_counts, event_blocks
from study.curation.formats import read_session
from study.curation.metadata import official_metadata

from .conftest import INTERFACE_SESSION, SESSIONS, record, small_session

SHORT = {
    "init": "system-initialize", "insert": "text-insert", "delete": "text-delete",
    "forward": "cursor-forward", "backward": "cursor-backward", "select-text": "cursor-select",
    "get": "suggestion-get", "open": "suggestion-open", "reopen": "suggestion-reopen",
    "up": "suggestion-up", "down": "suggestion-down", "hover": "suggestion-hover",
    "select": "suggestion-select", "close": "suggestion-close", "fail": "suggestion-fail",
}  # fmt: skip


def session(spec: str) -> list[dict]:
    """Events from "get:user forward:api open:api" (short event name : source)."""
    pairs = (item.split(":") for item in spec.split())
    return [record(SHORT[name], source) for name, source in pairs]


def test_the_small_session_has_every_common_block():
    found = [(b.name, b.events) for b in event_blocks(small_session())]
    assert found == [
        ("init", (0,)), ("insert", (1, 2)), ("query", (3, 4)), ("navigate", (6,)),
        ("choose", (7, 8, 9)), ("delete", (10,)), ("query", (11, 12)), ("dismiss", (13,)),
        ("cursor", (14,)),
    ]  # fmt: skip
    # event 5 (suggestion-hover) is in no block


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # a query may have one api suggestion-close or cursor-forward before the list opens
        ("get:user forward:api open:api", ["query"]),
        ("get:user close:api open:api", ["query"]),
        # an unanswered get fits no block
        ("get:user insert:user", ["unmatched", "insert"]),
        # cursor events of all three kinds form one block; hovers do not split runs
        ("forward:user hover:user select-text:user backward:user", ["cursor"]),
        ("insert:user hover:user insert:user", ["insert"]),
        ("up:user down:user", ["navigate"]),
        ("reopen:user select:user close:api insert:api", ["reopen", "choose"]),
        # the later interface logs the chosen suggestion as a user insert
        ("select:user close:api insert:user insert:user", ["choose", "insert"]),
        ("fail:api delete:user", ["unmatched", "delete"]),
        ("init:api close:user", ["init", "dismiss"]),
    ],
)
def test_table_2_patterns(spec, expected):
    assert [b.name for b in event_blocks(session(spec))] == expected


@pytest.mark.parametrize(
    "path", sorted(SESSIONS.glob("*.jsonl")) + [INTERFACE_SESSION], ids=lambda p: p.stem[:8]
)
def test_blocks_partition_the_non_hover_events_of_real_sessions(path):
    events = read_session(path).events
    covered = [i for block in event_blocks(events) for i in block.events]
    assert covered == [i for i, e in enumerate(events) if e["eventName"] != "suggestion-hover"]
    counts = block_counts(events)
    metadata = official_metadata(events)
    assert counts["init"] == 1
    assert counts["choose"] == metadata["num_selected"]  # every selection was inserted
    assert counts["query"] <= metadata["num_query"]
    assert set(BLOCK_NAMES) <= set(counts)
