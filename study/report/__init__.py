"""`study report`: one self-contained HTML file that shows how a study went.

`load` (study.report.data) reads a study folder, a release or a folder of sessions into
per-session facts (study.report.facts, built on the curation core); each section
(study.report.sections, one file each) turns them into tables and inline SVG plots
(study.report.plots); study.report.html writes the page. No script, no external file: the
report can be mailed or archived as it is.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path

from study import out_file, paradigms
from study.report import judging as judging_report
from study.report import plan as plan_report
from study.report.data import EXTRA_LOADERS, ReportData, ReportSourceError, load  # noqa: F401
from study.report.html import page
from study.report.sections import SECTIONS, SECTIONS_AFTER_PARADIGMS

# After each paradigm's figures (study.report.data.load): a judging round's results, then the
# preregistered plan (which may read them).
EXTRA_LOADERS.extend([judging_report.load, plan_report.load])


def render(data: ReportData) -> str:
    # Each registered paradigm's section (study.paradigms.base.Paradigm: `report`) comes after
    # the writing study's analyses and before the judging round's, the survey's and the arms'.
    reporting = [p.report_module().build for p in paradigms.registered() if p.report]
    builds = [*SECTIONS, *reporting, *SECTIONS_AFTER_PARADIGMS]
    sections = [s for s in (build(data) for build in builds) if s is not None]
    banner = ""
    if data.simulated:
        everyone = len(data.sessions) + len(data.unlogged)
        banner = (
            f"{data.simulated} of {everyone} sessions were written "
            "by simulated writers (study simulate), not by people. Their figures pilot the "
            "study; they say nothing about human writers."
        )
        if data.simulated < everyone:
            # A pilot before launch leaves its sessions in the study: only the planned
            # comparisons leave them out (study.report.plan), every other figure has them.
            banner += (" They are in every figure of this report but the planned comparisons, "
                       "beside the people's: leave them out (the export's `simulated` column) "
                       "before publishing any other figure.")  # fmt: skip
    intro = [f"Made by `study report` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC."]
    return page(f"Study report: {data.title}", intro, sections, banner)


def write_report(source: str | Path, out: str | Path, *, processes: int | None = None,
                 languagetool: str | None = None, judge: object | None = None) -> ReportData:
    out = Path(out)
    partial = out_file.partial_for(out, out.name + ".partial")
    try:
        # Made before the work, which takes minutes for a large study: a folder that is missing,
        # is a file, or cannot be written is said at once, not once the report is done.
        partial.touch()
    except OSError as error:
        raise _cannot_write(out, error) from None
    try:
        data = load(source, processes=processes, languagetool=languagetool, judge=judge)
        data.report_folder = out.parent
        html = render(data)
        try:
            partial.write_text(html, encoding="utf-8")
            out_file.place(partial, out)
        except OSError as error:
            raise _cannot_write(out, error) from None
    finally:
        with suppress(OSError):
            out_file.discard(partial, out)
    return data


def _cannot_write(out: Path, error: OSError) -> ReportSourceError:
    return ReportSourceError(
        f"{out}: cannot write the report ({error.strerror}); nothing was written. "
        "Fix: choose --out in an existing folder you can write to, with free space."
    )
