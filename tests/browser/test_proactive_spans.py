"""The editor and curation follow accepted spans by one rule (editor-ghost.js `mapSpan` and
study.paradigms.proactive.curation.spans.map_span): a modification seen live is one curation sees."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from study.paradigms.proactive.curation.spans import map_span
from study.paradigms.proactive.editor import blueprint as proactive_editor

pytestmark = pytest.mark.browser


def test_javascript_and_python_map_spans_alike(page):
    page.set_content("<html><body></body></html>")
    page.add_script_tag(path=str(Path(proactive_editor.static_folder) / "editor-ghost.js"))
    rng = random.Random(7)
    cases = []
    for _ in range(400):
        start = rng.randint(0, 20)
        end = start + rng.randint(0, 10)
        position = rng.randint(0, 35)
        inserted, deleted = (rng.randint(1, 5), 0) if rng.random() < 0.5 else (0, rng.randint(1, 8))
        cases.append([start, end, position, inserted, deleted])
    results = page.evaluate(
        """(cases) => cases.map(([start, end, position, inserted, deleted]) => {
            const r = window.StudyEditor.mapSpan({ start, end }, position, "x".repeat(inserted), deleted);
            return [r.start, r.end, r.touched];
        })""",
        cases,
    )
    for case, result in zip(cases, results):
        assert list(map_span(*case)) == result, case
