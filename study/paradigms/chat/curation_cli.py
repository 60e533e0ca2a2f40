"""`study curate chat`: the chat study's conversations checked and measured
(study.paradigms.chat.curation), registered on `study curate` by the paradigm's declaration."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import click

from study.curation.stats import render_table
from study.paradigms.chat.curation import (
    COLUMNS,
    conversation_stats,
    read_conversations,
)


def register(curate: click.Group) -> None:
    curate.add_command(chat_conversations)


@click.command("chat")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", type=click.Path(dir_okay=False), help="Write the per-conversation table as CSV here.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per conversation.")
def chat_conversations(file: str, out: str | None, as_json: bool) -> None:
    """Check a chat study's conversations.jsonl and measure each conversation: turns, tokens,
    time and rating trajectory, and for a simulated one CollabLLM's Table 1 document BLEU
    against its goal document (study.paradigms.chat.curation). Exits 1 if any line is invalid."""
    report = read_conversations(Path(file))
    rows = [conversation_stats(record) for record in report.conversations]
    for problem in report.problems:
        click.echo(problem, err=True)
    if out:
        with open(out, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
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
        table = [{k: ("" if row[k] is None else row[k]) for k in shown} for row in rows]
        for line in table:
            line["session_id"] = line["session_id"][:8]
            if isinstance(line.get("bleu_char"), float):
                line["bleu_char"] = f"{line['bleu_char']:.4f}"
        click.echo(render_table(table) if table else "(no conversations)")
    click.echo(
        f"{len(rows)} conversation(s) checked, {len(report.problems)} problem(s)", err=True
    )
    if report.problems:
        sys.exit(1)
