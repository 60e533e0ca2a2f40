"""A study with a [plan]: a control arm against the CoAuthor conditions (as Jakesch et al.)."""

from __future__ import annotations

import tomllib

import pytest
import tomli_w

from study.cli import write_study_files
from tests.conftest import CONTACT
from tests.mturk.conftest import _botocore_session, emulator, fake_aws  # noqa: F401

PLAN = {
    "hypotheses": "Writers with suggestions keep less of their own words.",
    "exclusions": "Sessions that did not finish writing.",
    "outcomes": [{"name": "own words", "measure": "writer_share_final", "description": "CoAuthor's writer share"},
                 {"name": "quality", "measure": "judging"}],
    "comparisons": [{"name": "H1", "outcome": "own words", "treatment": "creative-high",
                     "control": "creative-low", "direction": "less", "hypothesis": "less own text"}],
}  # fmt: skip


def edit(folder, change) -> None:
    path = folder / "study.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(tomli_w.dumps(data), encoding="utf-8")


@pytest.fixture
def planned(tmp_path):
    folder = tmp_path / "study"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    edit(folder, lambda data: data.update(plan=PLAN))
    return folder
