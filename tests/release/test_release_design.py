"""A real study's release carries its design: the arms (each session's condition and paradigm),
a judging round's ratings with their rubric, and the preregistration record; the consent page
names the director's e-mail and phone (published on purpose) while an e-mail a participant
wrote is still caught."""

from __future__ import annotations

import csv
import json
import re

from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.judging import settings as judging_settings
from study.judging.items import build as build_round
from study.plan import record as plan_record
from study.release.keys import init_keyfile
from study.release.pseudonyms import pseudonym
from study.server import create_app
from study.store import make_engine, reading, writing
from study.store import sessions as session_store
from tests.conftest import CONTACT, COAUTHOR
from tests.plan.conftest import PLAN, edit
from tests.release.conftest import SMALLEST
from tests.release.test_build_study import take_part
from tests.release.test_contact import CONSENT_LINE, DIRECTOR_EMAIL, a_study, build, one_session
from tests.server.flow import start, to_writing

JUDGES = ("A2JUDGEWORKERONE", "A3JUDGEWORKERTWO")


def judge(study, worker_id: str, score: int) -> None:
    client = create_app(study, suggestion_engine=object()).test_client()
    entry = {"assignmentId": f"3JASSIGN{worker_id[-3:]}", "workerId": worker_id, "hitId": "3JHIT1"}
    entered = client.get("/judge", query_string=entry)
    assert entered.status_code == 302, entered.get_data(as_text=True)
    task_id = entered.location.rsplit("/", 1)[-1]
    items = re.findall(r'data-item="([0-9a-f]+)"', client.get(entered.location).get_data(as_text=True))
    assert client.post(f"/api/judging/{task_id}/ratings",
                       json={"ratings": [{"item": i, "score": score} for i in items], "submit": True}).status_code == 200
    client.application.extensions["study.engine"].dispose()


