"""`study report` on a preregistered study with a judging round: the planned comparisons come
first, with their estimates and every deviation from the record beside them, and the judging
round's agreement and per-arm scores have their own section."""

from __future__ import annotations

import datetime as dt
import re

from study import config
from study.judging import settings as judging_settings
from study.judging.items import build as build_round
from study.plan import record as record_module
from study.report import write_report
from study.server import create_app
from study.store import make_engine, writing
from tests.plan.conftest import PLAN, edit
from tests.report.conftest import Tables, report_study  # noqa: F401


def judge_everything(study, judges: int) -> None:
    client = create_app(study, suggestion_engine=object()).test_client()
    for judge in range(judges):
        entered = client.get(f"/judge?access_code=judge-{judge}")
        assert entered.status_code == 302, entered.get_data(as_text=True)
        task_id = entered.location.rsplit("/", 1)[-1]
        page = client.get(entered.location).get_data(as_text=True)
        items = re.findall(r'data-item="([0-9a-f]+)"', page)
        ratings = [{"item": item, "score": 4} for item in items]
        assert client.post(f"/api/judging/{task_id}/ratings", json={"ratings": ratings}).status_code == 200
        assert client.post(f"/api/judging/{task_id}/ratings", json={"submit": True}).status_code == 200
    client.application.extensions["study.engine"].dispose()


def test_the_report_shows_the_planned_comparisons_first_with_every_deviation(report_study, tmp_path):
    plan = {**PLAN, "comparisons": PLAN["comparisons"] + [
        {"name": "H2", "outcome": "quality", "treatment": "creative-high", "control": "creative-low"}]}
    edit(report_study, lambda data: data.update(plan=plan, judging={"unit": "document", "k": 2, "items_per_task": 5}))
    study = config.load(report_study)
    # The record as `study preregister` wrote it the day before the first writer came.
    yesterday = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)
    signed = record_module.sign(record_module.build(study, now=yesterday), record_module.key(study.directory))
    record_module.write(study.directory, signed)
    # Then, after launch: a changed setting and an added arm.

    def deviate(data):
        data["session"]["min_seconds"] = 30
        data["conditions"].append({"name": "no-ai", "genre": "creative", "paradigm": "none"})

    edit(report_study, deviate)
    study = config.load(report_study)
    engine = make_engine(study.database_url)
    with writing(engine) as connection:
        built = build_round(connection, study, judging_settings.from_study(study))
    engine.dispose()
    assert built.items == 3
    judge_everything(study, judges=2)

    out = tmp_path / "report.html"
    write_report(report_study, out, processes=1)
    html = out.read_text()
    tables = Tables(html)
    assert list(tables.sections)[0] == "plan"  # before everything explored
    comparisons = tables.rows("plan", 0)
    assert comparisons["H1"][0] == "own words (writer_share_final)"
    assert comparisons["H1"][1] == "creative-high vs creative-low" and comparisons["H1"][2] == "less"
    assert comparisons["H2"][0] == "quality (judging)"
    assert comparisons["H2"][5:8] == ["4.00", "4.00", "0.00"]  # every judge gave 4
    deviations = {(row[0], row[1]): row[2] for row in tables.sections["plan"][1][1:]}
    assert deviations[("arm", "no-ai")] == "arm added after the record (paradigm none)"
    assert deviations[("setting", "session.min_seconds")] == "0 -> 30"
    assert deviations[("excluded", "did not finish writing")] == "2 session(s)"
    assert "Krippendorff's alpha" in tables.texts["judging"]
    # The per-arm scores say how their interval is made, so a reader can reproduce it (the
    # alpha's, computable with scores that vary: tests/report/test_arms.py).
    assert ("Mean score per condition: each session's mean of its kept ratings, averaged over sessions, "
            "with the 95% percentile bootstrap over sessions (2000 resamples") in tables.texts["judging"]
    judged = tables.rows("judging", 0)
    assert {arm for arm in judged if arm != "condition"} <= {"creative-low", "creative-high"}


def test_a_study_without_a_record_says_its_comparisons_are_exploratory(report_study, tmp_path):
    out = tmp_path / "report.html"
    write_report(report_study, out, processes=1)
    assert "No preregistration record (study preregister): every comparison in this report is exploratory." in out.read_text()


