"""CHANGELOG.md in Keep a Changelog form (https://keepachangelog.com/en/1.1.0/).

Each release carries the whole history: the previous release's entries, with the new one on
top. Entries are generated from the diff with the previous release; sessions withdrawn by their
writers are counted, never listed.
"""

from __future__ import annotations

from study.release.facts import ReleaseFacts

HEADER = """# Changelog

All notable changes to this dataset are documented in this file.

The format is based on [Keep a Changelog](https://keepachangelog.com/en/1.1.0/), and this
dataset adheres to [Semantic Versioning](https://semver.org/spec/v2.0.0.html) as its README
describes under "Versioning".
"""
LIST_LIMIT = 50  # session ids listed per section; more are counted


def render(facts: ReleaseFacts, previous_changelog: str = "") -> str:
    older = ""
    if previous_changelog and "\n## [" in previous_changelog:
        older = previous_changelog[previous_changelog.index("\n## [") + 1 :]
    return HEADER + "\n" + entry(facts) + ("\n" + older if older else "")


def entry(facts: ReleaseFacts) -> str:
    sections: dict[str, list[str]] = {"Added": [], "Changed": [], "Removed": [], "Security": []}
    diff = facts.diff
    # A chat study's instances are conversations, had by participants (as its card says).
    unit, who = ("session", "writer") if facts.sessions or not facts.conversations else ("conversation", "participant")
    if diff is None:
        sections["Added"].append(
            f"First release: {facts.sessions} {_plural(facts.sessions, 'session')} by "
            f"{facts.writers} {_plural(facts.writers, 'writer')}, written {_span(facts)}."
            if unit == "session" else
            f"First release: {facts.conversations} {_plural(facts.conversations, unit)} by "
            f"{facts.writers} {_plural(facts.writers, who)}, written {_span(facts)}."
        )
    else:
        if diff.added:
            sections["Added"].append(
                f"{len(diff.added)} {_plural(len(diff.added), unit)}: {_ids(diff.added)}."
            )
        for column in diff.columns_added:
            sections["Added"].append(f"Column `{column}` in metadata.")
        for name in diff.files_added:
            sections["Added"].append(f"File `{name}`.")
        if diff.changed:
            sections["Changed"].append(
                f"{len(diff.changed)} {_plural(len(diff.changed), unit)}: "
                + _ids(
                    [f"`{c.session_id}` ({'; '.join(c.what)})" for c in diff.changed], quote=False
                )
                + "."
            )
        if diff.files_changed:  # e.g. corrected survey answers: data, not documentation
            sections["Changed"].append(
                f"{_plural(len(diff.files_changed), 'File')} {_ids(diff.files_changed)}."
            )
        # Which arm changed and how, not just that arms.json did (study.release.arms_diff).
        sections["Changed"] += [f"Arms (`arms.json`): {change}." for change in diff.arms]
        if diff.license:
            sections["Changed"].append(f"Licence: `{diff.license[0]}` -> `{diff.license[1]}`.")
        if diff.rekeyed:
            sections["Changed"].append(
                "Writer pseudonyms were re-keyed: they do not match earlier releases."
            )
        withdrawn = [s for s in diff.removed if s in set(facts.withdrawn_removed)]
        left_out = [s for s in diff.removed if s in set(facts.left_out_removed)]
        others = [s for s in diff.removed
                  if s not in set(facts.withdrawn_removed) | set(left_out)]  # fmt: skip
        if withdrawn:
            sections["Removed"].append(
                f"{len(withdrawn)} {_plural(len(withdrawn), unit)} whose {who} withdrew "
                "from the study."
            )
        if left_out:
            sections["Removed"].append(
                f"{len(left_out)} {_plural(len(left_out), unit)} the curator left out "
                f"(`--exclude`): {_ids(left_out)}."
            )
        if others:
            sections["Removed"].append(
                f"{len(others)} {_plural(len(others), unit)} no longer in the source: "
                f"{_ids(others)}."
            )
        for column in diff.columns_removed:
            sections["Removed"].append(f"Column `{column}` from metadata.")
        for name in diff.files_removed:
            sections["Removed"].append(f"File `{name}`.")
    if facts.redacted_by_entity:
        kinds = ", ".join(f"{n} {entity}" for entity, n in sorted(facts.redacted_by_entity.items()))
        sections["Security"].append(
            f"Personal data redacted before release ({kinds}) in {facts.redacted_sessions} "
            f"{_plural(facts.redacted_sessions, unit)}"
            + (" and the survey answers." if facts.redacted_by_place.get("survey") else ".")
        )
    lines = [f"## [{facts.version}] - {facts.date}", ""]
    for title, items in sections.items():
        if items:
            lines += [f"### {title}", *(f"- {item}" for item in items), ""]
    if len(lines) == 2:
        lines += ["### Changed", "- Documentation only.", ""]
    return "\n".join(lines)


def _ids(items: list[str], quote: bool = True) -> str:
    shown = ", ".join(f"`{item}`" if quote else item for item in items[:LIST_LIMIT])
    return shown + (f" and {len(items) - LIST_LIMIT} more" if len(items) > LIST_LIMIT else "")


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def _span(facts: ReleaseFacts) -> str:
    if facts.first_date == facts.last_date:
        return f"on {facts.first_date}"
    return f"from {facts.first_date} to {facts.last_date}"
