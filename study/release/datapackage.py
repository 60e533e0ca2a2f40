"""datapackage.json: the release as a Frictionless Data Package (https://datapackage.org).

Tables (metadata, survey, stats, summary) are tabular resources with a Table Schema, so the
`frictionless` validator checks every row; the session logs, the conversations, the Parquet
copy and the record schemas are file resources with their size and SHA-256, which the validator checks too, and so
are a study's design files (arms.json, judging/, preregistration.json, within.json). The
`study` property records the release layout version, the pseudonym namespace and the key's
fingerprint (`study.release.keys.ReleaseKey.fingerprint`), which the version rules compare, and
within subjects the design (`design`: study.release.within.summary); between subjects it has no
`design`.
No `$schema` URL is given: validation stays offline.
"""

from __future__ import annotations

import json
from pathlib import Path

from study.release import card, contact, creators, design, tables, within
from study.release.checksums import sha256_file
from study.release.facts import LAYOUT_VERSION, ReleaseFacts
from study.release.layout import (
    CONVERSATIONS,
    METADATA_CSV,
    METADATA_PARQUET,
    SCHEMAS,
    SESSIONS,
    STATS_CSV,
    SUMMARY_CSV,
    SURVEY_CSV,
)  # fmt: skip

_MEDIATYPES = {"csv": "text/csv", "json": "application/json"}


def _file(directory: Path, path: str, name: str, **extra) -> dict:
    target = directory / path
    return {
        "name": name,
        "type": "file",
        "path": path,
        **extra,
        "bytes": target.stat().st_size,
        "hash": "sha256:" + sha256_file(target),
    }


def _table(directory: Path, path: str, name: str, schema: dict, description: str) -> dict:
    return {
        "name": name,
        "type": "table",
        "path": path,
        "format": "csv",
        "mediatype": "text/csv",
        "encoding": "utf-8",
        "description": description,
        "schema": schema,
        "bytes": (directory / path).stat().st_size,
        "hash": "sha256:" + sha256_file(directory / path),
    }


def build(directory: Path, facts: ReleaseFacts) -> dict:
    resources = [
        _table(directory, METADATA_CSV, "metadata", tables.metadata_schema(),
               "One row per session: CoAuthor's metadata columns, worker_id pseudonymised."),
        _file(directory, METADATA_PARQUET, "metadata-parquet", format="parquet",
              mediatype="application/vnd.apache.parquet",
              description="metadata.csv as typed Parquet."),
    ]  # fmt: skip
    if (directory / SURVEY_CSV).is_file():
        survey = tables.survey_schema(facts.survey_columns)
        description = "Post-session survey answers, redacted."
        resources.append(_table(directory, SURVEY_CSV, "survey", survey, description))
    description = "Statistics per session from the curation core (study.curation.stats)."
    resources.append(_table(directory, STATS_CSV, "stats", tables.stats_schema(), description))
    description = ("Means by genre and by condition (the paper's Table 3): a condition is the "
                   "arm metadata.csv names, else the randomness of its decoding settings (high or "
                   "low for CoAuthor's, the paper's Figure 2, both genres pooled; T=... FP=... for "
                   "others); queries and acceptance "
                   "are over the sessions that had a Tab list, empty for a group without one.")
    summary = tables.summary_schema()
    resources.append(_table(directory, SUMMARY_CSV, "summary", summary, description))
    if (directory / CONVERSATIONS).is_file():
        resources.append(_file(directory, CONVERSATIONS, "conversations", format="jsonl",
                               mediatype="application/jsonl", encoding="utf-8",
                               description="The conversations, one per line, redacted "
                               "(schemas/chat-release.schema.json)."))  # fmt: skip
    for path in sorted((directory / SCHEMAS).glob("*.json")):
        name = "schema-" + path.stem.replace(".schema", "")
        resources.append(_file(directory, f"{SCHEMAS}/{path.name}", name, format="json",
                               mediatype="application/schema+json"))  # fmt: skip
    # The study's design (study.release.design): arms, a judging round's files, the
    # preregistration record. Files with their size and SHA-256, like the logs.
    for entry in facts.design_files:
        top = directory / entry
        paths = [top] if top.is_file() else sorted(top.rglob("*"))
        for path in (p for p in paths if p.is_file()):
            relative = path.relative_to(directory).as_posix()
            kind = path.suffix.lstrip(".")
            descriptions = {**design.DESCRIPTIONS, within.WITHIN: within.DESCRIPTION}
            described = {"description": descriptions[relative]} if relative in descriptions else {}
            resources.append(_file(directory, relative, path.stem.lower(), format=kind,
                                   mediatype=_MEDIATYPES.get(kind, "application/octet-stream"),
                                   **described))  # fmt: skip
    for path in sorted((directory / SESSIONS).glob("*.jsonl")):
        resources.append(_file(directory, f"{SESSIONS}/{path.name}", f"session-{path.stem}",
                               format="jsonl", mediatype="application/jsonl",
                               encoding="utf-8"))  # fmt: skip
    package = {
        "name": facts.name,
        "title": facts.title,
        "version": str(facts.version),
        "created": f"{facts.date}T00:00:00Z",
        "description": (
            "Keystroke-level logs of writing with AI suggestions (CoAuthor format). See README.md."
            if facts.sessions else "Conversations of people writing a document with a chat "
            "assistant (conversations.jsonl). See README.md."
        ),
        "keywords": card.tags(facts),
        "study": {
            "layout": LAYOUT_VERSION,
            "namespace": facts.namespace,
            "key_fingerprint": facts.key_fingerprint,
            "sessions": facts.sessions,
            "conversations": facts.conversations,
            "writers": facts.writers,
        },
        "resources": resources,
    }
    if facts.within is not None:  # within subjects: the sessions come in sets per participant
        package["study"]["design"] = within.summary(facts.within)
    # The creators and the funding the curator declared (study.release.creators), then the contact.
    declared = creators.contributors(facts.creators)
    if facts.study and facts.study.contact:
        declared.append(contact.contributor(facts.study.contact))
    if declared:
        package["contributors"] = declared
    if facts.license not in ("other", "unknown", ""):
        package["licenses"] = [{"name": facts.license}]
    return package


def write(directory: Path, facts: ReleaseFacts) -> None:
    text = json.dumps(build(directory, facts), indent=2, ensure_ascii=False) + "\n"
    (directory / "datapackage.json").write_text(text, encoding="utf-8")


def validate(directory: Path) -> list[str]:
    """Problems the `frictionless` validator finds (every row of every table, every checksum)."""
    from frictionless import validate as frictionless_validate

    report = frictionless_validate(str(directory / "datapackage.json"))
    if report.valid:
        return []
    problems = []
    for error in report.errors:
        problems.append(f"datapackage.json: {error.message}")
    for task in report.tasks:
        for error in task.errors[:20]:
            where = f" row {error.row_number}" if getattr(error, "row_number", None) else ""
            problems.append(f"{task.name}{where}: {error.message}")
    return problems