class PlannedStudy:
    """A preregistered study whose writers type a sentence each through the server's API."""

    def __init__(self, tmp_path):
        from study.cli import write_study_files
        from tests.conftest import CONTACT

        self.folder = tmp_path / "study"
        write_study_files(self.folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
        edit(self.folder, lambda data: data.update(plan=PLAN))
        self.study = config.load(self.folder)
        self.app = create_app(self.study, suggestion_engine=object())
        self.client = self.app.test_client()

    def write(self, code: str) -> str:
        from tests.server.flow import INIT_EVENT, start, to_writing

        session_id = start(self.client, access_code=code)
        to_writing(self.client, session_id)
        doc, typed = "Prompt.\n", "Once upon a time."
        events = [{**INIT_EVENT, "seq": 0, "currentDoc": doc, "currentCursor": len(doc)},
                  {**INIT_EVENT, "seq": 1, "eventName": "text-insert", "eventSource": "user",
                   "eventTimestamp": 1_700_000_001_000, "textDelta": {"ops": [{"retain": len(doc)}, {"insert": typed}]},
                   "currentDoc": doc + typed, "currentCursor": len(doc + typed)}]  # fmt: skip
        assert self.client.post(f"/api/sessions/{session_id}/events", json={"events": events}).status_code == 200
        finished = self.client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 1, "text": doc + typed})
        assert finished.status_code == 200, finished.json
        return session_id

    def preregister(self) -> None:
        key = record_module.key(self.study.directory)
        record_module.write(self.study.directory, record_module.sign(record_module.build(self.study), key))

    def report(self, tmp_path) -> str:
        self.app.extensions["study.engine"].dispose()
        out = tmp_path / "report.html"
        write_report(self.folder, out, processes=1)
        return out.read_text()


def test_the_planned_comparisons_leave_out_the_simulated_pilot_writers(tmp_path):
    # The usual order: pilot with `study simulate`, preregister, launch. The planned comparison
    # is over the people who took part, not over the model that played writers in the pilot.
    from study.store import simulated

    planned = PlannedStudy(tmp_path)
    pilots = [planned.write(f"pilot-{n}") for n in range(4)]  # two in each arm
    with writing(planned.app.extensions["study.engine"]) as connection:
        for session_id in pilots:
            simulated.mark(connection, session_id, persona="pilot", intent="", model="local")
    planned.preregister()
    for n in range(2):  # then one person in each arm
        planned.write(f"person-{n}")
    html = planned.report(tmp_path)
    comparisons = Tables(html).rows("plan", 0)
    assert comparisons["H1"][4] == "1 / 1"  # sessions (treatment / control): the two people
    assert "4 session(s) of simulated writers (study simulate) are left out of these comparisons." in html
    # The exploratory figures still hold the pilot's sessions beside the people's: the banner
    # says so, lest a researcher publish them as the people's.
    assert ("4 of 6 sessions were written by simulated writers (study simulate), not by people. Their figures "
            "pilot the study; they say nothing about human writers. They are in every figure of this report but "
            "the planned comparisons, beside the people's: leave them out (the export's `simulated` column) "
            "before publishing any other figure.") in html.replace("&#x27;", "'")


def test_a_session_rejected_at_review_is_left_out_of_the_planned_comparisons(tmp_path):
    # The deviations list it as excluded; the estimates must then not count it.
    import time

    from study.store.mturk import mturk_assignments

    planned = PlannedStudy(tmp_path)
    planned.preregister()
    control, treatment, *_ = [planned.write(f"person-{n}") for n in range(4)]  # low, high, low, high
    with writing(planned.app.extensions["study.engine"]) as connection:  # as `study mturk review` leaves it
        connection.execute(mturk_assignments.insert().values(
            environment="sandbox", assignment_id="3ASSIGNSPAM", hit_id="3HIT1", worker_id="A2SPAMMER",
            status="Rejected", session_id=control, synced_at=time.time(),
        ))  # fmt: skip
    html = planned.report(tmp_path)
    deviations = {(row[0], row[1]): row[2] for row in Tables(html).sections["plan"][1][1:]}
    assert deviations[("excluded", "rejected at MTurk review")] == "1 session(s)"
    assert Tables(html).rows("plan", 0)["H1"][4] == "2 / 1"  # sessions (treatment / control)


