"""`study report` of a within-subjects study (study.report.sections.within): the design as it
ran (arm lists, Latin-square rows, who began, completed every arm or stopped part-way) and each
participant's arms paired; a between-subjects study's report has no such section."""

from __future__ import annotations

from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.server import create_app
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.conftest import CONTACT
from tests.report.conftest import Tables, number
from tests.server.flow import INIT_EVENT, start, to_writing
from tests.server.study_edits import edit_arms, five_arms

PROMPT = "Prompt.\n"
# Words each arm's sessions end with more than the prompt: next-sentence is 10 words longer than
# no-ai for every participant, next-paragraph 30 longer, whatever their own level.
WORDS = {"no-ai": 10, "next-sentence": 20, "next-paragraph": 40}


def _write(client, session_id: str, words: int) -> None:
    """Type `words` words after the prompt, finish, and answer the self-evaluation and survey."""
    text = " ".join(["word"] * words)
    init = {**INIT_EVENT, "seq": 0, "currentDoc": PROMPT, "currentCursor": len(PROMPT) - 1}
    typed = {**INIT_EVENT, "seq": 1, "eventName": "text-insert", "eventSource": "user",
             "eventTimestamp": INIT_EVENT["eventTimestamp"] + 60_000,
             "textDelta": {"ops": [{"retain": len(PROMPT) - 1}, {"insert": " " + text}]},
             "currentDoc": PROMPT[:-1] + " " + text + "\n", "currentCursor": len(PROMPT) + len(text)}  # fmt: skip
    response = client.post(f"/api/sessions/{session_id}/events", json={"events": [init, typed]})
    assert response.status_code == 200, response.json
    finished = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 1, "text": typed["currentDoc"]})
    assert finished.status_code == 200, finished.json
    client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes", "collaborated": "yes"})
    answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
    client.post(f"/s/{session_id}/survey", data=answers)


def _condition(folder, session_id: str) -> str:
    engine = make_engine(config.load(folder).database_url)
    with reading(engine) as connection:
        condition = session_store.get(connection, session_id)["condition"]
    engine.dispose()
    return condition


def _report(folder, tmp_path) -> Tables:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return Tables(out.read_text(encoding="utf-8"))


