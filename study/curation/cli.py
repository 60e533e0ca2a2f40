"""`study curate`: check, replay and measure CoAuthor-format session files.

Registered in the main CLI with `main.add_command(curate)`; also runnable on its own as
`python -m study.curation.cli`.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import click

from study import paradigms
from study.curation.blocks import event_blocks
from study.curation.formats import SessionFileError, read_session, session_files
from study.curation.metadata_files import (
    GENRE_SHEETS,
    MetadataError,
    find_metadata,
    metadata_at,
    read_metadata_files,
)
from study.curation.metrics import DEFAULT_MUTUALITY, MUTUALITY_SETS, equality, mutuality
from study.curation.onepass import check_and_measure_paths
from study.curation.quote import quote
from study.curation.replay import AUTHOR_NAMES, DeltaError
from study.curation.replay import replay as replay_session
from study.curation.runner import stats_paths, validate_paths
from study.curation.stats import GROUPINGS, RowWriter, Summary, render_table
from study.curation.summary import EXAMPLES, ValidationSummary
from study.curation.validate import ERROR, MAX_PER_CODE, SessionReport

PATHS = click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
PROCESSES = click.option(
    "--processes", "-j", type=click.IntRange(min=1), default=None,
    help="Worker processes (default: all cores).",
)  # fmt: skip
PROGRESS = click.option(
    "--progress/--no-progress", default=None,
    help="Show a progress bar (default: when stderr is a terminal).",
)  # fmt: skip
MUTUALITY = click.option(
    "--mutuality-sets", type=click.Choice(sorted(MUTUALITY_SETS)), default=DEFAULT_MUTUALITY,
    show_default=True,
    help="Reading of the paper's ambiguous mutuality sets: as printed (paper) or as described "
    "in its prose (prose, query instead of insert); see study.curation.metrics.",
)  # fmt: skip
AUTHOR_STYLES = {"prompt": {"dim": True}, "writer": {}, "suggestion": {"fg": "cyan"}}


@click.group()
def curate() -> None:
    """Check, replay and measure CoAuthor session files (.jsonl, one event per line).

    Reads the 2021 release format (and this project's export, which is identical) and the
    later interface's format, detected per file. PATH arguments are files or folders
    (searched recursively for .jsonl).
    """


def _files(paths) -> list[Path]:
    try:
        files = session_files(paths)
    except FileNotFoundError as error:
        raise click.ClickException(str(error)) from None
    if not files:
        raise click.ClickException(f"no .jsonl session files under {', '.join(paths)}")
    return files


@curate.command()
@PATHS
@click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text",
    show_default=True,
    help="text: a summary table with the first few issues of each kind; json: one document "
    "for machines (every session's report and the summary).",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as --format json.")
@click.option(
    "--verbose", "-v", is_flag=True,
    help="List every issue of every session, each with its fix (default: the first "
    f"{EXAMPLES} of each kind).",
)  # fmt: skip
@click.option(
    "--warnings/--no-warnings", "show_warnings", default=True, show_default=True,
    help="List warnings as well as errors (the summary counts both).",
)  # fmt: skip
@PROCESSES
@PROGRESS
def validate(
    paths, output_format: str, as_json: bool, verbose: bool, show_warnings: bool, processes,
    progress,
) -> None:  # fmt: skip
    """Check every session against its schema and the format's invariants.

    A study folder (with study.toml) is checked from its database: each stored session as
    `study export` writes it, and against what the server issued (a proactive event's
    paradigm, suggestion ids and texts; README, "Logs no client can forge").

    Errors (the session is unusable or breaks the format) and warnings (oddities real logs
    have: timestamps going back, unanswered queries, cursor mismatches, pasted images, ...)
    name file, line, field and the fix. By default a table counts each kind of issue and the
    first few of each kind are shown; --verbose lists them all. Exit status 0 when no session
    has an error. Schemas: schemas/coauthor-*.schema.json.
    """
    as_json = as_json or output_format == "json"
    summary = ValidationSummary()
    out = sys.stdout
    if as_json:
        out.write('{"sessions": [')
    keep = None if verbose else MAX_PER_CODE
    studies = [Path(p) for p in paths if (Path(p) / "study.toml").is_file()]
    files = [p for p in paths if Path(p) not in studies]
    reports = itertools.chain(
        _study_reports(studies, keep),
        validate_paths(_files(files), keep=keep, processes=processes, progress=progress) if files else (),
    )
    for report in reports:
        summary.add(report)
        if as_json:
            separator = ",\n" if summary.sessions > 1 else "\n"
            out.write(separator + json.dumps(report.to_dict(), ensure_ascii=False))
        elif verbose:
            _print_issues(report, show_warnings)
    if as_json:
        out.write('\n], "summary": ' + json.dumps(summary.to_dict()) + "}\n")
    else:
        _write_summary(summary, verbose, show_warnings, out)
    sys.exit(1 if summary.with_errors else 0)


def _write_summary(summary: ValidationSummary, verbose: bool, show_warnings: bool, out) -> None:
    """validate's text output after the sessions: examples of each issue, headline, table."""
    if not verbose and summary.occurrences:
        out.write(summary.render_examples(show_warnings) + "\n")
    out.write(f"\n{summary.headline()}\n")
    if summary.occurrences:
        out.write(render_table(summary.table()) + "\n")
        if not verbose:
            out.write("Every issue with its fix: --verbose; for machines: --format json.\n")


def _study_reports(folders: list[Path], keep: int | None) -> Iterator[SessionReport]:
    """A study folder's stored sessions, checked also against what its server issued."""
    if not folders:
        return
    from study.config import ConfigError, load
    from study.export.validate import validate_study  # the database is read by export's layer

    for folder in folders:
        try:
            study = load(folder)
        except ConfigError as error:
            raise click.ClickException(f"{folder}: {error}") from None
        try:
            yield from validate_study(study, keep=keep)
        except ConfigError as error:  # a name its stored sessions use, gone from study.toml
            raise click.ClickException(str(error)) from None


def _print_issues(report: SessionReport, show_warnings: bool) -> None:
    for issue in sorted(report.issues, key=lambda i: (i.severity != ERROR, i.line or 0)):
        if issue.severity == ERROR or show_warnings:
            sys.stdout.write(f"{issue.severity}: {issue.render()}\n")


@curate.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--at", "at", type=int, default=None, metavar="EVENT",
    help="Show the text right after this event (its eventNum, from 0); default: the end.",
)  # fmt: skip
@click.option("--authors", is_flag=True, help="Mark who wrote each character.")
@click.option(
    "--mark", type=click.Choice(["auto", "color", "tags"]), default="auto", show_default=True,
    help="How --authors marks text: colours, or [writer]...[/writer] tags (auto: colours on a "
    "terminal).",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the text and author spans as JSON.")
def replay(file: str, at, authors: bool, mark: str, as_json: bool) -> None:
    """Print the text of session FILE at any point of the session.

    The text starts as the prompt (currentDoc of the first event) and follows every delta.
    With --authors, characters are marked by who wrote them: prompt, writer (user events) or
    suggestion (accepted GPT-3 suggestions).
    """
    every = f"`study curate validate {file}` lists every problem"
    try:
        session = read_session(file)  # its messages name the file and line
    except SessionFileError as error:
        raise click.ClickException(f"{error}; {every}.") from None
    try:
        document = replay_session(session.events, at)
    except DeltaError as error:
        line = "" if error.event is None else f" line {session.line_of(error.event)}"
        raise click.ClickException(
            f"{file}{line}: {error}. Fix: restore the original log (lines lost, changed or out "
            f"of order), or replay an earlier event with --at; {every}."
        ) from None
    except ValueError as error:
        raise click.ClickException(f"{file}: {error}") from None
    if as_json:
        spans = [{"author": a, "start": s, "end": e} for a, s, e in document.spans()]
        data = {"session_id": Path(file).stem, "event": document.event_index,
                "text": document.text, "spans": spans}  # fmt: skip
        click.echo(json.dumps(data, ensure_ascii=False))
        return
    if not authors:
        click.echo(document.text, nl=not document.text.endswith("\n"))
        return
    color = mark == "color" or (mark == "auto" and sys.stdout.isatty())
    pieces = []
    for author, start, end in document.spans():
        text = document.text[start:end]
        pieces.append(
            click.style(text, **AUTHOR_STYLES[author]) if color else f"[{author}]{text}[/{author}]"
        )
    click.echo("".join(pieces), color=color)
    if color:
        legend = " ".join(
            click.style(name, **AUTHOR_STYLES[name]) for name in AUTHOR_NAMES.values()
        )
        click.echo(legend, err=True, color=True)


@curate.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the blocks as JSON.")
@MUTUALITY
def blocks(file: str, as_json: bool, mutuality_sets: str) -> None:
    """List the event blocks (Table 2 of the paper) of session FILE.

    Hover events are dropped first (the paper's Table 1 does not list them); events that fit
    no block are shown as `unmatched`. Ends with the block counts, equality and mutuality.
    """
    try:
        session = read_session(file)
    except SessionFileError as error:
        raise click.ClickException(
            f"{error}; `study curate validate {file}` lists every problem."
        ) from None
    events = session.events
    for index, event in enumerate(events):
        if type(event.get("eventName")) is not str:
            got = "no eventName" if "eventName" not in event else f"eventName {quote(event['eventName'])}"
            raise click.ClickException(
                f"{file} line {session.line_of(index)}: the event has {got}; blocks are made of "
                "named events. Fix: give it its eventName (a text such as \"text-insert\"), or "
                f"remove the line; `study curate validate {file}` lists every problem."
            )
    found = event_blocks(events)
    counts = Counter(block.name for block in found)
    scores = {"equality": equality(counts), "mutuality": mutuality(counts, sets=mutuality_sets)}
    if as_json:
        data = {
            "session_id": Path(file).stem,
            "blocks": [{"name": b.name, "events": list(b.events)} for b in found],
            "counts": dict(counts),
            **{name: (None if math.isnan(v) else v) for name, v in scores.items()},
        }
        click.echo(json.dumps(data))
        return
    for number, block in enumerate(found):
        span = f"{block.start}" if block.start == block.end else f"{block.start}-{block.end}"
        names = " ".join(events[i]["eventName"] for i in block.events[:3])
        more = " ..." if len(block.events) > 3 else ""
        click.echo(f"{number:5d}  {block.name:<9} events {span:<11} {names}{more}")
    click.echo("\n" + ", ".join(f"{name} {n}" for name, n in counts.most_common()))
    click.echo(
        f"equality {scores['equality']:.3f}, mutuality {scores['mutuality']:.3f} "
        f"({mutuality_sets} sets)"
    )


@curate.command()
@PATHS
@click.option(
    "--out", type=click.Path(dir_okay=False), default=None,
    help="Write the rows to this .csv or .parquet file (default: CSV on stdout).",
)  # fmt: skip
@click.option(
    "--summary", type=click.Choice(sorted(GROUPINGS)), default=None,
    help="Print Table 3-style means by genre, condition (randomness), prompt or writer.",
)  # fmt: skip
@click.option(
    "--metadata", type=click.Path(exists=True), default=None,
    help="The metadata to join for --summary: metadata.csv, the release's per-genre sheets "
    f"({' and '.join(GENRE_SHEETS)}; naming one reads both), or a folder holding them "
    "(default: found in or up to two folders above PATH).",
)  # fmt: skip
@click.option(
    "--validate", "check", is_flag=True,
    help="Also validate every session in the same pass (each file parsed once): the rows as "
    "without it, and on stderr what `study curate validate` prints.",
)  # fmt: skip
@MUTUALITY
@PROCESSES
@PROGRESS
def stats(paths, out, summary, metadata, check, mutuality_sets, processes, progress) -> None:
    """Write one row of statistics per session (official metadata, Table 3, section 5.1.3).

    Columns: session_id, format, num_event, num_query, num_selected, perc_selected,
    num_cursor, time, written_by_human (the release's metadata definitions),
    first/last_timestamp, final_words, writer_share_final, equality, mutuality, distinct_2 and
    blocks_<name> counts. Sessions that cannot be read are skipped with a message, and the
    exit status is then 1.

    With --validate, every file is also checked as `study curate validate` checks it, from
    the same parse (study.curation.onepass): its summary of issues goes to stderr after the
    rows, and the exit status is 1 also when a session has an error.
    """
    if out is not None and not Path(out).resolve().parent.is_dir():
        # Checked before any work: a Parquet file is opened only after the last session.
        raise click.BadParameter(
            f"{out}: the folder {Path(out).parent} does not exist; create it first",
            param_hint="--out",
        )
    files = _files(paths)
    table = None
    if summary:
        try:
            found = metadata_at(metadata) if metadata else _find_metadata(paths)
            if found is None:
                raise click.ClickException(
                    "--summary needs session metadata: no metadata.csv, "
                    f"{' or '.join(GENRE_SHEETS)} in or up to two folders above "
                    f"{', '.join(paths)}; pass --metadata FILE_OR_FOLDER"
                )
            table = Summary(summary, read_metadata_files(found))
        except MetadataError as error:
            raise click.ClickException(str(error)) from None
        click.echo(f"Read {found.describe()}.", err=True)
    skipped = 0
    checked = ValidationSummary() if check else None
    with RowWriter(out or sys.stdout) as writer:
        if checked is None:
            jobs = stats_paths(files, mutuality_sets, processes=processes, progress=progress)
        else:
            jobs = _checked(
                check_and_measure_paths(files, mutuality_sets, processes=processes, progress=progress),
                checked,
            )
        for row, problem in jobs:
            if row is None:
                skipped += 1
                click.echo(f"skipped {problem}", err=True)
                continue
            writer.write(row)
            if table is not None:
                table.add(row)
    if table is not None:
        click.echo(render_table(table.table()), err=out is None)
    if out:
        click.echo(f"Wrote {len(files) - skipped} rows to {out}.", err=True)
    if checked is not None:
        _write_summary(checked, False, True, sys.stderr)
    sys.exit(1 if skipped or (checked is not None and checked.with_errors) else 0)


def _checked(jobs, summary: ValidationSummary) -> Iterator[tuple[dict | None, str | None]]:
    """The (row, problem) of each one-pass job, its validation report added to `summary`."""
    for report, measured in jobs:
        summary.add(report)
        yield measured


def _find_metadata(paths):
    """The metadata in a PATH folder (or a file's folder), or up to two folders above: two, so
    that a release split per genre (`sessions/creative/`) finds its sheets."""
    for raw in paths:
        found = find_metadata(raw, levels_up=2)
        if found is not None:
            return found
    return None


# Each paradigm's own commands (study.paradigms.base.Paradigm.curate): MindCopilot's metrics
# (study curate proactive, proactive-simulate, ked-calibrate), the chat study's conversations.
for _paradigm in paradigms.registered():
    if _paradigm.curate:
        _paradigm.curation_commands().register(curate)


if __name__ == "__main__":  # pragma: no cover
    curate()
