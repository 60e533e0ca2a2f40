"""The shipped coauthor-post-session instrument in `study report`'s questionnaire dimensions: a
dimension's favourable share reads a higher answer as favourable to the assistant, so an item
whose agreement is unfavourable ("I would have written a better story alone", CoAuthor App. C)
is reported on its own, not inside the "benefits" dimension where it would count a writer's
praise as complaint."""

from __future__ import annotations

from click.testing import CliRunner

from study import config
from study.cli import main as study_cli
from study.server import create_app
from tests.report.conftest import Tables
from tests.server.flow import start, to_survey, to_writing

PRESET = """
[[surveys]]
name = "coauthor"
preset = "coauthor-post-session"
"""
# A writer wholly pleased with the suggestions: they helped (7, 7), alone would not be better (1).
PAGES = [
    {"first_language_english": "Yes", "fluency": "7", "new_ideas": "7", "better_alone": "1"},
    {"competent": "6", "capable": "6", "understood": "6", "improve_aspects": "Length"},
    {"ease": "6", "satisfaction": "6", "confidence": "6", "ownership": "6", "reuse": "6"},
]


def test_a_writer_who_would_not_write_better_alone_counts_as_favourable_to_the_benefits(study_folder, tmp_path):
    toml = study_folder / "study.toml"
    text = toml.read_text(encoding="utf-8")
    # The preset in place of study init's [[survey]] list, which asks ownership, satisfaction and reuse too.
    text = text[: text.index("[[survey]]")] + text[text.index("# More surveys"):] + PRESET
    toml.write_text(text, encoding="utf-8")
    client = create_app(config.load(study_folder), suggestion_engine=object()).test_client()
    session_id = start(client, access_code="lab-1")
    to_writing(client, session_id, prompt="shapeshifter")
    to_survey(client, session_id)
    for page in PAGES:
        assert client.post(f"/s/{session_id}/survey", data=page).status_code == 302
    assert client.get(f"/s/{session_id}/survey").location.endswith("/complete")

    out = tmp_path / "report.html"
    result = CliRunner().invoke(study_cli, ["report", str(study_folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    table = next(t for t in Tables(out.read_text(encoding="utf-8")).sections["survey"] if "dimension" in t[0])
    benefits = next(row for row in table[1:] if row[1] == "benefits")
    assert benefits[2:] == ["2", "7.00", "100.0", "0.0", "0.0"]  # items, mean, % favourable, neutral, unfavourable
