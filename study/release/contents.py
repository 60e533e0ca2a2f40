"""What a release holds, written into its staging folder (study.release.build, steps 2-4).

The sessions are redacted on all cores (study.release.redact_source) and written under their
released ids; the tables (metadata, stats, summary, survey answers), a chat study's
conversations, a study's design files (its arms as they ran, judging ratings, preregistration,
within-subjects design) and the schemas follow; then the release's facts
(study.release.facts) for datapackage.json, the card and the CHANGELOG, the comparison with the
previous release (study.release.previous), and SHA256SUMS last.

Rows are sorted by released id, whatever order the workers finished in, so the same source,
key and version give the same bytes.
"""

from __future__ import annotations

import contextlib
import shutil
from collections import Counter
from pathlib import Path

from study.paths import schemas_dir
from study.release import (
    arms_as_run, card, changelog, conversations, datapackage, design, layout, previous, redact_source,
    redaction_report, tables, within,
)  # fmt: skip
from study.release.checksums import write_sums
from study.release.facts import ReleaseFacts, utc_date
from study.release.keys import ReleaseKey
from study.release.preflight import BuildError
from study.release.redaction_report import Redaction
from study.release.source import Source


def write_release(
    staging: Path, source: Source, included, talks, excluded, withdrawn, left_out, table, key: ReleaseKey, name,
    namespace, license, number, before, known_ids, processes, progress,
) -> tuple[ReleaseFacts, list[Redaction]]:  # fmt: skip
    """Write the release into `staging`: the redacted sessions and conversations, the tables,
    the study's design files, the schemas, datapackage.json, the card, the CHANGELOG and
    SHA256SUMS; return its facts and everything redacted (for the curator's report)."""
    redactions: list[Redaction] = []
    rows, stats, formats, firsts, lasts = [], [], Counter(), [], []
    by_id = {s.session_id: s for s in included}
    released = {s.session_id: table.issue_session(s.session_id, namespace) for s in [*included, *talks]}
    jobs = [(session, known_ids, released[session.session_id]) for session in included]
    for processed in redact_source.sessions(jobs, processes, progress):
        (staging / layout.session_path(processed.session_id)).write_bytes(processed.data)
        redactions += processed.redactions
        session = by_id[processed.source_id]
        alias = table.issue(session.worker_id, namespace)
        rows.append(
            tables.metadata_row(session.metadata, alias, processed.official, processed.session_id)
        )
        stats.append(tables.stats_row(processed.stats, rows[-1]))
        formats[processed.format] += 1
        firsts.append(processed.official["first_timestamp"])
        lasts.append(processed.official["last_timestamp"])
    # Sorted by the released id, whatever order the workers finished in.
    rows.sort(key=lambda row: row["session_id"])
    stats.sort(key=lambda row: row["session_id"])
    tables.write_csv(staging / layout.METADATA_CSV, tables.METADATA_COLUMNS, rows)
    tables.write_metadata_parquet(staging / layout.METADATA_PARQUET, rows)
    detector = redact_source.detector_for(known_ids)
    survey_rows = redact_source.survey(source, included, released, redactions, detector)
    if survey_rows:
        tables.write_csv(
            staging / layout.SURVEY_CSV, ("session_id", *source.survey_columns), survey_rows
        )
    tables.write_csv(staging / layout.STATS_CSV, tables.STATS_COLUMNS, stats)
    said = conversations.Written()
    if talks:
        try:
            said = conversations.write(staging / layout.CONVERSATIONS, talks, released,
                                       lambda worker: table.issue(worker, namespace), detector)  # fmt: skip
        except ValueError as error:  # DeltaError: a document pane's log that does not replay
            raise BuildError(f"a conversation could not be redacted ({error}); nothing was released. "
                             f"Build without it: --exclude SESSION (`study status` lists the ids).") from None  # fmt: skip
        redactions += said.redactions
        firsts, lasts = firsts + said.first_ms, lasts + said.last_ms
    metadata = {row["session_id"]: row for row in rows}
    tables.write_csv(
        staging / layout.SUMMARY_CSV, tables.SUMMARY_HEADER, tables.summary_rows(stats, metadata)
    )
    design_files, arms, within_design = [], None, None
    if source.kind == "study":  # arms, judging ratings, preregistration (study.release.design)
        arms = arms_as_run.study_arms(source.path, released, source.calls)  # as the released sessions ran them
        design_files = design.write(staging, source.path, released, lambda worker: table.issue(worker, namespace),
                                    withdrawn, arms)  # fmt: skip
        # Within subjects, each released session's writer, arm and position (study.release.within).
        writers = {s.session_id: table.issue(s.worker_id, namespace) for s in included}
        within_design = within.collect(source.within, released, writers)
        design_files += within.write(staging, within_design)
    (staging / layout.SCHEMAS).mkdir()
    for schema in sorted(schemas_dir().glob("coauthor-*.schema.json")):
        shutil.copyfile(schema, staging / layout.SCHEMAS / schema.name)
    for schema in [*(conversations.SCHEMAS if talks else ()), *([within.SCHEMA] if within_design else [])]:
        shutil.copyfile(schemas_dir() / schema, staging / layout.SCHEMAS / schema)

    facts = ReleaseFacts(
        name=name, version=number, namespace=namespace, license=license,
        key_fingerprint=key.fingerprint, source_kind=source.kind,
        date=utc_date(max(lasts)), first_date=utc_date(min(firsts)), last_date=utc_date(max(lasts)),
        sessions=len(rows), writers=len({r["worker_id"] for r in rows} | said.writers),
        conversations=said.conversations, messages=said.messages,
        events=sum(row["num_event"] for row in rows), formats=formats,
        genres=Counter(r["genre"] for r in rows if r["genre"]),
        prompts=Counter(r["prompt_code"] for r in rows if r["prompt_code"]),
        conditions=Counter((r["genre"], r["temperature"], r["frequency_penalty"]) for r in rows),
        survey_sessions=len(survey_rows),
        survey_columns=list(source.survey_columns) if survey_rows else [],
        redacted_by_entity=Counter(r.entity for r in redactions if r.entity != "IN_CONTEXT"),
        redacted_by_place=Counter(redaction_report.place(r) for r in redactions),
        redacted_sessions=len({r.session_id for r in redactions}),
        withdrawn_excluded=len(excluded), study=source.study,
        simulated=sum(1 for r in rows if r.get("simulated") == "true") + said.simulated,
        design_files=design_files, arms=arms, within=within_design, creators=source.creators,
    )  # fmt: skip
    previous_changelog = ""
    with previous.opened(before[1]) if before else contextlib.nullcontext() as old:
        if old is not None:
            previous_changelog = previous.follow(facts, before[0], old)
        datapackage.write(staging, facts)
        if old is not None:
            previous.compare(facts, staging, old, key, excluded, withdrawn, left_out)
    (staging / layout.CARD).write_text(card.render(facts), encoding="utf-8")
    (staging / layout.CHANGELOG).write_text(
        changelog.render(facts, previous_changelog), encoding="utf-8"
    )
    write_sums(staging)
    return facts, redactions
