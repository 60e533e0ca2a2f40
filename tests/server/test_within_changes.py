"""A within-subjects study (`[design] assignment = "within"`, study.server.within) whose arms change
in study.toml mid-study, through the Flask test client on one real SQLite database: whoever began
keeps the arm list and order they began with, new participants get a square of their own from
row 0, and an arm someone part-way through is still owed cannot silently disappear."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from study import config
from study.cli import main
from study.server import serving
from study.server.within import latin_square
from study.store import make_engine
from tests.server.study_edits import (
    DHILLON_ARMS, conditions_given, dhillon_study, edit_arms, five_arms, serve_again, told_all_done, write_part,
)


def _add_two_sentences(conditions: list[dict]) -> list[dict]:
    # An arm a pilot showed was missing, added at the end of the list.
    return [*conditions, {**conditions[1], "name": "next-two-sentences", "max_tokens": 60}]


def test_participants_part_way_through_keep_their_order_when_an_arm_is_added(tmp_path):
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    writers = ["p1", "p2", "p3"]
    taken = {code: [write_part(client, code, first=True)] for code in writers}

    edit_arms(folder, _add_two_sentences)
    client = serve_again(folder)  # `study serve` again, on the same database
    for code in writers:
        taken[code] += [write_part(client, code, first=False) for _ in range(2)]
        # Their third part was their last: the page says so rather than offer the new arm.
        page = client.get(f"/s/{taken[code][-1]}/complete").get_data(as_text=True)
        assert "You have written every part of this study." in page and "another=1" not in page
        assert told_all_done(client, code)

    given = conditions_given(folder)
    orders = [[given[s] for s in taken[code]] for code in writers]
    # Each writer's order is their row of the three-arm square they began with, whole: no
    # position repeats across them, and none was given the arm added after they began.
    assert orders == [[DHILLON_ARMS[i] for i in row] for row in latin_square(3)[:3]]


def test_a_participant_back_after_every_arm_is_told_so_before_any_prompt_is_offered(tmp_path):
    # The "another" link of an earlier part's page, or a bookmark of it, followed after the last
    # part: the entry says the study is done rather than start a session to pick prompts in.
    client = serve_again(dhillon_study(tmp_path))
    for first in (True, False, False):
        write_part(client, "p1", first=first)

    page = client.get("/task?access_code=p1&another=1", follow_redirects=True).get_data(as_text=True)

    assert "You have written in every part of this study." in page
    assert "prompt-option" not in page and "Choose a prompt" not in page


def test_new_participants_after_an_arm_is_added_start_a_square_of_their_own_at_row_0(tmp_path):
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    for code in ("p1", "p2"):  # two began with three arms (rows 0 and 1 of that square)
        write_part(client, code, first=True)

    edit_arms(folder, _add_two_sentences)
    client = serve_again(folder)
    arms = [*DHILLON_ARMS, "next-two-sentences"]
    newcomers = ["n1", "n2", "n3", "n4"]
    taken = {code: [write_part(client, code, first=part == 0) for part in range(4)] for code in newcomers}
    assert all(told_all_done(client, code) for code in newcomers)

    given = conditions_given(folder)
    orders = [[given[s] for s in taken[code]] for code in newcomers]
    # The first newcomer takes row 0 of the four-arm square (Williams' design), not row 2 as if
    # the two who began with three arms were in this square too...
    assert orders == [[arms[i] for i in row] for row in latin_square(4)]
    # ...so four newcomers put every arm in every position exactly once.
    for position in range(4):
        assert sorted(order[position] for order in orders) == sorted(arms)


def test_serve_refuses_a_study_toml_without_an_arm_participants_part_way_through_are_owed(tmp_path, monkeypatch):
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    for code in ("p1", "p2", "p3"):
        write_part(client, code, first=True)  # p1 and p2 still owe next-paragraph, p3 wrote in it
    # Every session is complete: only the arm lists the participants began with still need it.
    before = edit_arms(folder, lambda conditions: [c for c in conditions if c["name"] != "next-paragraph"])

    served = []
    monkeypatch.setattr(serving, "run", lambda app, **options: served.append(app))
    result = CliRunner().invoke(main, ["serve", str(folder)])
    assert result.exit_code != 0 and served == []
    assert str(folder / "study.toml") in result.output
    assert "no entry with name = 'next-paragraph'" in result.output
    assert "2 participant(s) part-way through a within-subjects sequence" in result.output
    assert "Fix: restore that [[conditions]] entry" in result.output
    status = CliRunner().invoke(main, ["status", str(folder)])
    assert "Participants by the arm list they began with: 3 with no-ai, next-sentence, next-paragraph\n" in status.output

    edit_arms(folder, lambda _: before)  # the fix: the arm restored until they have written in it
    result = CliRunner().invoke(main, ["serve", str(folder)])
    assert result.exit_code == 0, result.output
    assert len(served) == 1


def test_study_status_counts_the_participants_who_began_with_each_arm_list(tmp_path):
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    for code in ("p1", "p2", "p3"):
        write_part(client, code, first=True)
    one_list = CliRunner().invoke(main, ["status", str(folder)])
    assert one_list.exit_code == 0, one_list.output
    assert "arm list" not in one_list.output  # nothing changed: nothing to say

    edit_arms(folder, _add_two_sentences)
    write_part(serve_again(folder), "n1", first=True)
    both = CliRunner().invoke(main, ["status", str(folder)])
    assert both.exit_code == 0, both.output
    assert ("Participants by the arm list they began with: 3 with no-ai, next-sentence, next-paragraph; "
            "1 with no-ai, next-sentence, next-paragraph, next-two-sentences (study.toml's now)") in both.output


def test_a_database_from_before_arm_lists_were_stored_opens_and_its_participants_go_on_as_before(tmp_path):
    # Two participants began under a version that stored no arm list: the column is added when
    # the study is served again; they go on in study.toml's arms at the rows of their arrival,
    # and the next participant continues that square (row 2) rather than restart it.
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    taken = {code: [write_part(client, code, first=True)] for code in ("p1", "p2")}
    engine = make_engine(config.load(folder).database_url)
    with engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE sessions DROP COLUMN within_order")
    engine.dispose()

    client = serve_again(folder)
    for code in ("p1", "p2"):
        taken[code] += [write_part(client, code, first=False) for _ in range(2)]
    taken["p3"] = [write_part(client, "p3", first=part == 0) for part in range(3)]
    assert all(told_all_done(client, code) for code in taken)
    given = conditions_given(folder)
    orders = [[given[s] for s in taken[code]] for code in ("p1", "p2", "p3")]
    assert orders == [[DHILLON_ARMS[i] for i in row] for row in latin_square(3)[:3]]


@pytest.mark.parametrize("older", [
    "UPDATE sessions SET within_order = json_remove(within_order, '$.square')",  # stored no square
    "ALTER TABLE sessions DROP COLUMN within_order",  # stored no sequence at all
])  # fmt: skip
def test_a_participant_who_began_in_the_cyclic_square_keeps_their_order_and_a_newcomer_takes_williams(tmp_path, older):
    # Five arms, under an older version, which gave an odd number of arms the cyclic square:
    # p1 wrote one part (row 0), p2 two (row 1).
    folder = dhillon_study(tmp_path)
    edit_arms(folder, five_arms)
    arms = [c.name for c in config.load(folder).conditions]
    client = serve_again(folder)
    taken = {"p1": [write_part(client, "p1", first=True)]}
    taken["p2"] = [write_part(client, "p2", first=part == 0) for part in range(2)]
    engine = make_engine(config.load(folder).database_url)
    with engine.begin() as connection:
        connection.exec_driver_sql(older)
    engine.dispose()

    client = serve_again(folder)
    taken["p1"] += [write_part(client, "p1", first=False) for _ in range(4)]
    taken["p2"] += [write_part(client, "p2", first=False) for _ in range(3)]
    taken["p3"] = [write_part(client, "p3", first=part == 0) for part in range(5)]
    assert all(told_all_done(client, code) for code in taken)
    given = conditions_given(folder)
    orders = {code: [given[s] for s in sessions] for code, sessions in taken.items()}
    # p1 and p2 finish their cyclic rows (0 and 1) whole: no one's order changes part-way...
    assert orders["p1"] == [arms[i] for i in (0, 1, 2, 3, 4)]
    assert orders["p2"] == [arms[i] for i in (1, 2, 3, 4, 0)]
    # ...and the third participant takes row 2 of Williams' design (ten rows for five arms).
    assert orders["p3"] == [arms[i] for i in latin_square(5)[2]] == [arms[i] for i in (2, 3, 1, 4, 0)]
