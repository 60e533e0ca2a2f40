"""`study prolific publish` (and `draft --publish`) says what `study mturk post` says of the
preregistration record (study.plan.launch), against the emulator: the fix while nobody has
started, silence once the record matches study.toml, the deviation once it no longer does."""

from __future__ import annotations

import re

from click.testing import CliRunner

from study.cli import main
from tests.plan.conftest import PLAN, edit
from tests.prolific.conftest import TASK_URL, with_prolific


def _run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def _draft(folder) -> str:
    return re.search(r"Draft (\w+):", _run("prolific", "draft", folder, "--places", "1").output).group(1)


def test_publishing_warns_of_a_missing_record_then_of_a_study_changed_since_it(prolific, study_folder):
    with_prolific(study_folder, reward="2.50", estimated_minutes=10, task_url=TASK_URL, budget="50.00",
                  completion_url=prolific.url + "/submissions/complete")  # fmt: skip
    edit(study_folder, lambda data: data.update(plan=PLAN))

    published = _run("prolific", "publish", study_folder, _draft(study_folder))
    assert "published." in published.stdout
    assert (f"Warning: {study_folder} has no preregistration record, so `study report` cannot tell "
            f"planned comparisons from explorations. Fix: study preregister {study_folder}") in published.stderr

    _run("preregister", study_folder)
    assert "preregistration" not in _run("prolific", "draft", study_folder, "--places", "1", "--publish").stderr

    edit(study_folder, lambda data: data["session"].update(min_seconds=120))
    published = _run("prolific", "publish", study_folder, _draft(study_folder))
    assert ("differs from its preregistration record in 1 place(s) (session.min_seconds: 0 -> 120)"
            in published.stderr)
    assert "Fix: undo the change before publishing" in published.stderr
