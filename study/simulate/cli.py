"""The `study simulate` command."""

from __future__ import annotations

from collections import Counter

import click


@click.command("simulate")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--writers", default=None, type=click.IntRange(min=1),
              help="How many simulated writers take part (each writes one session; within "
              "subjects, one per arm). Default: one per prompt (a chat study: one per "
              "assistant; within subjects, whole squares of writers: every row of each "
              "genre's Williams design, 2k rows for an odd number k of arms), so the pilot writes "
              "every prompt and condition; with [[rounds]], one per prompt of the round a link "
              "without ?round= enters.")
@click.option("--url", default=None, metavar="URL",
              help="A server already running for DIRECTORY (e.g. http://127.0.0.1:5000); "
              "default: start one on a free local port.")
@click.option("--llm-url", default=None, metavar="URL",
              help="The writers' model: an OpenAI-compatible base URL (…/v1); the key is read "
              "from $STUDY_SIMULATOR_API_KEY. Default: a local deterministic model (canned "
              "sentences, for trying the path).")
@click.option("--llm-model", default="deterministic", show_default=True,
              help="The model name sent to --llm-url.")
@click.option("--persona", "personas", multiple=True, metavar="TEXT",
              help="Who a writer is; repeat for several (writers take them in turn). "
              "Default: three built-in personas.")
@click.option("--intent", default=None, metavar="TEXT",
              help="What the writers want to write ({noun} becomes story or essay); a chat "
              "study's users choose from its own intents instead.")
@click.option("--suggestions-endpoint", default=None, metavar="URL",
              help="Point the server this command starts at another suggestion model "
              "(e.g. a local `study lm serve`) instead of study.toml's endpoint.")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seeds the writers' habits and prompt choices.")
@click.option("--parallel", default=4, show_default=True, type=click.IntRange(min=1),
              help="Writers at work at the same time.")
@click.option("--beside-people", is_flag=True,
              help="Run even though people have sessions in DIRECTORY's database (refused "
              "without it): the simulated sessions then count in the balancing of prompts, "
              "arms and Latin-square rows the next people are given, and sit beside theirs.")
def simulate(directory, writers, url, llm_url, llm_model, personas, intent,
             suggestions_endpoint, seed, parallel, beside_people) -> None:  # fmt: skip
    """Pilot the study in DIRECTORY with LLM-simulated writers, before paying anyone.

    Each writer goes through the real participant's path over HTTP (consent, instructions,
    prompt, writing with the event and suggestion APIs, self-evaluation, survey); in a chat
    study (CollabLLM), the chat path (intent, pre-writing, the chat API, ratings, the document
    pane, final survey); in a MindCopilot study (L1-L3), the writer pauses instead of pressing
    Tab and accepts, partially accepts, modifies or rejects the ghost text per persona. Their
    sessions are marked as simulated in the database, the export's metadata, the report and
    releases. See README (Simulated writers) for what a simulation cannot tell you.
    """
    from study.config import ConfigError
    from study.simulate.personas import BUILT_IN, DEFAULT_INTENT, Persona
    from study.simulate.run import Options, SimulationError
    from study.simulate.run import simulate as run

    options = Options(
        writers=writers, url=url, llm_url=llm_url, llm_model=llm_model,
        personas=tuple(Persona(p) for p in personas) or BUILT_IN,
        intent=intent or DEFAULT_INTENT, seed=seed, suggestions_endpoint=suggestions_endpoint,
        parallel=parallel, beside_people=beside_people,
    )  # fmt: skip
    try:
        summary = run(directory, options, echo=click.echo)
    except (SimulationError, ConfigError) as error:
        raise click.ClickException(str(error)) from None
    decided = summary.decisions
    total = decided.by_model + decided.by_fallback
    click.echo(
        f"{len(summary.sessions)} simulated session(s) finished, {len(summary.errors)} stopped. "
        f"Writers' model: {summary.model}. Decisions read from the model's answers: "
        f"{decided.by_model} of {total}; the rest by the personas' seeded habits."
    )
    if decided.failures:
        click.echo(f"The writers' model failed {len(decided.failures)} time(s), e.g. "
                   f"{decided.failures[0]}", err=True)  # fmt: skip
    asked = sum(result.queries for result in summary.sessions)
    failed = sum(result.failed_queries for result in summary.sessions)
    why = sum((result.failure_reasons for result in summary.sessions), Counter())
    reasons = "; ".join(f"{count}x {reason}" for reason, count in why.most_common(3))
    if asked and failed == asked:
        click.echo(
            f"Every suggestion request failed ({failed} of {asked}): the study's model endpoint did "
            "not answer (see `study status`). Fix: [suggestions] endpoint in study.toml, "
            "OPENAI_BASE_URL, or --suggestions-endpoint URL." + (f" Why: {reasons}." if reasons else ""),
            err=True,
        )  # fmt: skip
    elif failed:
        # Some failed: a per-minute limit the writers ran into, or a model too slow, reads here
        # rather than as a model that had nothing to suggest.
        click.echo(f"{failed} of {asked} suggestion request(s) showed the writer nothing: {reasons}.", err=True)
    # In a study with rounds the writers could write only what their round offers: say so, and
    # name nothing of another round as if more writers could pilot it.
    where = f" in round '{summary.round}'" if summary.round else ""
    for what, missing in (("prompt", summary.prompts_left_out), ("condition", summary.conditions_left_out)):
        if missing:
            click.echo(f"No session yet{where} for {len(missing)} {what}(s): {', '.join(missing)}. "
                       "Run more writers (--writers) to pilot them.")  # fmt: skip
    if summary.rows_left_out:
        click.echo(f"No writer yet has written every arm in Latin-square rows {'; '.join(summary.rows_left_out)}. "
                   "Run more writers (--writers; whole squares use every row as often) to pilot them.")  # fmt: skip
    # A closed arm is given to no new writer: more writers would not pilot it, so it is named
    # apart, and "every condition" is then every open one.
    closed = summary.conditions_closed
    if closed:
        click.echo(f"Not piloted: {len(closed)} condition(s) closed to new participants (assign = false): "
                   f"{', '.join(closed)}. No writer is given one; to pilot them, pilot a copy of this "
                   "folder with them open.")  # fmt: skip
    if not summary.prompts_left_out and not summary.conditions_left_out and not summary.rows_left_out:
        every = "Every prompt and open condition" if closed else "Every prompt and condition"
        click.echo(f"{every} of round '{summary.round}' has a session." if summary.round
                   else f"{every} has a session.")  # fmt: skip
    click.echo("These sessions are marked simulated; `study report` and `study export` say so.")
    if summary.errors:
        raise SystemExit(1)
