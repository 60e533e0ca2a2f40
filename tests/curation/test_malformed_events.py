"""`study curate replay` and `study curate blocks` on a real CoAuthor session with one damaged
event (a textDelta that is not {"ops": [...]}, an event without or with a non-text eventName):
a message naming the file, the line or event and the fix, never a TypeError/KeyError traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from study.cli import main
from tests.conftest import COAUTHOR

SESSION = COAUTHOR / "sessions" / "11142ca391e749809df56da90091adb4.jsonl"


def _damaged(tmp_path: Path, change) -> Path:
    lines = SESSION.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"text-insert"' in line)
    lines[at] = json.dumps(change(json.loads(lines[at])))
    path = tmp_path / SESSION.name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, at + 1


@pytest.mark.parametrize("delta", ["abc", {"ops": 5}, {"insert": "x"}])
@pytest.mark.parametrize("authors", [[], ["--authors"]])
def test_replay_names_a_textdelta_that_is_not_a_list_of_ops(tmp_path, delta, authors):
    path, line = _damaged(tmp_path, lambda event: {**event, "textDelta": delta})
    result = CliRunner().invoke(main, ["curate", "replay", str(path), *authors])
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, (TypeError, KeyError)), repr(result.exception)
    assert str(path) in result.output
    assert "textDelta.ops must be a list" in result.output
    assert f"(event {line - 1})" in result.output  # eventNum = line - 1


def test_stats_says_why_it_skips_such_a_session(tmp_path):
    path, _ = _damaged(tmp_path, lambda event: {**event, "textDelta": "abc"})
    result = CliRunner().invoke(main, ["curate", "stats", str(path), "--out", str(tmp_path / "s.csv")])
    assert "textDelta.ops must be a list" in result.output, result.output


@pytest.mark.parametrize("change, said", [
    (lambda event: {k: v for k, v in event.items() if k != "eventName"}, "has no eventName"),
    (lambda event: {**event, "eventName": 5}, "has eventName 5"),
])  # fmt: skip
def test_blocks_names_an_event_without_a_text_eventname(tmp_path, change, said):
    path, line = _damaged(tmp_path, change)
    for extra in ([], ["--json"]):
        result = CliRunner().invoke(main, ["curate", "blocks", str(path), *extra])
        assert result.exit_code == 1, result.output
        assert not isinstance(result.exception, (TypeError, KeyError)), repr(result.exception)
        assert f"{path} line {line}: the event {said}" in result.output
        assert "Fix:" in result.output


def test_blocks_reads_an_event_with_a_non_text_eventsource_as_an_unmatched_block(tmp_path):
    # Table 2 has no block for it; like any event that fits none, it is listed as unmatched
    # (nothing silently lost), not a TypeError traceback.
    path, line = _damaged(tmp_path, lambda event: {**event, "eventSource": ["user"]})
    result = CliRunner().invoke(main, ["curate", "blocks", str(path), "--json"])
    assert result.exit_code == 0, repr(result.exception)
    blocks = json.loads(result.output)["blocks"]
    assert {"name": "unmatched", "events": [line - 1]} in blocks