def test_a_study_release_carries_arms_judging_ratings_and_the_preregistration(tmp_path):
    folder = a_study(tmp_path, declared=True)
    plan = {**PLAN, "comparisons": [{"outcome": "quality", "treatment": "creative-high", "control": "creative-low"}]}
    edit(folder, lambda data: data.update(plan=plan, judging={"unit": "document", "k": 2, "items_per_task": 5}))
    assert CliRunner().invoke(main, ["preregister", str(folder)]).exit_code == 0
    # Recorded again before launch: the release ships the study's record, naming the one it
    # replaced (kept in the study's folder only).
    assert CliRunner().invoke(main, ["preregister", str(folder), "--replace"]).exit_code == 0
    # The writer types the director's address and a phone number of their own.
    one_session(folder, f" Ask {DIRECTOR_EMAIL} or ring me at (415) 555-2671.")
    study = config.load(folder)
    engine = make_engine(study.database_url)
    with writing(engine) as connection:
        assert build_round(connection, study, judging_settings.from_study(study)).items == 1
    for worker_id, score in zip(JUDGES, (4, 5)):
        judge(study, worker_id, score)
    with reading(engine) as connection:
        (session,) = session_store.all_sessions(connection, finished_only=True)
    engine.dispose()

    result, directory, key = build(folder, tmp_path)
    assert result.exit_code == 0, result.output

    # The arms: every condition with its paradigm; the session's own in metadata.csv.
    arms = json.loads((directory / "arms.json").read_text())["arms"]
    assert [(a["name"], a["paradigm"]) for a in arms] == [(c.name, c.paradigm) for c in study.conditions]
    (row,) = csv.DictReader((directory / "metadata.csv").open())
    assert row["condition"] == session["condition"]
    assert row["paradigm"] == study.condition(session["condition"]).paradigm

    # The judging round: both ratings, joined to the released session id, judges pseudonymised.
    ratings = list(csv.DictReader((directory / "judging" / "judging_ratings.csv").open()))
    assert sorted(r["score"] for r in ratings) == ["4", "5"]
    assert {r["session_id"] for r in ratings} == {row["session_id"]}
    assert {r["condition"] for r in ratings} == {session["condition"]}
    assert all(r["text"] == "" and r["kept"] == "true" for r in ratings)
    assert len({r["judge"] for r in ratings}) == 2 and not {r["judge"] for r in ratings} & set(JUDGES)
    rubric = json.loads((directory / "judging" / "judging_rubric.json").read_text())
    assert [level["score"] for level in rubric["rubric"]] == [5, 4, 3, 2, 1]
    assert rubric["judges_per_item"] == 2 and rubric["agreement"] == "Krippendorff's alpha, ordinal"

    # The preregistration record, byte for byte, and its signature still holds.
    assert (directory / "preregistration.json").read_bytes() == (folder / "preregistration.json").read_bytes()
    plan_record.verify(plan_record.load(directory / "preregistration.json"))
    assert not (directory / "preregistration.key").exists()
    assert "replaces" in json.loads((directory / "preregistration.json").read_text())
    assert [p.name for p in directory.rglob("preregistration*")] == ["preregistration.json"]

    # The director's contact is published on purpose; what the writer typed is still caught.
    card = (directory / "README.md").read_text()
    assert f"**The study's contact, published on purpose.** {CONSENT_LINE}" in card
    assert "- `arms.json`:" in card and "- `judging/`:" in card and "- `preregistration.json`:" in card
    for path in directory.rglob("*"):
        if path.is_file() and path.name not in ("README.md", "datapackage.json", "SHA256SUMS", "preregistration.json"):
            data = path.read_bytes()
            for secret in (DIRECTOR_EMAIL, "723-2300", "555-2671", *JUDGES, session["session_id"]):
                assert secret.encode() not in data, (path.name, secret)
    verified = CliRunner().invoke(main, ["release", "verify", str(directory)])
    assert verified.exit_code == 0, verified.output

    # A reader's `study report` of the release puts the planned comparison and the ratings first.
    from study.report import write_report
    from tests.report.conftest import Tables

    write_report(directory, tmp_path / "report.html", processes=1)
    tables = Tables((tmp_path / "report.html").read_text())
    assert list(tables.sections)[0] == "plan"
    (comparison,) = tables.sections["plan"][0][1:]
    assert comparison[1] == "quality (judging)"
    assert comparison[5] == ("1 / 0" if session["condition"] == "creative-high" else
                             "0 / 1" if session["condition"] == "creative-low" else "0 / 0")
    assert "listed only from the study folder" in tables.texts["plan"]
    assert tables.rows("judging", 0)[session["condition"]][1] == "4.50"  # the judges' 4 and 5


def _one_session_to_judge(tmp_path, k: int):
    """A declared study with one finished session and a judging round of `k` judges built on it."""
    folder = a_study(tmp_path, declared=True)
    edit(folder, lambda data: data.update(judging={"unit": "document", "k": k, "items_per_task": 5}))
    one_session(folder, " A plain sentence.")
    study = config.load(folder)
    engine = make_engine(study.database_url)
    with writing(engine) as connection:
        assert build_round(connection, study, judging_settings.from_study(study)).items == 1
    engine.dispose()
    return folder, study


def test_a_judge_who_withdrew_leaves_the_judging_files_of_the_next_release(tmp_path):
    folder, study = _one_session_to_judge(tmp_path, k=2)
    for worker_id, score in zip(JUDGES, (4, 5)):
        judge(study, worker_id, score)
    key = init_keyfile(tmp_path / "study.key")
    assert CliRunner().invoke(main, ["withdraw", JUDGES[0], "--key", str(key.path)]).exit_code == 0

    out = tmp_path / "releases"
    result = CliRunner().invoke(main, ["release", "build", str(folder), "--version", "1.0.0",
                                       "--out", str(out), "--key", str(key.path), "-j", "1"])
    assert result.exit_code == 0, result.output

    judging = out / "coauthor-1.0.0" / "judging"
    withdrawn, stays = (pseudonym(key, j, "coauthor") for j in JUDGES)
    ratings = list(csv.DictReader((judging / "judging_ratings.csv").open()))
    assert [(r["judge"], r["score"]) for r in ratings] == [(stays, "5")]
    judges = {r["judge"] for r in csv.DictReader((judging / "judging_judges.csv").open())}
    assert withdrawn not in judges
    (per_session,) = csv.DictReader((judging / "judging_sessions.csv").open())
    assert (per_session["ratings"], per_session["mean_score"]) == ("1", "5.0000")
    rubric = json.loads((judging / "judging_rubric.json").read_text())
    # One judge is left: no item has two ratings to agree on.
    assert rubric["agreement_result"] is None or rubric["agreement_result"]["ratings"] == 0


