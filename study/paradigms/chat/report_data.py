"""The chat study's (CollabLLM) figures for the report, from its conversations.

Each conversation is measured by `study curate chat`'s own functions (study.paradigms.chat.curation:
`read_conversations` checks it, `conversation_stats` measures it), so the report and the
curation table agree figure for figure. Sources:

- a chat study folder: every conversation is exported as `study export --format chat --all`
  writes it (into a scratch folder); the metrics cover the completed ones (what `study export
  --format chat` exports by default), the participation funnel and the stage times all of them;
- a folder written by `study export --format chat` (`conversations.jsonl`): the same, the
  metrics cover the completed conversations in the file (`finished`), the stage times all of
  them. An export made with `--all` also holds the abandoned ones; CollabLLM's figures (the
  rating trajectory, the final ratings' shares) are of conversations that reached the end, and
  a study's report reads the same whether made from its folder or from its `--all` export.

With a judge (`study report --judge-endpoint ... | --deterministic-judge`), each simulated
conversation also gets its ITR, judged as `study curate chat` judges it (`judged_itr`): only the
simulated ones, since only CollabLLM's simulated evaluation (Table 1) reports it.

The result goes to `data.extras["chat"]` (study.paradigms.chat.report draws it).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from study import config as study_config
from study.report.data import STUDY, ReportData

CONVERSATIONS = "conversations.jsonl"  # what `study export --format chat` writes

# conversation_stats' numeric columns, in the order the report shows them, with their headings.
METRICS = (
    ("exchanges", "exchanges"),
    ("user_messages", "user messages"),
    ("assistant_messages", "assistant messages"),
    ("user_tokens", "user tokens"),
    ("assistant_tokens", "assistant tokens"),
    ("document_words", "document words"),
    ("interaction_seconds", "interaction (s)"),
    ("task_seconds", "task (s)"),
    ("median_reply_seconds", "median reply (s)"),
    ("final_interaction_rating", "final: interaction rating"),
    ("final_document_rating", "final: document rating"),
)
# Stages of a chat session, between the timestamps of its conversation record's `timing`.
STAGES = (
    ("consent, instructions, intent and pre-writing", "created_at", "chat_started_at"),
    ("chat", "chat_started_at", "chat_finished_at"),
    ("final survey", "chat_finished_at", "completed_at"),
)


@dataclass
class ChatMetrics:
    rows: list[dict]  # conversation_stats per measured conversation (simulated ones: "itr" when judged)
    source: str  # what the conversations are, for the section's note
    problems: list[str] = field(default_factory=list)
    judge: str = ""  # the judge model that scored ITR; "" when none was given

    def per_session(self) -> dict[str, dict[str, float | None]]:
        return {row["session_id"]: {heading: number(row[column]) for column, heading in METRICS}
                for row in self.rows}  # fmt: skip

    def trajectory(self) -> dict[str, dict[int, list[float]]]:
        """condition -> rating point (the exchange it followed) -> the ratings given there,
        read from conversation_stats' `rating_trajectory` ("3:7 6:8")."""
        out: dict[str, dict[int, list[float]]] = {}
        for row in self.rows:
            points = out.setdefault(row["assistant"], {})
            for pair in row["rating_trajectory"].split():
                exchange, rating = pair.split(":")
                points.setdefault(int(exchange), []).append(float(rating))
        return out


def number(value) -> float | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def load(data: ReportData) -> None:
    """The report's loader (study.report.data.EXTRA_LOADERS): chat metrics when the source is
    a chat study or a chat export; otherwise nothing."""
    from study.paradigms.chat.curation import conversation_stats, judged_itr, read_conversations

    if data.kind == STUDY:
        study = study_config.load(data.path)
        if study.chat is None:
            return
        from study.paradigms.chat.export import export_chat

        with tempfile.TemporaryDirectory(prefix="study-report-chat-") as scratch:
            export_chat(study, Path(scratch), include_unfinished=True)
            report = read_conversations(Path(scratch) / CONVERSATIONS)
        everyone = report.conversations
        measured = [r for r in everyone if r["finished"]]
        _funnel_and_stages(data, everyone)
        source = ("the study's completed conversations (as `study export --format chat` exports "
                  "them)")  # fmt: skip
    else:
        file = data.path / CONVERSATIONS
        if not file.is_file():
            return
        report = read_conversations(file)
        measured = [r for r in report.conversations if r["finished"]]
        _funnel_and_stages(data, report.conversations)  # the stage times the export carries
        left_out = len(report.conversations) - len(measured)
        source = f"the completed conversations of {file.name}" + (
            f" ({left_out} unfinished conversation(s) in the file, as `study export --all` "
            "writes them, are left out; the stage times count them)" if left_out else "")
    rows = [conversation_stats(record) for record in measured]
    if data.judge is not None:
        for row, record in zip(rows, measured, strict=True):
            if row["simulated"]:
                row["itr"] = judged_itr(record, data.judge)
    judge = getattr(data.judge, "model", "") if data.judge is not None else ""
    data.extras["chat"] = ChatMetrics(rows, source, report.problems, judge)
    data.unreadable += report.problems
    for row in rows:
        data.unlogged[row["session_id"]] = row["assistant"]
    data.unlogged_simulated |= {r["session_id"] for r in measured if r.get("simulated")}


def _funnel_and_stages(data: ReportData, records: list[dict]) -> None:
    """A chat session writes no CoAuthor log: "wrote" is having sent a message, "finished
    writing" having finished the chat; the stages are the chat path's."""
    if data.funnel:
        sent = sum(1 for r in records if any(m["role"] == "user" for m in r["messages"]))
        finished = sum(1 for r in records if r["timing"].get("chat_finished_at"))
        relabelled = {"wrote (stored a text-insert)": ("sent a chat message", sent),
                      "finished writing": ("finished the chat", finished)}  # fmt: skip
        data.funnel = [relabelled.get(label, (label, count)) for label, count in data.funnel]
    data.stage_seconds = {
        label: [r["timing"][end] - r["timing"][start] for r in records
                if r["timing"].get(start) is not None and r["timing"].get(end) is not None]
        for label, start, end in STAGES
    }  # fmt: skip
