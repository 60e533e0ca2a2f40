"""Every deviation from the preregistration record, as a methods reviewer would list them.

Three kinds, in this order:
  - arm: an arm added, removed or changed since the record (its paradigm, model, decoding,
    or closed to new participants with `assign = false`), or the arms put in another order;
  - setting: any other key of study.toml whose value differs from the record's, [plan] included
    (a changed outcome or comparison is a deviation too), by its key (study.plan.changes:
    `session.min_seconds`, `prompts[mana].text`); a survey question changed, added or removed,
    in study.toml or in the preset or file it names (`surveys[about_ai].items[trust].text`);
    a consent or instructions text rewritten in its file (by its digest); and any other file
    study.toml names holding other content than recorded, by its key (study.plan.files:
    `chat.intent_bank[creative_writing/39].title`, `suggestions.blocklist_file`);
  - excluded: sessions the analysis leaves out, counted from the study database: sessions begun
    before the record (it should have come first), sessions that did not finish, sessions whose
    MTurk assignment was rejected at review, and judges a judging round's gold check flagged.
A pure comparison (`compare`) of the record with the current configuration and those counts.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import Connection, select

from study import providers
from study.config import Study
from study.plan import record as record_module
from study.plan import files as plan_files
from study.plan.changes import changes, shown
from study.store.db import sessions
from study.store.simulated import simulated_ids
from study.store.withdrawals import withdrawn_session_ids

# [conditions] is compared as arms; [release] (who created the dataset and who funded it,
# study.release.creators) is the release's, declared when it is built, not part of the design.
SKIPPED = ("conditions", "release")
SURVEY_KEYS = ("survey", "surveys")  # compared as asked, when the record has them (record.surveys)


@dataclass(frozen=True)
class Deviation:
    kind: str  # arm | setting | excluded
    what: str
    detail: str


def compare(signed: dict, study: Study, excluded: dict[str, int]) -> list[Deviation]:
    found = []
    before = {arm["name"]: arm for arm in signed["arms"]}
    now = {arm["name"]: arm for arm in record_module.arms(study)}
    for name in now.keys() - before.keys():
        found.append(Deviation("arm", name, f"arm added after the record (paradigm {now[name]['paradigm']})"))
    for name in before.keys() - now.keys():
        found.append(Deviation("arm", name, "arm removed after the record"))
    # The order is part of the design: the within-subjects Latin square is over the arms in
    # study.toml order, and the balanced assignment breaks ties by it (study.server).
    kept_before = [name for name in before if name in now]
    kept_now = [name for name in now if name in before]
    if kept_before != kept_now:
        found.append(Deviation("arm", "order", f"{', '.join(kept_before)} -> {', '.join(kept_now)}"))
    for name in sorted(now.keys() & before.keys()):
        for field in record_module.ARM_FIELDS:
            default = record_module.ARM_FIELD_DEFAULTS.get(field)
            old_value, new_value = before[name].get(field, default), now[name].get(field, default)
            if old_value != new_value:
                found.append(Deviation("arm", f"{name}.{field}", f"{shown(old_value)} -> {shown(new_value)}"
                                       + _meaning(field, new_value)))  # fmt: skip
    # A record with the surveys as asked (record.surveys) compares those, a preset's or file's
    # questions included, rather than study.toml's [[survey]] and [[surveys]] (which name the file).
    skipped = SKIPPED + (SURVEY_KEYS if "surveys" in signed else ())
    old = {k: v for k, v in signed["configuration"].items() if k not in skipped}
    new = {k: v for k, v in record_module.configuration(study).items() if k not in skipped}
    if "surveys" in signed:
        old["surveys"], new["surveys"] = signed["surveys"], record_module.surveys(study)
    found += [Deviation("setting", key, detail) for key, detail in changes(old, new)]
    # study.toml names the texts' files only: the same file name may hold other words now.
    recorded_texts = signed.get("texts_sha256", {})
    for name, now_digest in record_module.texts_sha256(study).items():
        if name in recorded_texts and recorded_texts[name] != now_digest:
            found.append(Deviation("setting", f"texts.{name}", "the text participants read changed after the "
                                   f"record (SHA-256 {recorded_texts[name][:12]}... -> {now_digest[:12]}...)"))  # fmt: skip
    # The other files study.toml names, as participants get them (records made since they
    # were recorded; an older record is compared as before).
    if "files" in signed:
        try:
            now_files = record_module.files(study)
        except record_module.PlanError as error:  # a named file unreadable now: itself a deviation
            found.append(Deviation("setting", "files", str(error)))
        else:
            found += [Deviation("setting", key, detail) for key, detail in plan_files.compare(signed["files"], now_files)]
    for what, count in excluded.items():
        if count:
            found.append(Deviation("excluded", what, f"{count} session(s)" if "judge" not in what else f"{count} judge(s)"))
    return sorted(found, key=lambda d: ("arm", "setting", "excluded").index(d.kind))


def of_study(signed: dict, study: Study) -> list[Deviation]:
    """The deviations of study.toml and the files it names (arms and settings), without the
    database's counts of sessions left out: what a launch warns of and `study status` counts."""
    return [d for d in compare(signed, study, {}) if d.kind != "excluded"]


def _meaning(field: str, value) -> str:
    """What a methods reviewer reads a changed arm field as, where its value alone says little."""
    if field == "assign":
        return " (closed to new participants after the record)" if value is False else " (reopened to new participants)"
    return ""


def exclusions(connection: Connection, signed: dict, flagged_judges: int = 0) -> dict[str, int]:
    recorded = dt.datetime.strptime(signed["recorded_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    simulated = simulated_ids(connection)
    rows = [r for r in connection.execute(
        select(sessions.c.session_id, sessions.c.created_at, sessions.c.writing_finished_at)
    ).all() if r[0] not in simulated]  # fmt: skip
    found = {
        "begun before the record": sum(r[1] < recorded.timestamp() for r in rows),
        "did not finish writing": sum(r[2] is None for r in rows),
        "rejected at MTurk review": 0,
    }
    # Each recruitment provider's rejections (study.providers); only counts above 0 are shown.
    for provider, decided in providers.decisions(connection):
        found[f"rejected at {provider.title} review"] = decided.rejected
    found["judges flagged by gold (their ratings left out)"] = flagged_judges
    return found


def left_out(connection: Connection, signed: dict) -> set[str]:
    """The finished sessions the planned comparisons leave out, as `exclusions` counts them:
    begun before the record, or rejected at a provider's review (unfinished ones are not in
    an export at all)."""
    recorded = dt.datetime.strptime(signed["recorded_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    early = {session_id for session_id, created_at in connection.execute(
        select(sessions.c.session_id, sessions.c.created_at)) if created_at < recorded.timestamp()}  # fmt: skip
    rejected = set().union(*(decided.rejected_sessions for _, decided in providers.decisions(connection)))
    return (early - simulated_ids(connection)) | rejected


def started(connection: Connection) -> int:
    """Participants who have started: sessions of people (not `study simulate`). A writer who
    withdrew since is counted: their start came before any record made now, all the same."""
    simulated = simulated_ids(connection)
    return sum(1 for (session_id,) in connection.execute(select(sessions.c.session_id)) if session_id not in simulated)


def started_withdrawn(connection: Connection) -> int:
    """Of `started`, the sessions of writers who withdrew (study.store.withdrawals), which `study
    status` counts apart as it counts them apart everywhere else."""
    return len(withdrawn_session_ids(connection) - simulated_ids(connection))
