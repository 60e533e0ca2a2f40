"""`study status` says in one line where the plan stands: not recorded (with the fix while
nobody has started, and that it can no longer be made once someone has), recorded with its
time, SHA-256 and deviations, or a record that does not verify."""

from __future__ import annotations

import json

from click.testing import CliRunner

from study import config
from study.cli import main
from study.plan import record
from study.store import create_tables, make_engine
from tests.judging.finished import finish_sessions
from tests.plan.conftest import edit


def _status(folder) -> list[str]:
    result = CliRunner().invoke(main, ["status", str(folder)])
    assert result.exit_code == 0, result.output
    return [line for line in result.output.splitlines() if line.startswith("Preregistration:")]


def test_status_gives_the_fix_before_launch_and_says_a_record_can_no_longer_be_made_after(planned):
    assert _status(planned) == [f"Preregistration: none (study preregister {planned} fixes the plan before launch)"]
    study = config.load(planned)
    engine = make_engine(study.database_url)
    create_tables(engine)
    finish_sessions(engine, study, ["An early writer's story."])
    engine.dispose()
    assert _status(planned) == [
        "Preregistration: none, and 1 participant session(s) have started, so a record can no longer "
        "be made: `study report` shows every comparison as exploratory"
    ]


def test_status_shows_the_record_its_digest_and_the_deviations_from_it(planned):
    assert CliRunner().invoke(main, ["preregister", str(planned)]).exit_code == 0
    signed = json.loads((planned / "preregistration.json").read_text())
    recorded = f"Preregistration: recorded {signed['recorded_at']} (SHA-256 {record.digest(signed)[:12]}...)"
    assert _status(planned) == [f"{recorded}, no deviation"]

    def deviate(data):
        data["session"]["min_seconds"] = 120
        data["conditions"][0]["assign"] = False

    edit(planned, deviate)
    assert _status(planned) == [
        f"{recorded}, 2 deviation(s) from it, the first creative-low.assign: true -> false (closed to new "
        f"participants after the record): `study preregister verify {planned}` lists them"
    ]


def test_status_says_a_record_changed_after_signing_does_not_verify(planned):
    CliRunner().invoke(main, ["preregister", str(planned)])
    path = planned / "preregistration.json"
    signed = json.loads(path.read_text())
    signed["plan"]["comparisons"][0]["direction"] = "greater"
    path.write_text(json.dumps(signed))
    assert _status(planned) == [
        "Preregistration: the record does not verify: the preregistration record's signature does not "
        "match its content: it was changed after it was signed."
    ]
