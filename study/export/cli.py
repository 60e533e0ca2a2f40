"""`study export`: a study's sessions in the CoAuthor format (study.export.coauthor), or in a
paradigm's own format (--format chat, proactive), with the surveys and any judging ratings.
"""

from __future__ import annotations

from pathlib import Path

import click

from study import config as study_config
from study import paradigms as registry
from study.cli_options import Registered, load_study


@click.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", type=Registered(("coauthor",), registry.export_formats),
              default="coauthor", show_default=True,
              help="coauthor: the 2021 release format; chat: conversations.jsonl; proactive: "
              "MindCopilot L1-L3 sessions with the extension (schemas/coauthor-proactive.schema.json).")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Output folder.")
@click.option("--all", "include_unfinished", is_flag=True,
              help="Also export sessions whose writer has not finished writing.")
def export(directory: str, fmt: str, out: str, include_unfinished: bool) -> None:
    """Export sessions as OUT/<session_id>.jsonl and OUT/metadata.csv (--format proactive:
    OUT/sessions.csv and OUT/suggestion_requests.json instead of metadata.csv; --format chat: a
    chat study's OUT/conversations.jsonl), with OUT/survey.csv and OUT/surveys.json in every
    format when the exported sessions have survey answers."""
    from study.export.coauthor import ExportError, export_study

    if fmt != "coauthor":  # a paradigm's own format (study.paradigms.base.Paradigm.exports)
        exporter = registry.export_formats()[fmt].exporter(fmt)
        try:
            study = load_study(directory)
            click.echo(exporter(study, Path(out), include_unfinished=include_unfinished))
        except ValueError as error:
            raise click.ClickException(str(error)) from None
        _say_withdrawn(study)
        return

    study = load_study(directory)
    path = registry.of_session(study, None)
    if path is not None and path.exports:
        # A study whose own path keeps no CoAuthor log (a chat study's conversations).
        raise click.ClickException(f"{directory} is a {path.name} study; export it with --format {next(iter(path.exports))}")
    try:
        summary = export_study(study, Path(out), include_unfinished=include_unfinished)
    except (study_config.ConfigError, ExportError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(
        f"Exported {summary.sessions} sessions ({summary.events} events) to {out}"
        + (f"; skipped {summary.skipped} without events" if summary.skipped else "")
    )
    _say_withdrawn(study)
    if "judging" in study.raw:  # a judging round's ratings, joined to these sessions
        from study.judging.cli import collect
        from study.judging.export import RATINGS_CSV, write
        from study.judging.settings import from_study

        found = collect(study, from_study(study))
        if found.ratings:
            click.echo(f"Exported {write(found, Path(out))} judging ratings to {Path(out) / RATINGS_CSV}")

    # A qualification round's reviews (the reviewers' workspace), for the team's own analysis.
    from study.review.export import export_beside as export_reviews

    reviewed = export_reviews(study, Path(out))
    if reviewed:
        click.echo(reviewed)

    # Arms of several paradigms: a paradigm's arms may keep their own format too (e.g. ghost
    # text's extended logs, study.paradigms.proactive.coauthor_log).
    for module in registry.log_hooks():
        line = module.export_beside(study, Path(out), include_unfinished=include_unfinished) if hasattr(module, "export_beside") else None
        if line:
            click.echo(line)


def _say_withdrawn(study) -> None:
    """How many sessions the export left out because their writer withdrew (study.store.withdrawals)."""
    from study.store import make_engine, reading
    from study.store import withdrawals

    engine = make_engine(study.database_url)
    try:
        with reading(engine) as connection:
            line = withdrawals.left_out_line(*withdrawals.left_out(connection))
    finally:
        engine.dispose()
    if line:
        click.echo(line + " of this export.")
