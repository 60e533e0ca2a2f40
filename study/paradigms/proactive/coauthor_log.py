"""Ghost text in a writing study's CoAuthor log (study.paradigms.base: `coauthor_log`).

Its sessions log events CoAuthor's editor never had (a stale or modified suggestion, window
and stage changes, L0's assistant panel): the strict CoAuthor file of `study export` leaves them
out. Its extended format's own checks (study.curation.validate) are
study.paradigms.proactive.curation.checks. A MindCopilot study's logs are checked in the extended format of
schemas/coauthor-proactive.schema.json instead (`study curate validate STUDY_FOLDER`), and in a
study whose arms are of several paradigms its sessions are also exported in that format beside
the others (study.paradigms.proactive.export).
"""

from __future__ import annotations

from pathlib import Path

from study.curation.formats import FORMAT_PROACTIVE
from study.paradigms.proactive import PROACTIVE, is_proactive_study
from study.paradigms.proactive.curation import EXTENSION_EVENTS
from study.paradigms.proactive.curation.checks import PROACTIVE_SOURCES, ProactiveChecks

EVENTS = EXTENSION_EVENTS
# The extended format (study.curation.validate): its name, the key its records add, the
# sources its events may have (beyond Table 1's), and the checks fed each of its records.
FORMAT = FORMAT_PROACTIVE
KEY = "proactive"
SOURCES = PROACTIVE_SOURCES


def checks(checker) -> ProactiveChecks:
    return ProactiveChecks(checker)


def extends(study) -> bool:
    """Whether the study's logs are in the extended format: a MindCopilot study's."""
    return is_proactive_study(study.conditions, study.proactive)


def arm_card(study, condition) -> str | None:
    # A release is built from `study export`'s strict CoAuthor logs (study.release.source), which
    # leave this paradigm's own events out.
    left_out = (" The release has its strict CoAuthor log: MindCopilot's own events (stale and "
                "modified suggestions, window and stage changes, the panel's requests) are left out.")
    if condition.paradigm in PROACTIVE:
        return (f"ghost text (MindCopilot's {condition.paradigm}): when the writer pauses, the model's "
                "continuation appears in grey after the cursor; Tab accepts it; Esc or typing on ignores it."
                + left_out)  # fmt: skip
    if is_proactive_study([condition], study.proactive):
        return ("MindCopilot's L0: an assistant panel beside the editor answers what the writer asks "
                "of the document." + left_out)  # fmt: skip
    return None


def to_record(record: dict, event_num: int, paradigm: str | None) -> dict:
    from study.paradigms.proactive.export import to_extended_record  # see `export_beside`

    return to_extended_record(record, event_num, paradigm or "L0")


def export_beside(study, out: Path, *, include_unfinished: bool) -> str | None:
    """Arms of several paradigms (a control or chat arm beside ghost text): the ghost-text arms
    keep their own (extended) format too, in OUT/proactive; the line `study export` prints."""
    mixed = {c.paradigm for c in study.conditions} & {"none", "chat"}
    if not (mixed and is_proactive_study(study.conditions)):
        return None
    # Imported here: `study curate` reads this module's format and checks in every worker,
    # and the export's imports (the study database's) cost each of them 0.3 s of CPU.
    from study.paradigms.proactive.export import export_proactive

    done = export_proactive(study, out / "proactive", include_unfinished=include_unfinished)
    return f"Exported {done.sessions} ghost-text sessions with the extension to {out / 'proactive'}"
