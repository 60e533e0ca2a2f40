"""Where a study's plan stands, in the one line `study status` shows: recorded (when, its
SHA-256, and how many deviations from it), not recorded (with the fix while nobody has started,
else that a record can no longer be made), or a record that does not verify.

The deviations counted are those of study.toml and the files it names (arms and settings, as
`study mturk post` warns of them: study.plan.launch); sessions the analysis leaves out are not,
as a study under way always has sessions that have not finished yet: `study preregister verify`
lists those counts.
"""

from __future__ import annotations

from study.config import Study
from study.plan import deviations as deviation_module
from study.plan import record as record_module


def line(study: Study, directory: str, started: int, withdrawn: int = 0) -> str:
    """`started`: the participant sessions begun (deviations.started), 0 before any database;
    `withdrawn`: those of writers who withdrew since (deviations.started_withdrawn), counted apart."""
    path = study.directory / record_module.RECORD_NAME
    if not path.is_file():
        if started:
            count = f"{started - withdrawn} participant session(s) have started"
            if withdrawn:
                count += f", and {withdrawn} of writers who withdrew since"
            return (f"Preregistration: none, and {count}, so a record can no longer be made: "
                    "`study report` shows every comparison as exploratory")  # fmt: skip
        return f"Preregistration: none (study preregister {directory} fixes the plan before launch)"
    try:
        signed = record_module.checked(study.directory)
    except record_module.PlanError as error:
        return f"Preregistration: the record does not verify: {error}"
    recorded = f"Preregistration: recorded {signed['recorded_at']} (SHA-256 {record_module.digest(signed)[:12]}...)"
    changed = deviation_module.of_study(signed, study)
    if not changed:
        return f"{recorded}, no deviation"
    first = changed[0]
    return (f"{recorded}, {len(changed)} deviation(s) from it, the first {first.what}: {first.detail}: "
            f"`study preregister verify {directory}` lists them")  # fmt: skip
