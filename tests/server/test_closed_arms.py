"""An arm closed to new participants (`assign = false` in its [[conditions]] entry) mid-study,
through the Flask test client on one real SQLite database, `study serve` started again on it
as a researcher would after a pilot showed the arm broken: no new session is given it, the
sessions already given it finish and export, and within subjects the participants owed it
still write in it."""

from __future__ import annotations

import csv

from click.testing import CliRunner

from study.cli import main
from study.server import serving
from study.server.within import latin_square
from tests.server.flow import finish, start, to_writing
from tests.server.study_edits import DHILLON_ARMS as ARMS
from tests.server.study_edits import conditions_given as _given
from tests.server.study_edits import dhillon_study, edit_arms, serve_again, told_all_done, write_part

CLOSED_PAGE = "This study is not taking new writers at the moment."


def _close(folder, *names) -> None:
    """What the researcher does once a pilot shows these arms broken."""
    edit_arms(folder, lambda arms: [{**c, "assign": False} if c["name"] in names else c for c in arms])


def _remove(folder, name) -> None:
    edit_arms(folder, lambda arms: [c for c in arms if c["name"] != name])


def _serve(folder, monkeypatch):
    served = []
    monkeypatch.setattr(serving, "run", lambda app, **options: served.append(app))
    return CliRunner().invoke(main, ["serve", str(folder)]), served


def test_a_closed_arm_gets_no_new_session_while_its_open_sibling_does(study_folder):
    _close(study_folder, "creative-low")
    client = serve_again(study_folder)
    creative = []
    for i in range(4):
        creative.append(start(client, access_code=f"w{i}"))
        to_writing(client, creative[-1], prompt="shapeshifter")
    argumentative = []
    for i in range(2):
        argumentative.append(start(client, access_code=f"a{i}"))
        to_writing(client, argumentative[-1], prompt="screen")
    given = _given(study_folder)
    # The balanced rule would alternate low, high, low, high: the open sibling takes every turn.
    assert [given[s] for s in creative] == ["creative-high"] * 4
    # The other genre's arms, open, still take turns.
    assert [given[s] for s in argumentative] == ["argumentative-low", "argumentative-high"]


def test_a_session_begun_in_an_arm_before_it_closed_finishes_and_exports(study_folder, tmp_path, monkeypatch):
    client = serve_again(study_folder)
    begun = start(client, access_code="early")
    to_writing(client, begun)
    assert _given(study_folder)[begun] == "creative-low"

    _close(study_folder, "creative-low")
    result, served = _serve(study_folder, monkeypatch)
    assert result.exit_code == 0, result.output
    assert len(served) == 1  # closing is not removing: no session in progress stops the server
    client = serve_again(study_folder)
    later = start(client, access_code="later")
    to_writing(client, later)
    finish(client, begun)  # its pages, events and surveys as before
    finish(client, later)

    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with open(out / "metadata.csv", newline="") as handle:
        rows = {row["session_id"]: row for row in csv.DictReader(handle)}
    assert rows[begun]["condition"] == "creative-low" and rows[later]["condition"] == "creative-high"
    assert (out / f"{begun}.jsonl").is_file()


def test_a_genre_whose_every_arm_is_closed_offers_its_prompts_to_no_new_writer(study_folder):
    client = serve_again(study_folder)
    begun = start(client, access_code="early")
    to_writing(client, begun)

    _close(study_folder, "creative-low", "creative-high")
    client = serve_again(study_folder)
    newcomer = start(client, access_code="new")
    client.post(f"/s/{newcomer}/consent", data={"consent": "yes"})
    client.post(f"/s/{newcomer}/instructions")
    page = client.get(f"/s/{newcomer}/prompt").get_data(as_text=True)
    assert "screen" in page and "shapeshifter" not in page  # only the argumentative prompts
    refused = client.post(f"/s/{newcomer}/prompt", data={"prompt": "shapeshifter"})
    assert refused.status_code == 200 and _given(study_folder)[newcomer] is None  # not bound
    finish(client, begun)  # the session given a creative arm before goes on

    _close(study_folder, "argumentative-low", "argumentative-high")
    client = serve_again(study_folder)
    closed = client.get(f"/s/{newcomer}/prompt")
    assert closed.status_code == 403 and CLOSED_PAGE in closed.get_data(as_text=True)


def test_study_status_marks_a_closed_arm(study_folder):
    client = serve_again(study_folder)
    to_writing(client, start(client, access_code="early"))
    _close(study_folder, "creative-low")
    output = CliRunner().invoke(main, ["status", str(study_folder)]).output
    assert "creative-low 1 (closed to new participants), creative-high 0, argumentative-low 0" in output


def test_removing_an_arm_sessions_in_progress_were_given_names_assign_false_as_the_fix(study_folder, monkeypatch):
    client = serve_again(study_folder)
    to_writing(client, start(client, access_code="early"))
    _remove(study_folder, "creative-low")
    result, served = _serve(study_folder, monkeypatch)
    assert result.exit_code != 0 and served == []
    assert "no entry with name = 'creative-low'" in result.output
    assert "to give it to no new session, keep the entry with assign = false" in result.output


def test_within_a_participant_owed_a_closed_arm_still_writes_in_it_and_newcomers_do_not(tmp_path, monkeypatch):
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    taken = {code: [write_part(client, code, first=True)] for code in ("p1", "p2")}

    _close(folder, "next-paragraph")
    result, served = _serve(folder, monkeypatch)
    assert result.exit_code == 0 and len(served) == 1, result.output
    client = serve_again(folder)
    for code in ("p1", "p2"):
        taken[code] += [write_part(client, code, first=False) for _ in range(2)]
        assert told_all_done(client, code)
    newcomers = ["n1", "n2"]
    for code in newcomers:
        taken[code] = [write_part(client, code, first=part == 0) for part in range(2)]
        assert told_all_done(client, code)  # two parts: the closed arm is not theirs

    given = _given(folder)
    orders = {code: [given[s] for s in sessions] for code, sessions in taken.items()}
    # Those who began keep their row of the three-arm square, closed arm and all...
    assert [orders["p1"], orders["p2"]] == [[ARMS[i] for i in row] for row in latin_square(3)[:2]]
    # ...and newcomers take a two-arm square of their own from row 0.
    open_arms = ["no-ai", "next-sentence"]
    assert [orders[code] for code in newcomers] == [[open_arms[i] for i in row] for row in latin_square(2)]


def test_within_every_arm_closed_turns_newcomers_away_and_lets_those_owed_finish(tmp_path):
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    taken = [write_part(client, "p1", first=True)]

    _close(folder, *ARMS)
    client = serve_again(folder)
    taken += [write_part(client, "p1", first=False) for _ in range(2)]
    assert told_all_done(client, "p1")
    assert sorted(_given(folder)[s] for s in taken) == sorted(ARMS)

    newcomer = start(client, access_code="n1")
    client.post(f"/s/{newcomer}/consent", data={"consent": "yes"})
    client.post(f"/s/{newcomer}/instructions")
    refused = client.get(f"/s/{newcomer}/prompt")
    assert refused.status_code == 403 and CLOSED_PAGE in refused.get_data(as_text=True)


def test_within_removing_a_closed_arm_owed_to_participants_names_assign_false(tmp_path, monkeypatch):
    folder = dhillon_study(tmp_path)
    write_part(serve_again(folder), "p1", first=True)  # p1 still owes next-sentence and next-paragraph
    _remove(folder, "next-paragraph")
    result, served = _serve(folder, monkeypatch)
    assert result.exit_code != 0 and served == []
    assert "to give it to no new participant, keep the entry with assign = false" in result.output
