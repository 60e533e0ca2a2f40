"""What a study folder's release carries beside its sessions: the study's design.

(Within subjects, study.release.within writes within.json beside these: who wrote which
session, in which arm and at which position of their Latin-square order.)

- arms.json: every arm (condition) as its released sessions ran it (study.release.arms_as_run):
  paradigm ("none" for the control arm), genre, model asked for and the models that answered,
  decoding settings, and how many sessions; an arm whose paradigm or settings study.toml changed
  under its name is listed once per paradigm and settings that ran; metadata.csv names each
  session's condition and paradigm;
- judging/: a judging round's ratings joined to the released sessions (study.judging.export),
  with its rubric and agreement. Judges get the release's keyed pseudonyms, as writers do
  (study.release.pseudonyms), and the rated texts are left out: they are what participants
  wrote, and the released, redacted session logs hold them (a sentence by its position, split
  with pysbd). Ratings of sessions the release leaves out (withdrawn, excluded) are left out too,
  and so is everything of a judge who withdrew (`study withdraw`); the agreement is computed
  over the ratings released;
- preregistration.json: the signed record of `study preregister`, as it is (its signature still
  verifies); it quotes study.toml, so the study's declared contact passes the leak scan in it
  (study.release.contact). The signing key never leaves the study folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Collection

from study import config as study_config
from study.judging import export as judging_export
from study.judging import results as judging_results
from study.judging import settings as judging_settings
from study.plan import record as plan_record
from study.release import arms_as_run
from study.store import create_tables, make_engine, reading

ARMS = "arms.json"
JUDGING = "judging"
PREREGISTRATION = plan_record.RECORD_NAME
# datapackage.json's word on each design file (study.release.datapackage), so a reader of the
# package alone learns what arms.json's entries are and what its nulls mean.
DESCRIPTIONS = {
    ARMS: "Every arm (condition) of the study as its released sessions ran it, under `arms`: "
    "name, paradigm (none: a control arm, no assistant), genre, the model its calls asked for "
    "(`model`) and the models that answered (`answered_models`), mode, n, max_tokens, "
    "temperature, top_p, presence_penalty, frequency_penalty, `unit` (how much of each output a Tab "
    "suggestion kept: \"sentence\" or \"paragraph\"), the system prompt its calls were "
    "sent with (`system_prompt`; a list where they were sent several), `sessions`, and `closed`: true "
    "for an arm closed to new participants (`assign = false` in study.toml when the release was "
    "built), whose count of sessions stopped growing then. An arm whose settings changed during the study has an entry "
    "per setting that ran; null is a setting nothing stored with the sessions records; an arm "
    "with `sessions` 0 ran no released session and is as study.toml has it.",
    PREREGISTRATION: "The signed record of `study preregister`, as it is (its signature still "
    "verifies): the plan, the arms and study.toml as configured when it was signed (arms.json "
    "says how the released sessions ran the arms).",
}


def _results(study: study_config.Study) -> judging_results.Results | None:
    if "judging" not in study.raw:
        return None
    engine = make_engine(study.database_url)
    create_tables(engine)
    try:
        with reading(engine) as connection:
            found = judging_results.collect(connection, study, judging_settings.from_study(study))
    finally:
        engine.dispose()
    return found if found.ratings else None


def judge_ids(study_path: Path) -> set[str]:
    """The judges' worker ids (or access codes), which no released file may hold."""
    found = _results(study_config.load(study_path))
    return {r["judge"] for r in found.ratings} | set(found.checks) if found else set()


def write(staging: Path, study_path: Path, released: dict[str, str], pseudonym, withdrawn: Collection[str],
          arms: arms_as_run.ArmsAsRun) -> list[str]:  # fmt: skip
    """Write the design files; returns their names. `released`: source -> released session id;
    `pseudonym(worker_id)`: the release's pseudonym of a worker; `withdrawn`: the worker ids
    who withdrew (judges among them leave the judging files); `arms`: as the sessions ran them."""
    study = study_config.load(study_path)
    written = [ARMS]
    # Each arm as the released sessions ran it (study.release.arms_as_run), not as study.toml has
    # it now; the preregistration record keeps the configured values it was signed with.
    ran = [arms_as_run.to_json(arm) for arm in arms.arms]
    (staging / ARMS).write_text(json.dumps({"arms": ran}, indent=2, ensure_ascii=False) + "\n",
                                encoding="utf-8")  # fmt: skip
    found = _results(study)
    if found is not None:
        found.ratings = [
            r for r in found.ratings if r["session_id"] in released and r["judge"] not in withdrawn
        ]  # fmt: skip
        found.checks = {j: check for j, check in found.checks.items() if j not in withdrawn}
        # By what the release names, not the study's session ids and the judges' worker ids (the
        # database's order): the rows' order must not tell the raw ids' alphabetical order.
        found.ratings.sort(key=lambda r: (released[r["session_id"]], r["position"], pseudonym(r["judge"])))
        # The round's agreement was computed over every rating; publish it over these.
        found.agreement = judging_results.agreement_of(found.ratings, found.settings)
        judging_export.write(found, staging / JUDGING, judge_name=pseudonym,
                             session_name=released.__getitem__, with_text=False)  # fmt: skip
        written.append(JUDGING)
    record = study.directory / PREREGISTRATION
    if record.is_file():
        shutil.copyfile(record, staging / PREREGISTRATION)
        written.append(PREREGISTRATION)
    return written
