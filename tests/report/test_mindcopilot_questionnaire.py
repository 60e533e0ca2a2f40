"""MindCopilot's post-task questionnaire in `study report` (App. F, Tab. 12-13; spec A3.4, A6).

The spec's acceptance check (C10): the Table 13 item means and dimension means (PW = Q1-Q4,
US = Q5-Q6, CU = Q7-Q8, AD = Q9-Q10) come out of the paper's own 7 x 10 x 4 count grid, and the
report says how favourable (5-7) and unfavourable (1-3) each dimension was per paradigm, as
Fig. 6's diverging bars do. The grid is Table 13 of the paper (30 answers per item and paradigm).
"""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from study.cli import main

ITEMS = ("q1_mental_demand", "q2_effort", "q3_temporal_demand", "q4_frustration", "q5_intent_alignment",
         "q6_decision_facilitation", "q7_style_understanding", "q8_alignment_over_time", "q9_timing",
         "q10_sense_of_control")  # fmt: skip
# Table 13: per paradigm, for scale values 1 (Very Bad) .. 7 (Very Good), the answers to Q1..Q10.
TABLE13 = {
    "L0": ("6 5 5 3 3 6 4 2 3 1", "5 6 9 10 8 4 7 9 7 12", "4 9 6 6 5 4 3 3 5 4", "13 10 7 9 11 14 11 13 11 10",
           "2 0 3 1 2 0 2 1 2 1", "0 0 0 1 1 2 3 2 2 2", "0 0 0 0 0 0 0 0 0 0"),
    "L1": ("0 0 3 2 0 2 1 0 3 4", "0 3 2 0 1 2 4 4 3 2", "8 6 4 9 3 3 12 7 10 7", "10 9 11 9 11 9 4 6 5 6",
           "4 6 5 5 6 7 6 9 6 7", "7 5 4 4 7 4 2 2 3 3", "1 1 1 1 2 3 1 2 0 1"),
    "L2": ("0 1 0 0 0 0 0 0 1 0", "1 1 4 1 0 3 1 1 3 1", "2 1 2 3 4 4 3 3 2 5", "7 8 5 5 10 6 6 6 3 8",
           "10 5 8 12 5 6 12 8 9 9", "7 7 6 7 7 6 7 6 6 4", "3 7 5 2 4 5 1 6 6 3"),
    "L3": ("2 0 0 0 1 0 1 1 1 0", "0 1 1 0 3 1 1 0 1 1", "2 4 4 6 1 4 2 6 2 2", "6 3 3 5 2 8 5 2 5 6",
           "10 9 9 6 10 4 9 9 12 9", "3 7 6 7 6 6 5 6 5 5", "7 6 7 6 7 7 7 6 4 7"),
}  # fmt: skip
# Spec A6 [D]: the item means and dimension means Table 13's counts give.
MEANS = {
    "L0": "3.00 2.80 2.80 2.93 3.13 3.13 3.30 3.27 3.27 3.13 2.88 3.13 3.28 3.20",
    "L1": "4.43 4.23 3.97 4.03 4.70 4.37 3.67 4.13 3.57 3.77 4.17 4.53 3.90 3.67",
    "L2": "4.97 5.13 4.83 4.90 4.90 4.77 4.80 5.10 4.93 4.63 4.96 4.83 4.95 4.78",
    "L3": "4.97 5.17 5.20 5.07 5.10 5.03 5.10 5.00 4.90 5.20 5.10 5.07 5.05 5.05",
}


def _answers(paradigm: str) -> list[list[int]]:
    """30 sessions' answers to Q1..Q10 under one paradigm, from the count grid."""
    columns = []
    for item in range(10):
        counts = [int(row.split()[item]) for row in TABLE13[paradigm]]
        columns.append([value for value, count in enumerate(counts, start=1) for _ in range(count)])
    assert all(len(column) == 30 for column in columns)
    return [list(row) for row in zip(*columns)]


def _session_log(start: int) -> str:
    """A two-event CoAuthor log: the report groups sessions by their logs' conditions."""
    keys = {"cursorRange": "", "currentSuggestions": [], "currentSuggestionIndex": 0, "currentHoverIndex": "",
            "currentN": "1", "currentMaxToken": "30", "currentTemperature": "0.75", "currentTopP": "1",
            "currentPresencePenalty": "0", "currentFrequencyPenalty": "0"}  # fmt: skip
    events = [
        {"eventName": "system-initialize", "eventSource": "api", "eventTimestamp": start, "textDelta": "",
         "currentDoc": "Once upon a time", "currentCursor": 16, **keys, "eventNum": 0},
        {"eventName": "text-insert", "eventSource": "user", "eventTimestamp": start + 1000,
         "textDelta": {"ops": [{"retain": 16}, {"insert": "."}]}, "currentDoc": "", "currentCursor": 17, **keys,
         "eventNum": 1},
    ]  # fmt: skip
    return "".join(json.dumps(event) + "\n" for event in events)


def _release_folder(folder):
    """Every participant rated every paradigm (within subjects): 30 writers x 4 sessions."""
    (folder / "sessions").mkdir()
    metadata = ["session_id,worker_id,prompt_code,genre,condition"]
    survey = ["session_id," + ",".join(ITEMS)]
    for paradigm in TABLE13:
        for writer, answers in enumerate(_answers(paradigm)):
            session = f"{paradigm.lower()}-{writer}"
            metadata.append(f"{session},w{writer},pig,creative,{paradigm}")
            (folder / "sessions" / f"{session}.jsonl").write_text(_session_log(1629234878621 + writer), encoding="utf-8")
            survey.append(session + "," + ",".join(map(str, answers)))
    (folder / "metadata.csv").write_text("\n".join(metadata) + "\n", encoding="utf-8")
    (folder / "survey.csv").write_text("\n".join(survey) + "\n", encoding="utf-8")


