"""What a launch says of the preregistration record: `study mturk post`, `study prolific
publish` (and `draft --publish`) and `study serve` each print it before participants can come.

A warning, never a refusal: a study already running must still start, and HITs or a Prolific
study may be posted before the record for a pilot. None when the record exists and study.toml
(and every file it names) still says what it fixed.
"""

from __future__ import annotations

from sqlalchemy import Engine

from study.config import Study
from study.plan import deviations as deviation_module
from study.plan import record as record_module
from study.store import reading


def note(study: Study, engine: Engine, directory: str, launch: str = "posting") -> str | None:
    """What a launch of `study` says of its record, `directory` as the researcher typed it; or
    None. Without a record (issue 27: a report cannot tell planned comparisons from
    explorations), the fix `study preregister` is given only while no participant has started:
    after that the command refuses, as a record written then would not be a plan fixed before
    launch. `launch` is what the fix of a changed study is to come before ("posting")."""
    if (study.directory / record_module.RECORD_NAME).is_file():
        return changed_since_record(study, directory, launch)
    with reading(engine) as connection:
        started = deviation_module.started(connection)
    if started:
        return (
            f"Note: {directory} has no preregistration record, and {started} participant "
            "session(s) have already started, so a plan recorded now would not be fixed before "
            "launch: `study report` shows every comparison as exploratory."
        )
    return (
        f"Warning: {directory} has no preregistration record, so `study report` cannot tell "
        f"planned comparisons from explorations. Fix: study preregister {directory} (before "
        "anyone starts)."
    )


def changed_since_record(study: Study, directory: str, launch: str = "posting") -> str | None:
    """The warning when study.toml (or a file it names) no longer says what the record fixed:
    the participants would take part in another study than the one recorded."""
    try:
        signed = record_module.load(study.directory / record_module.RECORD_NAME)
    except record_module.PlanError as error:
        return f"Warning: {error}"
    changed = deviation_module.of_study(signed, study)
    if not changed:
        return None
    first = changed[0]
    return (
        f"Warning: {directory} differs from its preregistration record in {len(changed)} place(s) "
        f"({first.what}: {first.detail}{'; ...' if len(changed) > 1 else ''}); `study report` "
        f"lists each as a deviation. Fix: undo the change before {launch}, or keep it and report "
        f"it (study preregister verify {directory} lists them all)."
    )
