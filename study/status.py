"""`study status`: how a study is going, for the researcher and, during a launch, the operator:
sessions by stage and condition, events, suggestions and their failures, every server process's
last minute (study.server.activity), each recruitment provider's submissions and money
(study.providers), and the surveys."""

from __future__ import annotations

import os
import time

import click

from study import config as study_config
from study import paradigms as registry
from study.plan import deviations as plan_deviations
from study.plan import standing as plan_standing


def database_shown(study) -> str:
    """The database URL with any password hidden, for what the commands print."""
    from study.store.engine import shown_url

    return shown_url(study.database_url)


def _last_minute(recent, slots: int) -> str:
    """`study status`'s lines for an operator during a launch: every server process's last
    minute (study.server.activity) and the model calls in flight."""
    from study.store.activity import percentile

    if recent.processes:
        plural = "es" if recent.processes > 1 else ""
        lines = [
            f"Last minute, {recent.processes} server process{plural}: {recent.requests:,} requests "
            f"({recent.event_requests:,} event batches, {recent.suggestion_requests:,} asking the "
            f"model), {recent.events:,} events stored"
        ]
        if recent.event_requests:
            p50, p99 = percentile(recent.event_ms, 0.5), percentile(recent.event_ms, 0.99)
            lines.append(f"  event acknowledgements: p50 {p50:.1f} ms, p99 {p99:.1f} ms in the server")
            # Growing, it says the writers wait for the database rather than the servers' CPU.
            lines.append(
                f"  database queue: at most {recent.event_queue_max:,} event batches waited at once "
                f"behind a write in progress (in one server process)"
            )
    else:
        lines = [
            f"Last minute: no requests recorded (no server running, or idle); "
            f"{recent.events:,} events stored"
        ]
    # No request waits for a slot: past them it is refused at once (503), and counted here.
    # So the line says what is in flight and how long the oldest has waited for the model.
    if recent.in_flight:
        age = max(0.0, time.time() - recent.oldest_in_flight_at)
        calls = f"{recent.in_flight} in flight of {slots} slots, the oldest asked {age:.0f} s ago"
    else:
        calls = f"none in flight ({slots} slots)"
    lines.append(f"  model calls: {calls}, {recent.busy_refusals:,} refused busy in the last minute")
    return "\n".join(lines)


def _arm_lists_line(lists, older: int, study) -> str | None:
    """Within subjects, once study.toml's arms changed mid-study: each participant keeps the arm
    list they began with (study.server.within), so the researcher sees how many began with each.
    None while everyone began with study.toml's list (one per genre) of now."""
    current = {tuple(c.name for c in study.conditions_for(genre)) for genre in {c.genre for c in study.conditions}}
    if set(lists) <= current:
        return None
    parts = [f"{count} with {', '.join(arms)}" + (" (study.toml's now)" if arms in current else "")
             for arms, count in lists.items()]  # fmt: skip
    if older:
        parts.append(f"{older} before arm lists were stored (they take study.toml's)")
    return "Participants by the arm list they began with: " + "; ".join(parts)