def _dhillon_with_four_participants(tmp_path):
    """p1-p3 write in all three arms (rows 0, 1, 2); p4 (row 3, row 0's mirror image) stops after one."""
    folder = tmp_path / "dhillon"
    write_study_files(folder, design="dhillon", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    client = create_app(config.load(folder), suggestion_engine=object()).test_client()
    for code, parts in (("p1", 3), ("p2", 3), ("p3", 3), ("p4", 1)):
        for part in range(parts):
            session_id = start(client, access_code=code, **({"another": "1"} if part else {}))
            to_writing(client, session_id, prompt=None)  # a prompt of their own for each arm
            _write(client, session_id, WORDS[_condition(folder, session_id)])
    return folder


def test_a_within_subjects_report_shows_the_design_and_each_participant_s_arms_paired(tmp_path):
    tables = _report(_dhillon_with_four_participants(tmp_path), tmp_path)

    design = {tuple(row[1:3]): row[3:] for row in tables.sections["within"][0][1:]}
    arms = "no-ai, next-sentence, next-paragraph"
    # began, completed every arm, part-way, per row of the square
    assert design[(arms, "0")] == ["no-ai → next-sentence → next-paragraph", "1", "1", "0"]
    assert design[(arms, "1")] == ["next-sentence → next-paragraph → no-ai", "1", "1", "0"]
    assert design[(arms, "2")] == ["next-paragraph → no-ai → next-sentence", "1", "1", "0"]
    assert design[(arms, "3")] == ["next-paragraph → next-sentence → no-ai", "1", "0", "1"]
    assert design[("", "")] == ["", "4", "3", "1"]

    paired = tables.sections["within"][1]
    length = paired[0].index("length (words)")
    rows = {row[0]: row for row in paired[1:]}
    assert rows["next-sentence - no-ai"][1] == "3"  # p4 wrote in next-paragraph only: not paired
    assert number(rows["next-sentence - no-ai"][length]) == 10
    assert number(rows["next-paragraph - no-ai"][length]) == 30
    assert number(rows["next-paragraph - next-sentence"][length]) == 20

    by_position = tables.rows("within", 2)
    assert by_position["1"][0] == "4" and by_position["2"][0] == "3" and by_position["3"][0] == "3"
    text = tables.texts["within"]
    assert "p1" not in text and "p4" not in text  # participants counted, never named


def test_a_participant_who_began_in_the_cyclic_square_is_shown_in_its_row_and_order(tmp_path):
    # Five arms. p1 began under a version that gave an odd number of arms the cyclic square (a
    # sequence stored without its square) and finished their row there; p2 began since, in
    # Williams' design, and wrote one part.
    folder = tmp_path / "dhillon"
    write_study_files(folder, design="dhillon", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    edit_arms(folder, five_arms)
    arms = [c.name for c in config.load(folder).conditions]
    words = {name: 10 * (number + 1) for number, name in enumerate(arms)}
    for code, parts in (("p1", 1), ("p1", 4), ("p2", 1)):
        client = create_app(config.load(folder), suggestion_engine=object()).test_client()
        for part in range(parts):
            session_id = start(client, access_code=code, **({"another": "1"} if parts == 4 or part else {}))
            to_writing(client, session_id, prompt=None)
            _write(client, session_id, words[_condition(folder, session_id)])
        if code == "p1" and parts == 1:
            engine = make_engine(config.load(folder).database_url)
            with engine.begin() as connection:
                connection.exec_driver_sql("UPDATE sessions SET within_order = json_remove(within_order, '$.square')")
            engine.dispose()

    tables = _report(folder, tmp_path)
    design = {tuple(row[1:3]): row[3:] for row in tables.sections["within"][0][1:]}
    listed = ", ".join(arms)
    assert design[(listed, "0 (cyclic square)")] == [" → ".join(arms), "1", "1", "0"]
    williams = [arms[i] for i in (1, 2, 0, 3, 4)]  # row 1 of Williams' design for five arms
    assert design[(listed, "1")] == [" → ".join(williams), "1", "0", "1"]


def test_a_between_subjects_report_has_no_within_subjects_section(tmp_path):
    folder = tmp_path / "between"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    client = create_app(config.load(folder), suggestion_engine=object()).test_client()
    for code in ("a", "b"):
        session_id = start(client, access_code=code)
        to_writing(client, session_id)
        _write(client, session_id, 12)
    tables = _report(folder, tmp_path)
    assert "within" not in tables.sections and "allocation" in tables.sections


def test_a_within_subjects_comparison_stays_paired_when_most_participants_stop_part_way(tmp_path):
    # A methods reviewer's case: p1-p3 write in all three arms, six more stop after their first.
    # Writers differ in how much they write (5 words a participant), next-sentence adds exactly
    # 10. Most of next-sentence's and no-ai's writers wrote in one of them only, and the
    # preregistered test, and "Arms compared", had turned into one of independent groups: the
    # analysis changed with the dropout. The design fixes it: paired over p1-p3, the others counted.
    from study.plan import record as record_module
    from tests.plan.conftest import edit

    folder = tmp_path / "dhillon"
    write_study_files(folder, design="dhillon", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    plan = {"outcomes": [{"name": "length", "measure": "final_words"}],
            "comparisons": [{"name": "H1", "outcome": "length", "treatment": "next-sentence", "control": "no-ai"}]}
    edit(folder, lambda data: data.update(plan=plan))
    record_module.write(folder, record_module.sign(record_module.build(config.load(folder)), record_module.key(folder)))
    client = create_app(config.load(folder), suggestion_engine=object()).test_client()
    for number in range(9):
        for part in range(3 if number < 3 else 1):
            session_id = start(client, access_code=f"p{number}", **({"another": "1"} if part else {}))
            to_writing(client, session_id, prompt=None)
            _write(client, session_id, WORDS[_condition(folder, session_id)] + 5 * number)

    tables = _report(folder, tmp_path)
    design = {tuple(row[1:3]): row[3:] for row in tables.sections["within"][0][1:]}
    assert design[("", "")] == ["", "9", "3", "6"]  # began, completed every arm, part-way
    planned = tables.rows("plan", 0)["H1"]
    assert planned[7:] == ["10.00", "[10.00, 10.00]", "paired, 3 writers (4 in one arm only left out)"]
    compared = tables.rows("arms", 1)["next-sentence - no-ai"]
    length = tables.sections["arms"][1][0].index("length (words)")
    assert compared[0] == "paired (4 in one arm only left out)"
    assert compared[length - 1] == "10.00 [10.00, 10.00]"
    assert "inferred" not in tables.texts["arms"] + tables.texts["plan"]  # the design is known
