"""Fixtures: the 31 real CoAuthor sessions and the later-interface session in ../shared/data."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

DATA = Path(
    os.environ.get(
        "COAUTHOR_FIXTURES", Path(__file__).resolve().parents[3] / "shared/data/coauthor"
    )
)
SESSIONS = DATA / "sessions"
INTERFACE_SESSION = DATA / "interface-format" / "2925c4bef43b49acabcade452c1b3c48.jsonl"

if not SESSIONS.is_dir():  # pragma: no cover - the fixtures ship with the project's shared data
    pytest.skip(f"CoAuthor fixtures not found at {DATA}", allow_module_level=True)


def load_events(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def metadata_rows() -> list[dict]:
    with open(DATA / "metadata.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def edge_cases() -> dict[str, str]:
    with open(DATA / "edge_cases.csv", newline="", encoding="utf-8") as handle:
        return {row["why"]: row["session_id"] for row in csv.DictReader(handle)}


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def session_paths() -> list[Path]:
    return sorted(SESSIONS.glob("*.jsonl"))


# --- hand-made sessions ------------------------------------------------------------------------

PROMPT = "Write about bees.\n"
SUGGESTIONS = [
    {"index": 0, "original": " Bees are busy.", "trimmed": "Bees are busy.", "probability": 0.5},
    {
        "index": 1,
        "original": "\n\nHoney is sweet.",
        "trimmed": "Honey is sweet.",
        "probability": 0.25,
    },
]


def record(
    name: str, source: str = "user", *, num: int = 0, ts: int = 1_000_000, delta="", **fields
) -> dict:
    """A 2021-format record with the 17 keys in the release's order."""
    out = {
        "eventName": name, "eventSource": source, "eventTimestamp": ts, "textDelta": delta,
        "cursorRange": "", "currentDoc": "", "currentCursor": 0, "currentSuggestions": [],
        "currentSuggestionIndex": 0, "currentHoverIndex": "", "currentN": "5",
        "currentMaxToken": "30", "currentTemperature": "0.9", "currentTopP": "1",
        "currentPresencePenalty": "0", "currentFrequencyPenalty": "0.5", "eventNum": num,
    }  # fmt: skip
    out.update(fields)
    return out


def ops(*items) -> dict:
    return {"ops": list(items)}


def small_session() -> list[dict]:
    """A valid session: prompt, typing, a query, an accepted suggestion, a dismissed one."""
    p = len(PROMPT)
    events = [
        record("system-initialize", "api", currentDoc=PROMPT, currentCursor=p),
        record("text-insert", delta=ops({"retain": p}, {"insert": "I"}), currentCursor=p + 1),
        record("text-insert", delta=ops({"retain": p + 1}, {"insert": "t"}), currentCursor=p + 2),
        record("suggestion-get"),
        record("suggestion-open", "api", currentSuggestions=SUGGESTIONS),
        record("suggestion-hover", currentHoverIndex=1),
        record("suggestion-down"),
        record("suggestion-select", currentSuggestionIndex=0),
        record("suggestion-close", "api"),
        record("text-insert", "api", delta=ops({"retain": p + 2}, {"insert": " Bees are busy."})),
        record("text-delete", delta=ops({"retain": p + 16}, {"delete": 1})),
        record("suggestion-get"),
        record("suggestion-open", "api", currentSuggestions=SUGGESTIONS),
        record("suggestion-close", "user"),
        record("cursor-backward", cursorRange={"index": 3, "length": 0}, currentCursor=3),
    ]
    for number, event in enumerate(events):
        event["eventNum"] = number
        event["eventTimestamp"] = 1_000_000 + 1000 * number
    return events


def write_lines(path: Path, lines: list) -> Path:
    """Write records (dicts, dumped as JSON) or raw strings, one per line."""
    with open(path, "w", encoding="utf-8") as handle:
        for line in lines:
            handle.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return path