def test_the_data_package_lists_the_design_files_with_their_checksums(tmp_path):
    """A reader who opens datapackage.json (or validates it with frictionless) finds every data
    file of the release, the judging ratings and arms included, each with its SHA-256."""
    folder, study = _one_session_to_judge(tmp_path, k=1)
    judge(study, JUDGES[0], 4)

    result, directory, key = build(folder, tmp_path)
    assert result.exit_code == 0, result.output

    package = json.loads((directory / "datapackage.json").read_text())
    listed = {r["path"]: r for r in package["resources"]}
    documents = {"README.md", "CHANGELOG.md", "datapackage.json", "SHA256SUMS"}
    files = {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()}
    assert "judging/judging_ratings.csv" in files and "arms.json" in files
    assert sorted(files - documents - set(listed)) == []
    sums = dict(line.split("  ")[::-1] for line in (directory / "SHA256SUMS").read_text().splitlines())
    assert listed["judging/judging_ratings.csv"]["hash"] == "sha256:" + sums["judging/judging_ratings.csv"]


def test_a_study_with_a_chat_arm_releases_its_sessions_without_reporting_the_conversations_file(tmp_path):
    """`study export` writes a chat arm's conversations beside the logs (chat-arm-conversations.jsonl);
    the release, built from that export, is not missing a session for it."""
    folder = tmp_path / "study"
    write_study_files(folder, design="realhumaneval", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    study = config.load(folder)
    client = create_app(study, suggestion_engine=object()).test_client()
    events = [json.loads(line) for line in (COAUTHOR / "sessions" / f"{SMALLEST}.jsonl").read_text().splitlines()]
    arms = {}
    for code in ("lab-control", "lab-ghost", "lab-chat"):  # the three arms, in study.toml order
        arms[code] = start(client, access_code=code)
        to_writing(client, arms[code], prompt="obama")
    for code in ("lab-control", "lab-chat"):
        take_part(client, arms[code], events)
    client.application.extensions["study.engine"].dispose()
    key = init_keyfile(tmp_path / "study.key")

    result = CliRunner().invoke(main, ["release", "build", str(folder), "--version", "1.0.0",
                                       "--out", str(tmp_path / "releases"), "--key", str(key.path), "-j", "1"])

    assert result.exit_code == 0, result.output
    assert "Built" in result.output and "2 sessions by 2 writers" in result.output
    assert "without a metadata row" not in result.output and "chat-arm-conversations" not in result.output
    rows = list(csv.DictReader((tmp_path / "releases" / "realhumaneval-1.0.0" / "metadata.csv").open()))
    assert sorted(r["paradigm"] for r in rows) == ["chat", "none"]


def _released_with_three_arms(tmp_path, export: bool = False):
    """A RealHumanEval-style study (no model, ghost text, chat) whose control and chat writers
    finish a session, the ghost-text writer none; its release 1.0.0 (and, if `export`, its
    `study export` in tmp_path/export)."""
    folder = tmp_path / "study"
    write_study_files(folder, design="realhumaneval", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    study = config.load(folder)
    client = create_app(study, suggestion_engine=object()).test_client()
    events = [json.loads(line) for line in (COAUTHOR / "sessions" / f"{SMALLEST}.jsonl").read_text().splitlines()]
    for code in ("lab-control", "lab-ghost", "lab-chat"):  # the three arms, in study.toml order
        session_id = start(client, access_code=code)
        to_writing(client, session_id, prompt="obama")
        if code != "lab-ghost":
            take_part(client, session_id, events)
    client.application.extensions["study.engine"].dispose()
    key = init_keyfile(tmp_path / "study.key")
    runner = CliRunner()
    if export:
        exported = runner.invoke(main, ["export", str(folder), "--out", str(tmp_path / "export")])
        assert exported.exit_code == 0, exported.output
    result = runner.invoke(main, ["release", "build", str(folder), "--version", "1.0.0",
                                  "--out", str(tmp_path / "releases"), "--key", str(key.path), "-j", "1"])
    assert result.exit_code == 0, result.output
    directory = tmp_path / "releases" / "realhumaneval-1.0.0"
    assert runner.invoke(main, ["release", "verify", str(directory), "--key", str(key.path)]).exit_code == 0
    return directory


def test_a_chat_arms_suggestion_counts_are_not_applicable_in_the_release_as_in_the_export(tmp_path):
    """A chat arm's writer had no Tab list: metadata.csv leaves its suggestion counts empty (not
    applicable), as the control arm's and as `study export` does, not 0 (which would say the writer
    could ask and never did); datapackage.json's `paradigm` field says so."""
    directory = _released_with_three_arms(tmp_path, export=True)

    counts = ("num_query", "num_selected", "perc_selected")
    released = {r["paradigm"]: r for r in csv.DictReader((directory / "metadata.csv").open(encoding="utf-8"))}
    export = {r["paradigm"]: r for r in csv.DictReader((tmp_path / "export" / "metadata.csv").open(encoding="utf-8"))}
    for paradigm in ("chat", "none"):
        assert [released[paradigm][c] for c in counts] == ["", "", ""], paradigm
        assert [export[paradigm][c] for c in counts] == ["", "", ""], paradigm
    package = json.loads((directory / "datapackage.json").read_text(encoding="utf-8"))
    (metadata,) = [r for r in package["resources"] if r["path"] == "metadata.csv"]
    (field,) = [f for f in metadata["schema"]["fields"] if f["name"] == "paradigm"]
    assert "chat (a chat assistant in a panel beside the editor, no Tab list: its suggestion counts are empty" in field["description"]


def test_summary_csv_gives_the_means_of_each_arm_by_its_name_and_no_suggestion_figures_without_a_tab_list(tmp_path):
    """summary.csv's conditions are the arms metadata.csv and the card name, not a reading of
    their temperatures (which put a control arm, calling no model, under "unknown"); a control
    or chat arm's queries and acceptance are empty there and in stats.csv, as in metadata.csv,
    not a mean of zeros."""
    directory = _released_with_three_arms(tmp_path)

    summary = {(r["grouping"], r["group"]): r for r in csv.DictReader((directory / "summary.csv").open(encoding="utf-8"))}
    assert {group for grouping, group in summary if grouping == "condition"} == {"no-model", "chat", "combined"}
    for group in ("no-model", "chat", "combined"):
        row = summary[("condition", group)]
        assert (row["sessions"], row["queries"], row["acceptance (%)"]) == ("1" if group != "combined" else "2", "", ""), group
        assert row["length (words)"] != "", group  # what the logs do say is still averaged
    metadata = {r["session_id"]: r["paradigm"] for r in csv.DictReader((directory / "metadata.csv").open(encoding="utf-8"))}
    for row in csv.DictReader((directory / "stats.csv").open(encoding="utf-8")):
        assert (row["num_query"], row["num_selected"], row["perc_selected"]) == ("", "", ""), metadata[row["session_id"]]
        assert row["num_event"] != ""
        # No model at all in the control arm: no turns to share, no interaction (as the report
        # reads them); the chat arm had a model, so its scores stand.
        scores = (row["equality"], row["mutuality"])
        assert (scores == ("", "")) == (metadata[row["session_id"]] == "none"), (metadata[row["session_id"]], scores)
    assert summary[("condition", "no-model")]["equality"] == ""


def test_datapackage_describes_arms_json_and_summary_csv_as_they_are(tmp_path):
    """A reader of datapackage.json alone learns what arms.json's entries are and what its nulls
    mean, and that summary.csv's conditions are the arms (its queries empty without a Tab list)."""
    directory = _released_with_three_arms(tmp_path)

    package = json.loads((directory / "datapackage.json").read_text(encoding="utf-8"))
    described = {r["path"]: r.get("description") or "" for r in package["resources"]}
    assert described["arms.json"].startswith("Every arm (condition) of the study as its released sessions ran it")
    assert "null is a setting nothing stored with the sessions records" in described["arms.json"]
    arms = json.loads((directory / "arms.json").read_text(encoding="utf-8"))["arms"]
    for key in arms[0]:  # every key of an entry is named in the description
        assert f"{key}" in described["arms.json"], key
    assert "a condition is the arm metadata.csv names" in described["summary.csv"]
    assert "empty for a group without one" in described["summary.csv"]


def test_the_cards_purpose_is_comparing_the_arms_when_they_are_not_all_coauthors_tab_list(tmp_path):
    """No model, ghost text and a chat panel: the study was not about a model that suggests the
    next sentence on request, as CoAuthor's was, and the card's Motivation does not say it was."""
    directory = _released_with_three_arms(tmp_path)

    card = (directory / "README.md").read_text(encoding="utf-8")
    motivation = card.split("## Motivation", 1)[1].split("## ", 1)[0]
    assert "suggests the next sentence on request" not in motivation
    assert "To compare how people write in the study's arms" in motivation


def test_the_card_describes_each_arm_as_it_ran_and_says_where_a_chat_arms_conversations_are(tmp_path):
    """A reader of a RealHumanEval-style release (no model, ghost text, chat) learns from the card
    what each arm's writers had, not that everyone pressed Tab for a list."""
    card = (_released_with_three_arms(tmp_path) / "README.md").read_text()
    collection = card.split("## Collection process\n", 1)[1].split("**Over what timeframe?**")[0]
    assert "pressing Tab asks the model for suggestions" not in collection
    assert "- `no-model` (none): no assistant (a control arm)" in collection
    assert "- `autocomplete` (L1): ghost text (MindCopilot's L1)" in collection
    assert "- `chat` (chat): a chat assistant in a panel beside the editor" in collection
    assert "The conversations are in `conversations.jsonl`, under the session's id" in collection


def test_judging_ratings_are_in_the_order_of_released_ids_not_of_the_judges_worker_ids(tmp_path):
    """A reader of judging_ratings.csv cannot learn which judge's worker id sorts first: the rows
    follow the released session ids and the judges' pseudonyms."""
    folder, study = _one_session_to_judge(tmp_path, k=2)
    key = init_keyfile(tmp_path / "study.key")
    # Two judges whose worker ids sort the other way from their pseudonyms under this key.
    workers = [f"A2JUDGEWORKER{n:03d}" for n in range(30)]
    first, second = next((a, b) for a in workers for b in workers
                         if a < b and pseudonym(key, a, "coauthor") > pseudonym(key, b, "coauthor"))
    judge(study, first, 4)
    judge(study, second, 5)

    out = tmp_path / "releases"
    result = CliRunner().invoke(main, ["release", "build", str(folder), "--version", "1.0.0",
                                       "--out", str(out), "--key", str(key.path), "-j", "1"])
    assert result.exit_code == 0, result.output

    ratings = list(csv.DictReader((out / "coauthor-1.0.0" / "judging" / "judging_ratings.csv").open()))
    assert [(r["judge"], r["score"]) for r in ratings] == [
        (pseudonym(key, second, "coauthor"), "5"), (pseudonym(key, first, "coauthor"), "4")]
