"""The report in a real browser (Debian's Chromium): every plot is drawn, with a real size."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from study.cli import main

pytestmark = pytest.mark.browser


def test_the_report_opens_in_chromium_and_its_plots_render(report_study, browser, tmp_path):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(report_study), "--out", str(out)])
    assert result.exit_code == 0, result.output

    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("requestfailed", lambda request: errors.append(f"failed to load {request.url}"))
    page.goto(out.as_uri())
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)

    plots = page.locator("figure[data-plot] > svg")
    assert plots.count() >= 8
    sections = set()
    for i in range(plots.count()):
        plot = plots.nth(i)
        assert plot.is_visible()
        box = plot.bounding_box()
        assert box["width"] > 100 and box["height"] > 50, box
        # drawn, not empty: each plot has marks (paths) inside its frame
        assert plot.locator("path").count() > 3
        sections.add(plot.evaluate("svg => svg.closest('section').id"))
    assert {"participation", "timing", "allocation", "suggestions", "collaboration",
            "language", "survey"} <= sections  # fmt: skip
    assert (tmp_path / "report.png").stat().st_size > 20_000
    context.close()
    assert not errors, errors
