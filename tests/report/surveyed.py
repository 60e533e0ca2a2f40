"""Writers who answer a study's surveys through the task server, and the report's table of the
last survey question, for the tests of how `study report` gives each kind of question."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main as study_cli
from tests.report.conftest import Tables
from tests.server.flow import start, to_survey, to_writing

# The answers to `study init`'s own survey questions, given on every page beside the test's.
LEGACY = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}


def surveyed(client, answers: list[dict], prompt: str | None = "shapeshifter") -> None:
    """One writer per entry of `answers` (lab-0, lab-1, ...), through the writing to the end
    of their surveys, each survey page posted with LEGACY and the entry."""
    for n, answer in enumerate(answers):
        session_id = start(client, access_code=f"lab-{n}")
        to_writing(client, session_id, prompt=prompt)
        to_survey(client, session_id)
        while client.get(f"/s/{session_id}/survey").status_code == 200:
            response = client.post(f"/s/{session_id}/survey", data={**LEGACY, **answer})
            assert response.status_code == 302, response.get_data(as_text=True)[:400]


def last_survey_table(study_folder, tmp_path) -> list[list[str]]:
    """`study report` of the study; the survey section's last table (its heading row first)."""
    out = tmp_path / "report.html"
    result = CliRunner().invoke(study_cli, ["report", str(study_folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return Tables(out.read_text(encoding="utf-8")).sections["survey"][-1]
