"""`study curate chat` measures simulated conversations as CollabLLM's Table 1 does (§4): the
final document's character BLEU against the simulated user's goal document (`bleu_char`)."""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner
from nltk.translate.bleu_score import sentence_bleu

from study.cli import main as study_cli
from tests.chat.flow import choose_intent, prewrite, say, start_chat

GOAL = ("Dear admissions committee, I grew up repairing radios in my father's shop, and that is "
        "where I learned to listen before I speak.")  # fmt: skip
FINAL = ("Dear committee, I grew up fixing radios in my father's small shop, where I learned to "
         "listen first.")  # fmt: skip


def _simulation(goal: str, source: str) -> dict:
    return {"end_reason": "termination_marker", "goal_source": source, "goal_document": goal,
            "first_wish_to_end": 2, "last_thought": "satisfied"}  # fmt: skip


def conversations(chat_client, chat_folder, tmp_path, count: int = 3) -> tuple:
    """`count` conversations of two exchanges through the server, exported (path, records)."""
    for n in range(count):
        session_id = start_chat(chat_client, access_code=f"c-{n}")
        choose_intent(chat_client, session_id)
        prewrite(chat_client, session_id)
        for _ in range(2):
            assert say(chat_client, session_id, "Please write it, briefly.").status_code == 200
    out = tmp_path / "out"
    result = CliRunner().invoke(study_cli, ["export", str(chat_folder), "--format", "chat", "--out", str(out), "--all"])
    assert result.exit_code == 0, result.output
    path = out / "conversations.jsonl"
    return path, [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _curate(path, *extra: str) -> tuple[dict, str]:
    table = path.parent / "chat.csv"
    result = CliRunner().invoke(study_cli, ["curate", "chat", str(path), "--out", str(table), *extra])
    assert result.exit_code == 0, result.output
    return {row["session_id"]: row for row in csv.DictReader(table.open(encoding="utf-8"))}, result.output


def test_bleu_char_scores_the_final_document_against_the_goal_document(chat_client, chat_folder, tmp_path):
    path, (from_file, from_notes, person) = conversations(chat_client, chat_folder, tmp_path)
    from_file.update(simulated=True, simulation=_simulation(GOAL, "file"), document=FINAL)
    # A goal made of the intent and notes (the users' model drafted none) is not a document.
    from_notes.update(simulated=True, simulation=_simulation("Personal statement\n- my notes", "notes"), document=FINAL)
    person.update(document=FINAL)
    path.write_text("".join(json.dumps(r) + "\n" for r in (from_file, from_notes, person)), encoding="utf-8")

    rows, _ = _curate(path)
    assert float(rows[from_file["session_id"]]["bleu_char"]) == sentence_bleu([GOAL], FINAL)
    assert 0.3 < sentence_bleu([GOAL], FINAL) < 0.9  # close, not the same
    assert rows[from_notes["session_id"]]["bleu_char"] == ""
    assert rows[person["session_id"]]["bleu_char"] == ""
    printed = CliRunner().invoke(study_cli, ["curate", "chat", str(path)]).output
    assert "bleu_char" in printed and f"{sentence_bleu([GOAL], FINAL):.4f}" in printed


def test_with_a_judge_every_conversation_gets_its_raw_itr_and_the_output_says_whose(chat_client, chat_folder, tmp_path):
    path, (asking, telling, empty) = conversations(chat_client, chat_folder, tmp_path)
    for record, replies in ((asking, ("Who is it for?", "Shorter?")), (telling, ("Here it is.", "Done."))):
        for message, reply in zip((m for m in record["messages"] if m["role"] == "assistant"), replies):
            message["content"] = reply
    asking.update(simulated=True, simulation=_simulation(GOAL, "file"), document=FINAL)
    empty.update(messages=[], ratings=[])
    path.write_text("".join(json.dumps(r) + "\n" for r in (asking, telling, empty)), encoding="utf-8")

    rows, output = _curate(path, "--deterministic-judge")
    assert [rows[r["session_id"]]["itr"] for r in (asking, telling, empty)] == ["3", "1", ""]
    assert "(score - 1) / 2 x 100" in output and "not the paper's" in output
    assert "deterministic judge scores ITR by a rule" in output
    assert any((tmp_path / "out" / "judge-cache").rglob("*.json"))  # beside the table, reused

    plain, output = _curate(path)  # no judge: no column, nothing said about one
    assert "itr" not in plain[asking["session_id"]] and "interactivity" not in output
