"""The `study report` command."""

from __future__ import annotations

import click


@click.command("report")
@click.argument("source", type=click.Path(exists=True, file_okay=False))
@click.option("--out", type=click.Path(dir_okay=False), default="report.html", show_default=True,
              help="The HTML file to write.")  # fmt: skip
def report(source: str, out: str) -> None:
    """Write an HTML report of SOURCE: a study folder, a release, or a folder of sessions.

    Participation funnel and stage times (study folders only), sessions per condition and
    prompt, suggestion latency and failures, acceptance and writer share with 95% bootstrap
    intervals, CoAuthor's section 5 analyses, and survey results. One file, no network.
    """
    from study.report import ReportSourceError, write_report

    try:
        data = write_report(source, out)
    except ReportSourceError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Wrote {out}: {len(data.sessions)} sessions"
               + (f" ({data.simulated} simulated)" if data.simulated else "")
               + (f"; {len(data.unreadable)} unreadable file(s) left out" if data.unreadable else ""))
