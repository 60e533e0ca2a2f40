"""`study report` on a chat study (CollabLLM) and on its `study export --format chat` folder:
conversations made through the server's HTTP API with the local model answering, measured in
the report as `study curate chat` measures them."""

from __future__ import annotations

import csv
import json
import re
import statistics
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from tests.chat.flow import choose_intent, prewrite, rate, say, start_chat
from tests.chat.test_chat_path import FINAL
from tests.report.conftest import Tables, number

COMPLETED = 4  # and one that stops after 4 exchanges, having rated the first 3


@pytest.fixture
def chat_study_folder(tmp_path: Path, model_url: str) -> Path:
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat")
    _converse(folder, model_url, COMPLETED, abandoned=1)
    return folder


def _converse(folder: Path, model_url: str, completed: int, abandoned: int = 0) -> None:
    """`completed` conversations of 8 or 9 exchanges through the server's API, then `abandoned`
    ones that stop after 4 exchanges, having rated the first 3."""
    from study.server import create_app

    study = config.load(folder)
    app = create_app(replace(study, suggestions=replace(study.suggestions, endpoint=model_url)))
    client = app.test_client()
    for n in range(completed + abandoned):
        session_id = start_chat(client, access_code=f"writer-{n}")
        choose_intent(client, session_id)
        prewrite(client, session_id)
        exchanges = 8 + n % 2 if n < completed else 4
        for k in range(1, exchanges + 1):
            if k in (4, 7):  # the periodic rating blocks the 4th and 7th messages
                assert rate(client, session_id, k - 1, value=(n + k) % 10 + 1).status_code == 200
            assert say(client, session_id, "Make it shorter, please. " * (n + 1)).status_code == 200
        if n < completed:
            finish = {"last_seq": -1, "pending": 0, "document": "A draft of " + "words " * n}
            assert client.post(f"/s/{session_id}/chat/finish", json=finish).status_code == 200
            final = {**FINAL, "interaction_rating": str(5 + n), "document_rating": str(9 - n)}
            assert client.post(f"/s/{session_id}/survey", data=final).location.endswith("/complete")
    app.extensions["study.engine"].dispose()