def _report(tmp_path) -> str:
    _release_folder(tmp_path)
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(tmp_path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def _rows(html: str, heading: str) -> list[list[str]]:
    """The body rows of the first table after `heading`."""
    table = html[html.index(heading):].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td>(.*?)</td>", row) for row in table.split("</tr>") if "<td>" in row]


def test_the_report_reproduces_table_13s_item_means_from_its_counts(tmp_path):
    html = _report(tmp_path)
    for number, item in enumerate(ITEMS):
        rows = {row[0]: row for row in _rows(html, f"<h3>{item}</h3>")}
        for paradigm, means in MEANS.items():
            assert rows[paradigm][1] == "30"
            assert rows[paradigm][2].split()[0] == means.split()[number], (item, paradigm)


def test_the_report_gives_the_four_dimensions_per_paradigm_with_favourable_and_unfavourable_shares(tmp_path):
    html = _report(tmp_path)
    rows = {(row[0], row[1]): row for row in _rows(html, "Questionnaire dimensions")}
    for paradigm, means in MEANS.items():
        for dimension, mean in zip(("PW", "US", "CU", "AD"), means.split()[10:]):
            assert rows[(paradigm, dimension)][3] == mean, (paradigm, dimension)
    # L0's workload: of its 120 answers to Q1-Q4, 7 are 5-7, 39 are 4 and 74 are 1-3 (Table 13).
    assert rows[("L0", "PW")][2] == "4" and rows[("L0", "PW")][4:7] == ["5.8", "32.5", "61.7"]
    # Nobody rated L0 "Very Good"; L3's adaptability is mostly favourable (Fig. 6).
    assert rows[("L3", "AD")][4] == "70.0"


def test_a_paradigm_run_in_two_genre_conditions_gets_table_13s_row_from_all_its_writers(tmp_path):
    """`study init --paradigm L1` runs L1 as two conditions, creative-L1 and argumentative-L1.
    Table 13 has one L1 row over every writer who used L1: the report's proactive section pools
    them, whatever the condition, while Survey results stays per condition."""
    from study import config
    from study.cli import write_study_files
    from study.server import create_app
    from tests.conftest import CONTACT
    from tests.server.flow import start, to_survey, to_writing

    folder = tmp_path / "l1"  # as `study init --paradigm L1` writes it
    write_study_files(folder, paradigm="L1", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    app = create_app(config.load(folder), suggestion_engine=object())
    client = app.test_client()
    for writer, answers in enumerate(_answers("L1")):
        session_id = start(client, access_code=f"w{writer}")
        to_writing(client, session_id, prompt=("shapeshifter", "stereotype")[writer % 2])
        to_survey(client, session_id, proactive=True)
        coauthor = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
        assert client.post(f"/s/{session_id}/survey", data=coauthor).status_code == 302
        response = client.post(f"/s/{session_id}/survey", data=dict(zip(ITEMS, map(str, answers))))
        assert response.location == f"/s/{session_id}/complete"
    app.extensions["study.engine"].dispose()

    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    per_condition = {row[0]: row for row in _rows(html, "<h3>Mental Demand: ")}
    assert {per_condition[c][1] for c in ("creative-L1", "argumentative-L1")} == {"15"}
    heading = "Post-task questionnaire per paradigm (Table 13, Fig. 6)"
    (items,) = _rows(html, heading)
    means = MEANS["L1"].split()
    assert items == ["L1", *(f"{mean} (30)" for mean in means[:10])]
    after = html[html.index(heading):]
    dimensions = {row[1]: row for row in _rows(after, "<th>dimension</th>")}
    assert [dimensions[d][3] for d in ("PW", "US", "CU", "AD")] == means[10:]


def test_coauthors_own_questions_beside_q1_q10_are_no_dimension_of_table_13(tmp_path):
    """`study init --design mindcopilot` asks CoAuthor's own questions (study.toml's [[survey]]:
    ownership, satisfaction, reuse, ungrouped) beside Q1-Q10, and its export's survey.csv has
    both. Those ids are also items of the shipped coauthor-post-session instrument, grouped as
    "overall"; a file that does not hold that whole instrument did not ask it, so Table 13 keeps
    MindCopilot's four dimensions, as the study folder's report gives them."""
    _release_folder(tmp_path)
    survey = tmp_path / "survey.csv"
    lines = survey.read_text(encoding="utf-8").splitlines()
    lines = [lines[0] + ",native_speaker,ownership,satisfaction,reuse"] + [line + ",Yes,6,5,7" for line in lines[1:]]
    survey.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(tmp_path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    dimensions = {row[1] for row in _rows(html, "Questionnaire dimensions")}
    assert dimensions == {"PW", "US", "CU", "AD"}
    rows = {(row[0], row[1]): row for row in _rows(html, "Questionnaire dimensions")}
    for paradigm, means in MEANS.items():
        for dimension, mean in zip(("PW", "US", "CU", "AD"), means.split()[10:]):
            assert rows[(paradigm, dimension)][3] == mean, (paradigm, dimension)
