"""`study simulate` pilots a writing study's chat arm (`paradigm = "chat"`, study.paradigms.chat.arm)."""

from __future__ import annotations

from click.testing import CliRunner

from study import config
from study.cli import main, write_study_files
from study.store import make_engine, reading
from study.store import sessions as session_store
from study.store.simulated import simulated_ids


def _study(tmp_path, paradigm_of_the_autocomplete_arm: str = "L1"):
    folder = tmp_path / "pilot"
    write_study_files(folder, design="realhumaneval", replacements={"min_seconds = 600": "min_seconds = 1"})
    toml = folder / "study.toml"
    toml.write_text(toml.read_text().replace('paradigm = "L1"', f'paradigm = "{paradigm_of_the_autocomplete_arm}"'))
    return folder


def test_a_pilot_of_a_tab_arm_beside_a_chat_arm_takes_the_writing_path(tmp_path, suggestion_model):
    """No ghost-text arm: the chat study's own participant is not taken for the writing study
    (it stopped on the missing [chat] table)."""
    folder = _study(tmp_path, "L0")
    result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "3",
                                       "--suggestions-endpoint", suggestion_model])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3 simulated session(s) finished, 0 stopped" in result.output
    study = config.load(folder)
    engine = make_engine(study.database_url)
    with reading(engine) as connection:
        sessions = session_store.all_sessions(connection)
        marked = simulated_ids(connection)
    engine.dispose()
    assert {s["condition"] for s in sessions} == {"no-model", "autocomplete", "chat"}
    assert all(s["stage"] == "complete" and s["session_id"] in marked for s in sessions)