def _report(source: Path, out: Path, said: str = "") -> Tables:
    result = CliRunner().invoke(main, ["report", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert said in result.output
    tables = Tables(out.read_text(encoding="utf-8"))
    tables.html = out.read_text(encoding="utf-8")
    return tables


def _curated(folder: Path, tmp_path: Path, *extra: str) -> list[dict]:
    out = tmp_path / ("export" + "".join(extra).replace("-", ""))
    result = CliRunner().invoke(main, ["export", str(folder), "--format", "chat", "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    table = out / "chat.csv"
    result = CliRunner().invoke(main, ["curate", "chat", str(out / "conversations.jsonl"), "--out", str(table)])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(table.open(encoding="utf-8")))


def _mean(rows: list[dict], column: str) -> float:
    return round(statistics.mean(float(r[column]) for r in rows if r[column] != ""), 2)


def test_chat_study_report_shows_conversation_metrics_per_assistant(chat_study_folder, tmp_path):
    tables = _report(chat_study_folder, tmp_path / "report.html", f"{COMPLETED} sessions, all chat conversations")
    curated = _curated(chat_study_folder, tmp_path)
    assert len(curated) == COMPLETED
    assistants = sorted({r["assistant"] for r in curated})
    assert len(assistants) == 3  # balanced assignment: every assistant has a conversation

    turns, times = tables.sections["chat"][1], tables.sections["chat"][2]
    assert [row[0] for row in turns] == [row[0] for row in times]
    heading = turns[0] + times[0][2:]
    rows = {a[0]: a[1:] + b[2:] for a, b in zip(turns[1:], times[1:], strict=True)}
    assert set(rows) == {*assistants, "all"}
    column = {name: heading.index(name) - 1 for name in heading[1:]}
    for assistant in [*assistants, "all"]:
        mine = [r for r in curated if assistant in ("all", r["assistant"])]
        assert rows[assistant][0] == str(len(mine))
        for name, key in (("exchanges", "exchanges"), ("user tokens", "user_tokens"),
                          ("assistant tokens", "assistant_tokens"),
                          ("interaction (s)", "interaction_seconds"),
                          ("final: interaction rating", "final_interaction_rating"),
                          ("final: document rating", "final_document_rating")):
            assert number(rows[assistant][column[name]]) == _mean(mine, key), (assistant, name)
    assert "[" in rows["all"][column["exchanges"]]  # 4 conversations: with its interval

    # The rating trajectory: the mean rating at each rating point, per assistant, and its plot.
    trajectory = tables.rows("chat", 3)
    assert trajectory["assistant"] == ["after exchange 3", "after exchange 6"]
    for assistant in assistants:
        at_3 = [float(p.split(":")[1]) for r in curated if r["assistant"] == assistant
                for p in r["rating_trajectory"].split() if p.startswith("3:")]
        assert trajectory[assistant][0] == f"{statistics.mean(at_3):.2f} (n={len(at_3)})"
    assert '<figure data-plot="chat"><svg' in tables.html

    # What does not apply to conversations is said, not silently dropped or crashed on.
    chat_text = tables.texts["chat"]
    assert "do not apply" in chat_text and "Table 3" in chat_text
    overview = tables.rows("overview")
    assert overview["chat conversations (no CoAuthor log)"] == [str(COMPLETED)]
    funnel = tables.rows("participation")
    assert funnel["entered"][0] == str(COMPLETED + 1)
    assert funnel["sent a chat message"][0] == str(COMPLETED + 1)
    assert funnel["finished the chat"][0] == str(COMPLETED)
    assert funnel["completed the survey"][0] == str(COMPLETED)
    stages = tables.rows("timing")
    assert stages["chat"][0] == str(COMPLETED) and stages["final survey"][0] == str(COMPLETED)
    assert "assistant's replies" in tables.texts["suggestions"]
    assert "table3" not in tables.sections and "collaboration" not in tables.sections
    # The final survey per assistant, from the study database.
    survey = tables.texts["survey"]
    assert all(a in survey for a in assistants)


def test_report_on_a_chat_export_folder_measures_its_completed_conversations(chat_study_folder, tmp_path):
    """An export made with --all also holds the abandoned conversation: its rating after exchange
    3 and its 4 exchanges stay out of CollabLLM's figures, so the export's report shows the study
    folder's numbers; only the stage times count it."""
    curated = _curated(chat_study_folder, tmp_path, "--all")
    assert len(curated) == COMPLETED + 1
    completed = [r for r in curated if r["final_document_rating"] != ""]
    assert len(completed) == COMPLETED
    conversations = tmp_path / "exportall" / "conversations.jsonl"
    with conversations.open("a", encoding="utf-8") as handle:
        handle.write('{"format": "study-chat-1"}\n')  # a line cut short: named, left out
    tables = _report(tmp_path / "exportall", tmp_path / "report.html")
    assert f"line {COMPLETED + 2}" in tables.texts["chat"] and "study curate chat" in tables.texts["chat"]
    assert "1 unfinished conversation(s)" in tables.texts["chat"]
    turns, times = tables.sections["chat"][1], tables.sections["chat"][2]
    everyone = {row[0]: row for row in turns} | {"times": times[0], "all times": times[-1]}
    assert everyone["all"][1] == str(COMPLETED)
    assert number(everyone["all"][turns[0].index("exchanges")]) == _mean(completed, "exchanges")
    assert number(everyone["all"][turns[0].index("document words")]) == _mean(completed, "document_words")
    at = times[0].index("median reply (s)")
    assert number(everyone["all times"][at]) == _mean(completed, "median_reply_seconds")
    study = _report(chat_study_folder, tmp_path / "study-report.html")
    for index in (1, 2, 3, 4, 5):  # turns, times, the rating trajectory, the shares, the changes
        assert tables.sections["chat"][index] == study.sections["chat"][index], index
    assert "participation" in tables.sections and "Not available" in tables.texts["participation"]
    stages = tables.rows("timing")  # from the timestamps each conversation carries
    assert stages["consent, instructions, intent and pre-writing"][0] == str(COMPLETED + 1)
    assert stages["chat"][0] == str(COMPLETED)
    assert "survey" in tables.sections  # survey.csv beside the conversations


def _simulated_export(chat_study_folder, tmp_path) -> Path:
    """The study's conversations exported, three of them made simulated users' with goal
    documents (one a goal of notes only), and their replies made to ask or not to ask."""
    _curated(chat_study_folder, tmp_path)
    path = tmp_path / "export" / "conversations.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for n, record in enumerate(records[:3]):
        source = "notes" if n == 2 else "file"
        record.update(simulated=True, document=f"My story about a lighthouse keeper, draft {n}.")
        record["simulation"] = {"end_reason": "turn_limit", "goal_source": source, "first_wish_to_end": None,
                                "goal_document": "A story about a lighthouse keeper who counts ships.",
                                "last_thought": "close"}  # fmt: skip
        for k, message in enumerate(m for m in record["messages"] if m["role"] == "assistant"):
            message["content"] += " Who will read it?" if n == 0 or k == 0 else ""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_simulated_conversations_are_shown_as_collabllms_table_1(chat_study_folder, tmp_path):
    path = _simulated_export(chat_study_folder, tmp_path)
    table = tmp_path / "judged.csv"
    result = CliRunner().invoke(main, ["curate", "chat", str(path), "--out", str(table), "--deterministic-judge"])
    assert result.exit_code == 0, result.output
    curated = [r for r in csv.DictReader(table.open(encoding="utf-8")) if r["simulated"] == "True"]
    assert sorted(r["itr"] for r in curated) == ["2", "2", "3"]  # one asks every time, two once

    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(path.parent), "--out", str(out), "--deterministic-judge"])
    assert result.exit_code == 0, result.output
    tables = Tables(out.read_text(encoding="utf-8"))
    text = tables.texts["chat"]
    assert "Simulated conversations as CollabLLM's Table 1" in text
    assert "(s - 1) / 2 x 100" in text and "character BLEU-4" in text and "deterministic judge" in text
    table1 = next(t for t in tables.sections["chat"] if t[0][:5] == ["assistant", "n", "n BLEU", "Doc BLEU", "#Tok(k)"])
    assert table1[0][5:] == ["n ITR", "ITR"]
    shown = {row[0]: row[1:] for row in table1[1:]}
    assert set(shown) == {r["assistant"] for r in curated}
    for assistant, (n, n_bleu, bleu, tokens, n_itr, itr) in shown.items():
        mine = [r for r in curated if r["assistant"] == assistant]
        with_goal = [float(r["bleu_char"]) for r in mine if r["bleu_char"]]
        assert (n, n_bleu, n_itr) == (str(len(mine)), str(len(with_goal)), str(len(mine)))
        assert bleu == (f"{100 * statistics.mean(with_goal):.1f}" if with_goal else "–")
        assert float(tokens) == round(statistics.mean(int(r["assistant_tokens"]) for r in mine) / 1000, 2)
        assert float(itr) == round(100 * (statistics.mean(int(r["itr"]) for r in mine) - 1) / 2, 1)


def test_without_a_judge_table_1_has_no_itr_and_says_why(chat_study_folder, tmp_path):
    path = _simulated_export(chat_study_folder, tmp_path)
    tables = _report(path.parent, tmp_path / "report.html")
    table1 = next(t for t in tables.sections["chat"] if t[0][:2] == ["assistant", "n"] and "Doc BLEU" in t[0])
    assert "ITR" not in table1[0] and "ITR is not computed: it needs an LLM judge" in tables.texts["chat"]


def test_final_ratings_are_given_as_collabllms_shares_and_relative_changes(chat_study_folder, tmp_path):
    """CollabLLM §6 (spec B2.4): the shares of conversations whose final document and interaction
    ratings are >= 8 and >= 9 (its 91.4 % and 56.9 %), and each assistant's means against each
    other's as a relative change (its +17.6 % satisfaction, -10.4 % time against Base)."""
    tables = _report(chat_study_folder, tmp_path / "report.html")
    curated = _curated(chat_study_folder, tmp_path)
    assistants = sorted({r["assistant"] for r in curated})
    shares = next(t for t in tables.sections["chat"] if t[0][:3] == ["assistant", "n", "document rating >= 8 (%)"])
    assert shares[0][2:] == ["document rating >= 8 (%)", "document rating >= 9 (%)",
                             "interaction rating >= 8 (%)", "interaction rating >= 9 (%)"]
    by_assistant = {row[0]: row[1:] for row in shares[1:]}
    for assistant in assistants:
        mine = [r for r in curated if r["assistant"] == assistant]
        expected = [str(len(mine))] + [
            f"{100 * sum(int(r[column]) >= at for r in mine) / len(mine):.1f}"
            for column in ("final_document_rating", "final_interaction_rating") for at in (8, 9)
        ]
        assert by_assistant[assistant] == expected, assistant

    changes = next(t for t in tables.sections["chat"] if t[0][:2] == ["assistant", "against"])
    assert changes[0][2:] == ["document rating (% change)", "interaction rating (% change)", "interaction time (% change)"]
    pairs = {(row[0], row[1]): row[2:] for row in changes[1:]}
    assert set(pairs) == {(a, b) for a in assistants for b in assistants if a != b}
    for (a, b), cells in pairs.items():
        for cell, column in zip(cells, ("final_document_rating", "final_interaction_rating", "interaction_seconds")):
            mine, theirs = (statistics.mean(float(r[column]) for r in curated if r["assistant"] == x) for x in (a, b))
            assert number(cell) == pytest.approx(100 * (mine - theirs) / theirs, abs=0.2), (a, b, column)


def test_the_rating_trajectory_gives_each_checkpoint_its_interval(tmp_path, model_url):
    """CollabLLM's Fig. 7(d) compares assistants checkpoint by checkpoint (3, 6, 9): with three
    or more ratings at a point the mean comes with its 95% bootstrap interval."""
    folder = tmp_path / "one-assistant"
    write_study_files(folder, paradigm="chat")
    toml = folder / "study.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text[: text.index('[[conditions]]\nname = "proactive-base"')] + text[text.index("[texts]"):])
    _converse(folder, model_url, 3)
    tables = _report(folder, tmp_path / "report.html")
    ratings_at = {3: [5, 6, 7], 6: [8, 9, 10]}  # (n + k) % 10 + 1 for writers 0-2 rating after k
    trajectory = tables.rows("chat", 3)
    assert trajectory["assistant"] == ["after exchange 3", "after exchange 6"]
    for cell, point in zip(trajectory["base"], (3, 6)):
        mean, low, high, n = re.fullmatch(r"(\S+) \[(\S+), (\S+)\] \(n=(\d+)\)", cell).groups()
        assert (float(mean), int(n)) == (statistics.mean(ratings_at[point]), 3)
        assert min(ratings_at[point]) <= float(low) < float(mean) < float(high) <= max(ratings_at[point])


def test_the_exports_report_gives_the_final_survey_as_the_study_folders_does(chat_study_folder, tmp_path):
    """An export's survey.csv has no question types, but it holds every item of CollabLLM's
    shipped instruments, so the report reads them as defined: why each conversation ended is
    counted per reason, all four offered (spec C7's session-end reasons), and the "Other reason"
    text is counted, never printed, however many writers gave the same words."""
    _curated(chat_study_folder, tmp_path)  # study export --format chat --out tmp_path/export
    export = _report(tmp_path / "export", tmp_path / "export-report.html")
    study = _report(chat_study_folder, tmp_path / "study-report.html")
    assert export.sections["survey"] == study.sections["survey"]
    reasons = next(t for t in export.sections["survey"] if "Other reason" in t[0])
    assert reasons[0][2:] == ["I am satisfied with the document the AI created.",
                              "I found the AI writing assistant not helpful.",
                              "I encountered technical issues with the interface.", "Other reason"]
    assert FINAL["end_reason_other"] not in export.html
