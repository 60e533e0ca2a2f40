"""The `study report` command."""

from __future__ import annotations

from pathlib import Path

import click

from study.metrics.judges.options import judge_options, open_judge


@click.command("report")
@click.argument("source", type=click.Path(exists=True))
@click.option("--out", type=click.Path(dir_okay=False), default="report.html", show_default=True,
              help="The HTML file to write.")  # fmt: skip
@click.option("--table3", is_flag=True,
              help="Print CoAuthor's Table 3 for SOURCE beside the paper's figures, and stop.")
@click.option("-j", "--processes", type=click.IntRange(min=1), default=None,
              help="Cores for reading the sessions (default: all).")
@click.option("--languagetool", default=None, metavar="URL",
              help="A LanguageTool server (e.g. http://localhost:8081) for grammaticality "
              "(CoAuthor §5.1.1); without it the report says why it is not computed.")
@judge_options
def report(source: str, out: str, table3: bool, processes: int | None,
           languagetool: str | None, judge_endpoint: str, judge_model: str, judge_key_env: str,
           judge_cache: str | None, deterministic_judge: bool) -> None:
    """Write an HTML report of SOURCE: a study folder, a release, or a folder of sessions.

    Participation funnel and stage times (study folders only), sessions per condition and
    prompt, suggestion latency and failures, acceptance and writer share with 95% bootstrap
    intervals, CoAuthor's section 5 analyses, and survey results; for a chat study its
    conversations' metrics (its simulated ones' ITR only with a judge, as in `study curate
    chat`), for proactive co-writing its suggestions' (HAR and KED only with a judge, as in
    `study curate proactive`). One file, no network but the judge's.
    """
    from study.metrics.judges.client import JudgeError
    from study.report import ReportSourceError, write_report

    if not Path(source).is_dir():
        # A release is published as a folder and a .tar.gz of it: the archive is what a
        # reader downloads, and what `study release verify` takes.
        fix = (f"it is a release archive: unpack it first (`tar xzf {source}`) and give its folder"
               if source.endswith(".tar.gz") else
               f"give the folder that holds it ({Path(source).parent})")  # fmt: skip
        raise click.BadParameter(
            f"{source} is a file; SOURCE is a folder (a study folder, a release's folder or a "
            f"folder of sessions): {fix}.",
            param_hint="SOURCE",
        )
    if table3:
        _print_table3(source, processes)
        return
    judge_cache = judge_cache or str(Path(out).parent / "judge-cache")
    with open_judge(judge_endpoint, judge_model, judge_key_env, judge_cache, deterministic_judge,
                    Path(out).parent, False) as judge:  # fmt: skip
        try:
            data = write_report(source, out, processes=processes, languagetool=languagetool,
                                judge=judge)  # fmt: skip
        except (ReportSourceError, JudgeError) as error:
            # Nothing is written: the report file appears whole or not at all.
            raise click.ClickException(str(error)) from None
    click.echo(f"Wrote {out}: {_sessions_counted(data)}"
               + (f"; {len(data.unreadable)} unreadable file(s) left out" if data.unreadable else ""))
    if data.metadata:
        click.echo(f"Read {data.metadata}.")
    from study.store import withdrawals

    if line := withdrawals.left_out_line(*data.withdrawn):
        click.echo(line + " of this report.")


def _sessions_counted(data) -> str:
    """The sessions the report covers, and how many `study simulate` wrote, of each kind: a chat
    study's sessions are its conversations (no CoAuthor log), which "0 sessions (3 simulated), 3
    chat conversations" read as a contradiction."""
    def counted(number: int, what: str, simulated: int) -> str:
        return f"{number} {what}" + (f" ({simulated} simulated)" if simulated else "")

    talks, talks_simulated = len(data.unlogged), len(data.unlogged_simulated)
    logged, logged_simulated = len(data.sessions), data.simulated - talks_simulated
    if not talks:
        return counted(logged, "sessions", logged_simulated)
    if not logged:
        return counted(talks, "sessions, all chat conversations", talks_simulated)
    # Not summed: a chat arm's session beside a writing study's may have both (a release's
    # conversations.jsonl beside its logs).
    return (f"{counted(logged, 'sessions with a CoAuthor log', logged_simulated)}, "
            f"{counted(talks, 'chat conversations', talks_simulated)}")


def _print_table3(source: str, processes: int | None = None) -> None:
    """Table 3 from a folder of sessions with the release's metadata (metadata.csv, or the
    per-genre sheets creative.csv and argumentative.csv as the release is distributed)."""
    import sys
    from pathlib import Path

    from study.curation.formats import session_files
    from study.curation.metadata_files import (
        GENRE_SHEETS,
        MetadataError,
        find_metadata,
        read_metadata_files,
        session_logs,
    )
    from study.curation.runner import stats_paths
    from study.curation.stats import render_table
    from study.report.table3 import table3, with_paper

    path = Path(source)
    if (path / "study.toml").is_file():
        # A study folder: its finished sessions, exported as `study export` writes them.
        from study.report import ReportSourceError, load

        try:
            data = load(path, processes=processes)
        except ReportSourceError as error:
            raise click.ClickException(str(error)) from None
        sessions = [s for s in data.sessions if s.assistant]  # a control arm is not in Table 3
        rows = [s.stats for s in sessions]
        metadata = {s.session_id: {"genre": s.genre, "prompt_code": s.prompt_code,
                                   "worker_id": s.writer} for s in sessions}  # fmt: skip
        click.echo(render_table(with_paper(table3(rows, metadata))))
        click.echo(f"\n{len(rows)} finished sessions of the study in {path}.")
        return
    found = find_metadata(path)
    if found is None:
        raise click.ClickException(
            f"{path}: no metadata.csv, {' or '.join(GENRE_SHEETS)} here or one folder up. "
            "--table3 needs the release's metadata (genre, prompt_code, worker_id) beside its "
            "sessions: the release's per-genre sheets exported as CSV, or one metadata.csv."
        )
    files = session_logs(path) or session_logs(found.folder) or session_files([path])
    if not files:
        raise click.ClickException(f"{path}: no session files (*.jsonl)")
    try:
        metadata = read_metadata_files(found)
    except MetadataError as error:
        raise click.ClickException(str(error)) from None
    rows, skipped = [], []
    for row, problem in stats_paths(files, "paper", processes=processes):
        (rows.append(row) if row is not None else skipped.append(problem))
    ours = table3(rows, metadata)
    click.echo(render_table(with_paper(ours)))
    for count, column in (("writers", "worker_id"), ("prompts", "prompt_code")):
        if ours and ours[0][count] is None:
            click.echo(f"\n{count}: not counted (–): no session's row in "
                       f"{', '.join(str(f) for f in found.files)} has a {column}. Add the "
                       f"release's {column} column to count them.")
    folders = sorted({str(f.parent) for f in files})
    click.echo(
        f"\n{len(rows)} sessions from {', '.join(folders)}; {found.describe()}. The paper's rows "
        "are over the full release (1,445 sessions). Definitions: study/report/table3.py and "
        "README (Study reports)."
    )
    for problem in skipped:
        click.echo(f"skipped {problem}", err=True)
    if skipped:
        sys.exit(1)
