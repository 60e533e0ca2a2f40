"""The report's judging round section (study.report.sections.judging): its figures say how they
were computed, so a reader can reproduce them."""

from __future__ import annotations

import html
from pathlib import Path

from study.report.data import ReportData
from study.report.entities import EntityModel
from study.report.facts import SessionFacts
from study.report.judging import JudgingFigures
from study.report.sections import judging


def test_the_judging_round_says_how_alpha_s_interval_is_made():
    session = SessionFacts(session_id="a0", condition="assisted", prompt_code="p", genre="creative",
                           randomness="unknown", writer="w0", simulated=False, stats={})  # fmt: skip
    data = ReportData("folder", Path("."), "t", [session], EntityModel(None, "", "none"))
    data.extras["judging"] = JudgingFigures({"a0": 4.0}, 0.61, 0.42, 0.77, 12, 36, 3, 0, "ordinal",
                                            "How good is this text?")  # fmt: skip
    text = html.unescape("".join(judging.build(data).parts))
    assert ("Krippendorff's alpha (ordinal): 0.61, 95% interval [0.42, 0.77], over 12 items rated at least "
            "twice (Krippendorff 2011; the interval is the percentile bootstrap over items, 1000 resamples, "
            "fixed seed).") in text