def test_a_record_signed_with_another_key_than_the_study_s_is_not_trusted_by_the_report(tmp_path):
    # As `study preregister verify` refuses it: a record rewritten after launch and signed anew
    # with a key of the moment must not be presented as the plan fixed before launch.
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from study.cli import write_study_files
    from tests.conftest import CONTACT

    folder = tmp_path / "study"
    write_study_files(folder, replacements=CONTACT)
    edit(folder, lambda data: data.update(plan=PLAN))
    study = config.load(folder)
    record_module.write(folder, record_module.sign(record_module.build(study), record_module.key(folder)))
    rewritten = record_module.load(folder / record_module.RECORD_NAME)
    rewritten["plan"]["comparisons"][0]["direction"] = "greater"
    del rewritten["signature"]
    record_module.write(folder, record_module.sign(rewritten, Ed25519PrivateKey.generate()))

    out = tmp_path / "report.html"
    write_report(folder, out, processes=1)
    html = out.read_text()
    assert "The preregistration record cannot be trusted" in html
    assert "signed with another key" in html


def test_a_within_subjects_planned_comparison_is_paired_by_writer(tmp_path):
    # Dhillon et al.'s design: every writer writes in every arm. Writers differ a lot in how
    # much they write, and each writes 3 words more with next-paragraph suggestions; the
    # preregistered test is of that own difference, as "Arms compared" takes it, not of two
    # independent groups whose interval the writers' spread would widen past zero.
    from tests.server.flow import INIT_EVENT, start, to_writing
    from tests.server.study_edits import conditions_given, dhillon_study, serve_again

    folder = dhillon_study(tmp_path)
    plan = {"outcomes": [{"name": "length", "measure": "final_words"}],
            "comparisons": [{"name": "H1", "outcome": "length", "treatment": "next-paragraph", "control": "no-ai"}]}
    edit(folder, lambda data: data.update(plan=plan))
    study = config.load(folder)
    record_module.write(folder, record_module.sign(record_module.build(study), record_module.key(folder)))
    client = serve_again(folder)
    for writer in range(4):
        for part in range(3):
            session_id = start(client, access_code=f"p{writer}", **({"another": "1"} if part else {}))
            to_writing(client, session_id, prompt=None)  # a prompt of their own for each arm
            words = 10 * (writer + 1) + (3 if conditions_given(folder)[session_id] == "next-paragraph" else 0)
            doc, typed = "Prompt.\n", " ".join(["word"] * words)
            events = [{**INIT_EVENT, "seq": 0, "currentDoc": doc, "currentCursor": len(doc)},
                      {**INIT_EVENT, "seq": 1, "eventName": "text-insert", "eventSource": "user",
                       "eventTimestamp": 1_700_000_001_000, "textDelta": {"ops": [{"retain": len(doc)}, {"insert": typed}]},
                       "currentDoc": doc + typed, "currentCursor": len(doc + typed)}]  # fmt: skip
            assert client.post(f"/api/sessions/{session_id}/events", json={"events": events}).status_code == 200
            finished = client.post(f"/s/{session_id}/writing/finish", json={"last_seq": 1, "text": doc + typed})
            assert finished.status_code == 200, finished.json
            assert client.post(f"/s/{session_id}/evaluation", data={"clear_ending": "yes", "collaborated": "yes"}).status_code == 302
            answers = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}
            assert client.post(f"/s/{session_id}/survey", data=answers).status_code == 302
    client.application.extensions["study.engine"].dispose()

    out = tmp_path / "report.html"
    write_report(folder, out, processes=1)
    row = Tables(out.read_text()).rows("plan", 0)["H1"]
    assert row[4] == "4 / 4"  # sessions (treatment / control)
    assert row[7:] == ["3.00", "[3.00, 3.00]", "paired, 4 writers"]  # difference, interval, taken as
    # A reader reproduces the interval from the note: which bootstrap, how many resamples, the
    # seed, and that it is two-sided although a comparison may predict a direction.
    note = Tables(out.read_text()).texts["plan"]
    assert "two-sided whatever the predicted direction" in note
    assert "Few sessions or writers: the smallest group with an interval here has 4. Over so few" in note
    assert "percentile bootstrap of the difference of means (2000 resamples, numpy's default_rng seeded 20220429)" in note
