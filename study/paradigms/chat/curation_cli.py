"""`study curate chat`: the chat study's conversations checked and measured
(study.paradigms.chat.curation), registered on `study curate` by the paradigm's declaration."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import click

from study.curation.stats import render_table
from study.metrics.judges.options import judge_options, open_judge
from study.paradigms.chat.curation import (
    COLUMNS,
    conversation_stats,
    judged_itr,
    read_conversations,
)

ITR_NOTE = (
    "itr: {judge}'s raw interactivity score, 3, 2 or 1 (CollabLLM App. C.4, the document "
    "variant); Table 1 shows its mean as (score - 1) / 2 x 100. CollabLLM's judge was "
    "Claude-3.5-Sonnet: another judge's scores are not the paper's, and a small local model's "
    "(SmolLM2-135M) say nothing."
)
DETERMINISTIC_ITR_NOTE = (
    "Note: the deterministic judge scores ITR by a rule (the share of the assistant's replies "
    "that ask a question: at least half 3, some 2, none 1), not by an LLM: for trying the "
    "pipeline, not a figure to compare with the paper's."
)


def register(curate: click.Group) -> None:
    curate.add_command(chat_conversations)


@click.command("chat")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", type=click.Path(dir_okay=False), help="Write the per-conversation table as CSV here.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per conversation.")
@judge_options
def chat_conversations(file: str, out: str | None, as_json: bool, judge_endpoint: str, judge_model: str,
                       judge_key_env: str, judge_cache: str | None, deterministic_judge: bool) -> None:  # fmt: skip
    """Check a chat study's conversations.jsonl and measure each conversation: turns, tokens,
    time and rating trajectory, and for a simulated one CollabLLM's Table 1 document BLEU
    against its goal document (study.paradigms.chat.curation). With a judge (--judge-endpoint
    and --judge-model, or --deterministic-judge) also each conversation's interactivity, ITR
    (judgements cached in --judge-cache, default judge-cache/ beside the table). Exits 1 if any
    line is invalid."""
    from study.lm.judge_backend import JudgeBackend
    from study.metrics.judges.client import JudgeError

    report = read_conversations(Path(file))
    rows = [conversation_stats(record) for record in report.conversations]
    for problem in report.problems:
        click.echo(problem, err=True)
    columns = COLUMNS
    beside = Path(out or file).parent
    with open_judge(judge_endpoint, judge_model, judge_key_env, judge_cache, deterministic_judge,
                    beside, False) as judge:  # fmt: skip
        if judge is not None:
            columns += ("itr",)
            try:
                for row, record in zip(rows, report.conversations, strict=True):
                    row["itr"] = judged_itr(record, judge)
            except JudgeError as error:
                raise click.ClickException(f"{error} (judging the conversations of {file})") from None
    if out:
        with open(out, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    if as_json:
        for row in rows:
            click.echo(json.dumps(row))
    elif not out:
        shown = ("session_id", "assistant", "document_type", "exchanges", "user_tokens",
                 "assistant_tokens", "interaction_seconds", "rating_trajectory")  # fmt: skip
        if any(row["bleu_char"] is not None for row in rows):
            shown += ("bleu_char",)
        if judge is not None:
            shown += ("itr",)
        table = [{k: ("" if row[k] is None else row[k]) for k in shown} for row in rows]
        for line in table:
            line["session_id"] = line["session_id"][:8]
            if isinstance(line.get("bleu_char"), float):
                line["bleu_char"] = f"{line['bleu_char']:.4f}"
        click.echo(render_table(table) if table else "(no conversations)")
    click.echo(
        f"{len(rows)} conversation(s) checked, {len(report.problems)} problem(s)", err=True
    )
    if judge is not None:
        unreadable = sum(1 for row, record in zip(rows, report.conversations)
                         if row["itr"] is None and row["exchanges"])  # fmt: skip
        click.echo(ITR_NOTE.format(judge=judge.model), err=True)
        if unreadable:
            click.echo(f"itr: {unreadable} conversation(s) left empty: the judge's answer was not "
                       "a score of 3, 2 or 1 in three tries (see --judge-cache).", err=True)  # fmt: skip
        if judge.model == JudgeBackend.model_id:
            click.echo(DETERMINISTIC_ITR_NOTE, err=True)
    if report.problems:
        sys.exit(1)