@click.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
def status(directory: str) -> None:
    """How the study in DIRECTORY is going: sessions, conditions, events, suggestions."""
    from study.store import create_tables, make_engine, reading
    from study.store.engine import sqlite_file
    from study.store.sessions import STAGES
    from study.store.summary import summarize

    try:
        study = study_config.load(directory)
    except study_config.ConfigError as error:
        raise click.ClickException(str(error)) from None
    database = sqlite_file(study.database_url)
    if database is not None and not os.path.exists(database):
        # Made here, an empty study.db would look like a study with no participants yet, and a
        # mistyped folder would gain a database of its own.
        click.echo(f"Study '{study.name}' has not been served yet: no database at {database} "
                   f"(`study serve {directory}` creates it).")
        click.echo(plan_standing.line(study, directory, started=0))
        return
    engine = make_engine(study.database_url)
    create_tables(engine)
    from study.export.surveys import counts as survey_counts
    from study.store.simulated import simulated_ids

    from study import providers
    from study.review import progress as review_progress
    from study.server import model_calls, within
    from study.server.database_trouble import disk_warning
    from study.server.limits import from_study as limits_of
    from study.store import withdrawals
    from study.store.activity import recent as recent_activity

    limits = limits_of(study)
    with reading(engine) as connection:
        # A call still waiting for the model is in flight (the last minute's line), not failed.
        in_flight_since = time.time() - model_calls.in_flight_seconds(study)
        summary = summarize(connection, (model_calls.NO_OUTCOME, in_flight_since))
        recent = recent_activity(connection, model_calls.NO_OUTCOME, model_calls.in_flight_seconds(study))
        surveys = survey_counts(connection)
        hooks = registry.path_hooks(study)  # e.g. a chat study's conversations
        path_lines = hooks.status(connection, study) if hooks is not None else []
        simulated = len(simulated_ids(connection))
        within_design = study.assignment == "within"
        arm_lists = within.arm_lists_begun(connection) if within_design else None
        # Every recruitment provider's submissions and money, from the database alone.
        recruitment = [line for provider in providers.registered()
                       for line in provider.summaries(connection, study)]  # fmt: skip
        review_lines = review_progress.lines(connection, study)
        started = plan_deviations.started(connection)
        started_withdrawn = plan_deviations.started_withdrawn(connection)
        withdrawn_line = withdrawals.left_out_line(*withdrawals.left_out(connection))
    engine.dispose()
    total = sum(summary.stages.values())
    click.echo(f"Study '{study.name}' ({database_shown(study)})")
    stages = registry.path(study) or STAGES
    by_stage = ", ".join(f"{stage} {summary.stages[stage]}" for stage in stages if summary.stages[stage])
    click.echo(f"Sessions: {total}" + (f" ({by_stage})" if by_stage else ""))
    configured = [c.name for c in study.conditions]
    # Sessions stored under a condition study.toml no longer names (renamed mid-study) are still
    # sessions: counted under their stored name, as `study export` names them when it refuses.
    gone = sorted(name for name in summary.conditions if name not in configured)
    closed = {c.name for c in study.conditions if not c.assign}
    click.echo("Conditions: " + ", ".join([*(f"{name} {summary.conditions[name]}"
                                             + (" (closed to new participants)" if name in closed else "")
                                             for name in configured),
                                           *(f"{name} {summary.conditions[name]} (not in study.toml)" for name in gone)]))
    if withdrawn_line:
        click.echo(f"{withdrawn_line} of the counts above")
    click.echo(plan_standing.line(study, directory, started, started_withdrawn))
    if arm_lists is not None and (line := _arm_lists_line(*arm_lists, study)):
        click.echo(line)
    if simulated:
        click.echo(f"Simulated sessions (study simulate, not people): {simulated}")
    for line in review_lines:
        click.echo(line)
    click.echo(f"Events stored: {summary.events}")
    for line in path_lines:
        click.echo(line)
    if summary.sessions_with_lost_events:
        click.echo(
            f"Sessions whose browser lost events before they were stored: "
            f"{summary.sessions_with_lost_events} (see sessions.missing_events)"
        )
    requests = summary.suggestion_requests
    line = f"Suggestion requests: {requests}"
    if requests:
        line += f", failed {summary.suggestion_failures} ({100 * summary.suggestion_failures / requests:.0f}%)"
    if summary.median_latency_ms is not None:
        line += f", median latency {summary.median_latency_ms:.0f} ms"
    click.echo(line)
    for reason, count in summary.failure_reasons:
        click.echo(f"  failed {count}x: {reason}")
    click.echo(_last_minute(recent, limits.concurrent_suggestions))
    if (warning := disk_warning(study.database_url)) is not None:
        click.echo(warning)
    for line in recruitment:
        cap = f" of a {line.cap} cap" if line.cap is not None else " (no cap)"
        click.echo(f"{providers.provider_for(line.provider).title} ({line.environment}): "
                   f"{line.submissions} synced submissions awaiting review or approved; committed {line.committed}{cap}, "
                   f"paid {line.paid}")  # fmt: skip
    if study.surveys:
        click.echo("Surveys (submitted, in progress): " + ", ".join(
            f"{s.name} {surveys.get(s.name, (0, 0))[0]}"
            + (f" (+{surveys[s.name][1]})" if surveys.get(s.name, (0, 0))[1] else "")
            for s in study.surveys
        ))  # fmt: skip
