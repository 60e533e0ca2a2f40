"""A real session with a pasted image (a Quill embed) is read like any other session.

The public release holds one: `{"insert": {"image": "data:image/png;base64,..."}}` in an
argumentative session. Here a real argumentative session gets a pasted PNG of a few hundred
kilobytes half-way through (`pasted_image.with_pasted_image`, every later position shifted as
Quill logs it).
"""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from study.curation.cli import curate
from study.curation.formats import read_session
from study.curation.metadata import official_metadata
from study.curation.metrics import final_words
from study.curation.quote import LIMIT
from study.curation.replay import EMBED, WRITER, DeltaError, apply_delta, replay
from study.curation.runner import stats_paths
from study.curation.validate import WARNING, validate_events

from .conftest import SESSIONS, write_lines
from .pasted_image import image_embed, png, with_pasted_image

ARGUMENTATIVE = "ae1f2b6df9a74fe4b1eeec602bf6c3ae"


@pytest.fixture(scope="module")
def original():
    return read_session(SESSIONS / f"{ARGUMENTATIVE}.jsonl")


@pytest.fixture(scope="module")
def pasted(original):
    events, line = with_pasted_image(original.events)
    return events, line


def test_the_image_is_a_real_png_of_a_few_hundred_kilobytes():
    data = png()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and 200_000 < len(data) < 600_000
    assert len(image_embed()["image"]) > 250_000


def test_replay_counts_the_image_as_one_character_of_its_writer(original, pasted):
    events, line = pasted
    before, after = replay(original.events), replay(events)
    assert after.text.count(EMBED) == 1
    assert after.text.replace(EMBED, "") == before.text  # every later edit still lands right
    where = after.text.index(EMBED)
    assert after.authors[where] == WRITER
    assert after.authors[:where] + after.authors[where + 1 :] == before.authors
    assert replay(events, at=line).text.index(EMBED) == events[line]["currentCursor"] - 1


def test_an_embed_is_one_position_in_a_delta():
    text = apply_delta("ab\n", [{"retain": 1}, {"insert": {"image": "data:,"}}])
    assert text == "a" + EMBED + "b\n"
    assert apply_delta(text, [{"retain": 2}, {"delete": 1}]) == "a" + EMBED + "\n"
    with pytest.raises(DeltaError, match="must be text or a Quill embed"):
        apply_delta(text, [{"insert": {"image": "x", "alt": "y"}}])


def test_validate_accepts_it_with_one_short_warning(pasted):
    events, line = pasted
    report = validate_events(events, "s")
    assert report.ok, [issue.render() for issue in report.issues if issue.severity != WARNING]
    (embed,) = [issue for issue in report.issues if issue.code == "embed"]
    assert embed.severity == WARNING and embed.line == line + 1
    assert embed.field == "textDelta.ops[1].insert"
    assert "image" in embed.message and "data:image/png;base64,iVBOR" in embed.message
    assert len(embed.message) < 200  # the value is cut, not ~400 KB of base64


def test_stats_include_the_session_and_count_the_image_once(original, pasted, tmp_path):
    events, _ = pasted
    path = write_lines(tmp_path / f"{original.session_id}.jsonl", events)
    ((row, problem),) = list(stats_paths([path], "paper", processes=1, progress=False))
    assert problem is None
    before = official_metadata(original.events)
    assert row["num_event"] == before["num_event"] + 1
    assert row["final_words"] == final_words(replay(original.events))  # an image is no word
    assert row["written_by_human"] == official_metadata(events)["written_by_human"]


def test_curate_validate_on_a_folder_with_it_exits_0(pasted, tmp_path):
    events, _ = pasted
    folder = tmp_path / "sessions"
    folder.mkdir()
    for path in sorted(SESSIONS.glob("*.jsonl"))[:3]:
        shutil.copyfile(path, folder / path.name)
    write_lines(folder / f"{ARGUMENTATIVE}.jsonl", events)
    runner = CliRunner()
    result = runner.invoke(curate, ["validate", str(folder), "-j", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "embed" in result.output
    longest = max(len(line) for line in result.output.splitlines())
    assert longest < len(str(folder)) + 250  # no base64 dumped on the terminal
    data = json.loads(
        runner.invoke(curate, ["validate", str(folder), "--format", "json"]).output
    )
    assert data["summary"]["with_errors"] == 0
    embeds = [i for s in data["sessions"] for i in s["issues"] if i["code"] == "embed"]
    assert len(embeds) == 1 and len(embeds[0]["message"]) < 2 * LIMIT + 100
