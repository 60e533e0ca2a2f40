"""A judging round's agreement is the same figure wherever it is read: `study judging status` on
the study folder and the judging_rubric.json a release carries (which the release's report
shows) give the same alpha and the same 95% interval, though the release lists the ratings in
the order of its pseudonyms rather than the study database's."""

from __future__ import annotations

import csv
import json
import re
from html import unescape

from click.testing import CliRunner

from study import config
from study.cli import main
from study.release.keys import init_keyfile
from study.server import create_app
from tests.release.test_contact import a_study
from tests.server.flow import INIT_EVENT

TEXTS = [
    "The wolf ran into the forest. It never came back. Nobody asked why.",
    "Schools should start later. Teenagers sleep late. Grades rise when they rest.",
    "The lighthouse keeper counted ships. One night none came. He kept the light on anyway.",
    "Remote work helps families. Commutes waste hours. Offices still matter for some.",
    "A dragon learned to bake bread. The village loved it. The knights were confused.",
    "Public transport should be free. Cars clog cities. Buses are cheaper for everyone.",
]


def write(client, study, number: int, text: str) -> None:
    """A lab writer's session through the real pages: consent to survey, typing `text`."""
    session_id = client.get("/task", query_string={"access_code": f"writer-{number}"}).location.split("/")[2]
    assert client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    assert client.post(f"/s/{session_id}/instructions").status_code == 302
    page = client.get(f"/s/{session_id}/prompt").get_data(as_text=True)
    code = re.search(r'name="prompt" value="([^"]+)"', page).group(1)
    assert client.post(f"/s/{session_id}/prompt", data={"prompt": code}).status_code == 302
    doc, typed = study.prompt(code).text, " " + text
    events = [{**INIT_EVENT, "seq": 0, "currentDoc": doc, "currentCursor": len(doc)},
              {**INIT_EVENT, "seq": 1, "eventName": "text-insert", "eventSource": "user",
               "textDelta": {"ops": [{"retain": len(doc)}, {"insert": typed}]},
               "currentDoc": doc + typed, "currentCursor": len(doc + typed)}]  # fmt: skip
    assert client.post(f"/api/sessions/{session_id}/events", json={"events": events}).status_code == 200
    assert client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 1, "text": doc + typed}).status_code == 200
    assert client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes", "collaborated": "yes"}).status_code == 302
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302


def judge(client, code: str, bias: int) -> None:
    entered = client.get("/judge", query_string={"access_code": code})
    assert entered.status_code == 302, entered.get_data(as_text=True)
    task_id = entered.location.rsplit("/", 1)[-1]
    page = client.get(entered.location).get_data(as_text=True)
    shown = re.findall(r'data-item="([0-9a-f]+)".*?<blockquote class="judging-text">(.*?)</blockquote>', page, re.S)
    # Judges who mostly agree, by the length of the sentence, and now and then do not.
    ratings = [{"item": item, "score": min(5, 1 + (len(unescape(text)) + bias * (n % 2)) % 5)}
               for n, (item, text) in enumerate(shown)]  # fmt: skip
    assert client.post(f"/api/judging/{task_id}/ratings", json={"ratings": ratings, "submit": True}).status_code == 200


def released(tmp_path):
    """A study of six lab writers' texts judged sentence by sentence by twelve judges (no gold
    items), and its release; returns the study folder, `study judging status`'s output and the
    release's folder."""
    folder = a_study(tmp_path, declared=True)
    text = (folder / "study.toml").read_text()
    (folder / "study.toml").write_text(text + '\n[judging]\nunit = "sentence"\nk = 2\nitems_per_task = 3\n')
    study = config.load(folder)
    app = create_app(study, suggestion_engine=object())
    client = app.test_client()
    for number, typed in enumerate(TEXTS):
        write(client, study, number, typed)
    runner = CliRunner()
    assert runner.invoke(main, ["judging", "build", str(folder)]).exit_code == 0
    for number in range(12):
        judge(client, f"judge-{number}", bias=number % 3)
    app.extensions["study.engine"].dispose()
    status = runner.invoke(main, ["judging", "status", str(folder)]).output
    key = init_keyfile(tmp_path / "study.key")
    built = runner.invoke(main, ["release", "build", str(folder), "--version", "1.0.0", "--out",
                                 str(tmp_path / "releases"), "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert built.exit_code == 0, built.output
    return folder, status, tmp_path / "releases" / "coauthor-1.0.0"


def test_the_release_gives_the_round_s_alpha_and_interval_as_the_study_does(tmp_path):
    _, status, release = released(tmp_path)
    alpha, low, high = re.search(r"alpha \(ordinal\): (-?[\d.]+) \(95% CI (-?[\d.]+) to (-?[\d.]+)\)", status).groups()
    rubric = json.loads((release / "judging" / "judging_rubric.json").read_text())
    released_alpha = rubric["agreement_result"]
    assert [f"{released_alpha[k]:.2f}" for k in ("alpha", "low", "high")] == [alpha, low, high], status


def test_a_round_without_gold_items_lists_every_judge_and_the_release_report_counts_them(tmp_path):
    folder, status, release = released(tmp_path)
    assert "judges 12, flagged by gold 0" in status
    judges = list(csv.DictReader((release / "judging" / "judging_judges.csv").open()))
    assert len(judges) == 12 and {(j["gold_rated"], j["flagged"]) for j in judges} == {("0", "false")}
    for source, out in ((folder, tmp_path / "study.html"), (release, tmp_path / "release.html")):
        assert CliRunner().invoke(main, ["report", str(source), "--out", str(out)]).exit_code == 0
        assert "36 ratings kept from 12 judges; 0 judge(s) failed the gold items" in unescape(out.read_text()), source
