"""`study serve` says where participants start: with an access code, and, for a study set up
for MTurk or Prolific, that those participants come through the provider's link and need no
code (a Prolific researcher read only "access_code=YOUR-CODE" and wondered where to get codes)."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main, write_study_files
from study.server import serving
from tests.conftest import CONTACT
from tests.plan.conftest import edit


def _started(folder, monkeypatch) -> str:
    monkeypatch.setattr(serving, "run", lambda app, **options: None)
    result = CliRunner().invoke(main, ["serve", str(folder), "--port", "5123"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_serve_names_the_provider_links_of_a_recruited_study(tmp_path, monkeypatch):
    folder = tmp_path / "study"
    write_study_files(folder, replacements=CONTACT)  # the template is set up for MTurk
    template = _started(folder, monkeypatch)
    assert "Participants start at http://127.0.0.1:5123/task?access_code=YOUR-CODE (any code you hand out)" in template
    assert ("MTurk participants need no code: they come through the link `study mturk` gives MTurk "
            "(http://127.0.0.1:5123/task with MTurk's parameters; README, MTurk)") in template
    assert "Prolific" not in template

    def recruit_on_prolific(data):
        del data["mturk"]
        data["prolific"] = {"reward": "£2.50", "estimated_minutes": 15}

    edit(folder, recruit_on_prolific)
    recruited = _started(folder, monkeypatch)
    assert ("Prolific participants need no code: they come through the link `study prolific` gives "
            "Prolific (http://127.0.0.1:5123/task with Prolific's parameters; README, Prolific)") in recruited
    assert "MTurk" not in recruited

    edit(folder, lambda data: (data.pop("prolific"), data["session"].update(access_codes_file="codes.txt")))
    (folder / "codes.txt").write_text("A1\nB2\n")
    coded = _started(folder, monkeypatch)
    assert "/task?access_code=YOUR-CODE (one of codes.txt's codes)" in coded
    assert "need no code" not in coded


def test_serve_names_the_judges_entry_of_a_study_with_a_judging_round(tmp_path, monkeypatch):
    folder = tmp_path / "study"
    write_study_files(folder, replacements=CONTACT)
    assert "/judge" not in _started(folder, monkeypatch)
    edit(folder, lambda data: data.update(judging={"unit": "sentence", "k": 3}))
    assert ("Judges (once `study judging build` has made the round) start at "
            "http://127.0.0.1:5123/judge?access_code=YOUR-CODE (any code you hand out); MTurk judges "
            "through the HITs `study judging post` posts") in _started(folder, monkeypatch)
