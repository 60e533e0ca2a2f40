"""`study report` on a study whose arms include a chat arm (README, "Paradigms as arms"): the
chat arm's writer asks an assistant in a panel and has no Tab list, so, as `study export`'s
metadata.csv leaves its suggestion counts empty, the report's acceptance and Table 3's queries
say "not applicable" for it and leave its sessions out of the other arms' means, rather than
count each as 0 % accepted of 0 queries (which halved a pilot's acceptance over all arms)."""

from __future__ import annotations

import csv
import json
import statistics

from click.testing import CliRunner

from study.cli import main
from tests.conftest import COAUTHOR
from tests.report.conftest import Tables, number

RELEASED = {row["session_id"]: row for row in csv.DictReader(open(COAUTHOR / "metadata.csv"))}
# Three released sessions with suggestions accepted, as the Tab arm; three more, their
# suggestion events taken out (a chat arm's log has none), as the chat arm.
CREATIVE = sorted(s for s, row in RELEASED.items() if row["genre"] == "creative" and float(row["perc_selected"]) > 0)
TAB, CHAT = CREATIVE[:3], CREATIVE[3:6]


def _export_folder(folder):
    """A folder as `study export` writes one for a study with a Tab arm and a chat arm."""
    (folder / "sessions").mkdir(parents=True)
    # The arms' own decoding (a chat arm's is empty), not the paper's four conditions.
    rows = ["session_id,worker_id,prompt_code,genre,condition,paradigm,temperature,frequency_penalty"]
    for arm, paradigm, sessions in (("tab-arm", "tab", TAB), ("chat-arm", "chat", CHAT)):
        for session_id in sessions:
            lines = (COAUTHOR / "sessions" / f"{session_id}.jsonl").read_text(encoding="utf-8").splitlines()
            if paradigm == "chat":
                lines = [line for line in lines if not json.loads(line)["eventName"].startswith("suggestion-")]
            (folder / "sessions" / f"{session_id}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
            decoding = "0.6,0" if paradigm == "tab" else ","
            rows.append(f"{session_id},w-{session_id[:6]},{RELEASED[session_id]['prompt_code']},creative,{arm},"
                        f"{paradigm},{decoding}")  # fmt: skip
    (folder / "metadata.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_a_chat_arms_acceptance_is_not_applicable_and_out_of_the_other_arms_means(tmp_path):
    _export_folder(tmp_path / "export")
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(tmp_path / "export"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    tables = Tables(out.read_text(encoding="utf-8"))

    collaboration = tables.rows("collaboration")
    assert collaboration["chat-arm"][1] == "not applicable"
    tab = number(collaboration["tab-arm"][1])
    assert tab == round(statistics.mean(float(RELEASED[s]["perc_selected"]) for s in TAB), 2)
    assert number(collaboration["all"][1]) == tab  # the Tab arm's alone, not halved by the chat arm
    assert "3 session(s) of a chat arm" in tables.texts["collaboration"]

    table3 = {row[0]: row for row in tables.sections["table3"][0][1:] if row[1] == "ours"}
    heading = tables.sections["table3"][0][0]
    ours = table3["combined"]
    assert number(ours[heading.index("acceptance (%)")]) == round(tab, 1)
    queries = statistics.mean(float(RELEASED[s]["num_query"]) for s in TAB)
    assert number(ours[heading.index("queries")]) == round(queries, 1)
    assert "3 session(s) of a chat arm" in tables.texts["table3"]
