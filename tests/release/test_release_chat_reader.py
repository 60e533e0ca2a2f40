"""What a reader of a chat study's release gets from the toolkit's own readers: `study curate
chat` checks and measures the release's conversations.jsonl (schemas/chat-release.schema.json,
the export's record with the writer's pseudonym), and `study report` on the release measures the
same conversations, with the same figures, as on the study folder it was built from."""

from __future__ import annotations

import csv
import html
import re

from click.testing import CliRunner

from study.cli import main
from tests.chat.conftest import chat_app, chat_client, chat_folder, chat_study  # noqa: F401 - fixtures
from tests.release.conftest import key  # noqa: F401 - fixture
from tests.release.test_release_chat import _build, _take_part


def _chat_section(page: str) -> str:
    """The report's chat section as text, from its first table on (the sentence before it names
    the source, which differs)."""
    section = re.search(r'<section id="chat">(.*?)</section>', page, re.S).group(1)
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.sub(r"<svg.*?</svg>", "", section, flags=re.S))))
    return text[text.index("document type"):]


def test_a_chat_release_is_read_by_curate_chat_and_reported_as_the_study_folder_is(
    chat_client, chat_app, chat_folder, key, tmp_path
):
    _take_part(chat_client, "A plan for the harbour festival, please.", access_code="chatlab-writer-0001")
    _take_part(chat_client, "A toast for my sister's wedding.", access_code="chatlab-writer-0002")
    chat_app.extensions["study.engine"].dispose()
    release = _build(chat_folder, key, tmp_path / "releases", "1.0.0")
    runner = CliRunner()

    # The release's lines carry the writer's pseudonym (worker_id): curate chat takes them.
    table = tmp_path / "table.csv"
    result = runner.invoke(main, ["curate", "chat", str(release / "conversations.jsonl"), "--out", str(table)])
    assert result.exit_code == 0, result.output
    assert "2 conversation(s) checked, 0 problem(s)" in result.output
    with open(table, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["exchanges"], r["final_interaction_rating"], r["final_document_rating"]) for r in rows] == [
        ("8", "8", "9"), ("8", "8", "9")]  # fmt: skip

    # The report on the release measures both conversations, none "unreadable", as the folder's.
    pages = {}
    for name, source in (("release", release), ("folder", chat_folder)):
        out = tmp_path / f"{name}.html"
        result = runner.invoke(main, ["report", str(source), "--out", str(out), "-j", "1"])
        assert result.exit_code == 0, result.output
        assert "unreadable" not in result.output and "2 sessions" in result.output, result.output
        pages[name] = out.read_text(encoding="utf-8")
    assert "could not be read" not in pages["release"]
    assert _chat_section(pages["release"]) == _chat_section(pages["folder"])
    assert "all types 1 1 2" in _chat_section(pages["release"])  # both conversations, one per assistant


def test_curate_chat_names_a_chat_arms_release_line_as_no_chat_studys_conversation(tmp_path):
    # A writing study's release keeps its chat arm's panel in conversations.jsonl too.
    line = ('{"format": "study-chat-arm-1", "session_id": "' + "a" * 32 + '", "worker_id": "w' + "b" * 20
            + '", "condition": "ai-chat", "messages": []}\n')  # fmt: skip
    file = tmp_path / "conversations.jsonl"
    file.write_text(line, encoding="utf-8")
    result = CliRunner().invoke(main, ["curate", "chat", str(file)])
    assert result.exit_code == 1
    assert f"{file} line 1: a writing study's chat arm (study-chat-arm-1" in result.output
    assert "0 conversation(s) checked, 1 problem(s)" in result.output
