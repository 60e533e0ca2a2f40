"""The judge a command is given: `--judge-endpoint`, `--judge-model`, `--judge-key-env`,
`--judge-cache` and `--deterministic-judge`, and the judge they open. `study report`, `study
curate proactive` and `study curate chat` take the same options, so a judge is named the same
way everywhere.

The deterministic judge (study.metrics.judges.deterministic) is served on a local port and
talked to over HTTP like any other; its numbers are for trying the pipeline, not a paper's.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import click

DETERMINISTIC_NOTE = (
    "Note: the deterministic judge answers by rules, not by an LLM: its HAR and KED are for "
    "trying the pipeline, not figures to compare with the paper."
)


def judge_options(function):
    options = [
        click.option("--judge-endpoint", default="",
                     help="Base URL of an OpenAI-compatible judge, e.g. http://127.0.0.1:8001/v1."),
        click.option("--judge-model", default="", help="The judge model's name at that endpoint."),
        click.option("--judge-key-env", default="OPENAI_API_KEY", show_default=True,
                     help="Variable holding the judge's API key."),
        click.option("--judge-cache", type=click.Path(file_okay=False), default=None,
                     help="Folder of cached judgements (default: OUT/judge-cache)."),
        click.option("--deterministic-judge", is_flag=True,
                     help="Serve the rule-based judge locally and use it (offline, for tests and demos)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def quiet_local_servers() -> None:
    # The local endpoints' per-request lines would drown the tables printed here.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)


@contextlib.contextmanager
def open_judge(endpoint, model, key_env, cache, deterministic, out: Path, required: bool):
    from study.metrics.judges.client import OpenAIJudge

    cache_dir = Path(cache) if cache else out / "judge-cache"
    if deterministic:
        from study.lm.judge_backend import JudgeBackend
        from study.lm.server import serve_in_thread

        quiet_local_servers()
        base_url, stop = serve_in_thread(JudgeBackend())
        try:
            yield OpenAIJudge(base_url, JudgeBackend.model_id, key_env, cache_dir=cache_dir)
        finally:
            stop()
        return
    if endpoint or model:
        if not (endpoint and model):
            raise click.UsageError("give both --judge-endpoint and --judge-model (or --deterministic-judge)")
        yield OpenAIJudge(endpoint, model, key_env, cache_dir=cache_dir)
        return
    if required:
        raise click.UsageError(
            "this command needs a judge: --judge-endpoint URL --judge-model NAME, or --deterministic-judge"
        )
    yield None
