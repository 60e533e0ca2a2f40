"""`study simulate` refuses, before creating anything, a study its writers cannot drive."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main, write_study_files


def test_proactive_conditions_are_refused_with_the_alternative_and_nothing_is_created(tmp_path):
    folder = tmp_path / "proactive"
    write_study_files(folder, replacements={'name = "creative-low"': 'name = "creative-low"\nparadigm = "L1"'})
    before = sorted(p.name for p in folder.iterdir())
    result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "2"])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "proactive paradigm L1 of condition(s) creative-low" in lines[0]
    assert "study demo --paradigm proactive" in lines[0]
    assert sorted(p.name for p in folder.iterdir()) == before  # no database, no session
