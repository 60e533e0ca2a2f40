"""The chat paradigm's part of `study report` (study.paradigms.base: `report`).

`load` puts the chat study's (CollabLLM) per-conversation figures in the report's data
(study.paradigms.chat.report_data) and reads a chat arm's pasted replies as the assistant's
(study.paradigms.chat.arm_report); `build` draws its section: per-conversation metrics per
assistant, the rating trajectory and the final ratings, simulated beside human conversations
with the simulated ones shaped as CollabLLM's Table 1 (Doc BLEU, #Tok(k), ITR), and what of the
writing study's analyses does not apply to conversations."""

from __future__ import annotations

import math
import statistics
from collections import Counter

from study.lm.judge_backend import JudgeBackend
from study.report import plots
from study.paradigms.chat import arm_export, arm_report, report_data
from study.paradigms.chat.metrics import itr as itr_metric
from study.paradigms.chat.metrics import ratings
from study.paradigms.chat.report_data import CONVERSATIONS, METRICS, ChatMetrics, number
from study.report.data import ReportData
from study.report.html import Section, cell
from study.report.intervals import RESAMPLES, bootstrap_mean
from study.report.sections import plugins

TITLE = "Chat study (CollabLLM)"
# A folder `study export --format chat` wrote: conversations, no CoAuthor log (`load` reads them).
EXPORT_FILE = CONVERSATIONS
EXPORT_WHAT = "a chat study"
# What is beside a folder's logs and is no session log: a chat arm's conversations as `study
# export` writes them (study.paradigms.chat.arm_export), and a release's conversations.jsonl (a
# chat study's release has no log, so its empty sessions/ would send the reader to the file),
# which `load` reads as such.
BESIDE_LOGS = (arm_export.FILE, CONVERSATIONS)
NOT_APPLICABLE = (
    "A chat study writes conversations, not a CoAuthor writing log: Table 3, acceptance and "
    "writer share, equality and mutuality, the collaboration spread and CoAuthor's §5.1 "
    "analyses do not apply and are left out. In the funnel, \"sent a chat message\" and "
    "\"finished the chat\" stand for wrote and finished writing; the suggestion latency "
    "section times the assistant's replies."
)


def load(data: ReportData) -> None:
    report_data.load(data)
    arm_report.load(data)


def build(data: ReportData) -> Section | None:
    entry = data.extras.get("chat")
    if not isinstance(entry, ChatMetrics):
        # Another producer's figures in the plug-in shape (study.report.sections.plugins).
        return plugins.metrics_section("chat", TITLE)(data)
    section = Section("chat", TITLE)
    if not entry.rows:
        section.paragraph(f"No conversation to measure ({entry.source}).", note=True)
        return section
    section.paragraph(
        f"Per conversation, measured as `study curate chat` measures it, over {entry.source}. "
        "Exchanges are assistant replies to a user message; tokens are runs of letters, digits "
        "and underscores or single other characters (no model tokenizer); interaction time is "
        "from the chat's start to the final survey, task time from entering; the final ratings "
        f"are the final survey's 1-10 items. Means per assistant with 95% intervals ({RESAMPLES} "
        "bootstrap resamples of conversations; none for fewer than 3).",
        note=True,
    )
    if not data.sessions:
        section.paragraph(NOT_APPLICABLE, note=True)
    cells = Counter((row["document_type"], row["assistant"]) for row in entry.rows)
    assistants = sorted({row["assistant"] for row in entry.rows})
    labels = {row["assistant"]: row["label"] for row in entry.rows}
    types = sorted({row["document_type"] for row in entry.rows})
    section.table(
        ["document type", *(f"{a} ({labels[a]})" for a in assistants), "all"],
        [[t, *(cells[(t, a)] for a in assistants), sum(cells[(t, a)] for a in assistants)] for t in types]
        + [["all types", *(sum(cells[(t, a)] for t in types) for a in assistants), len(entry.rows)]],
    )  # fmt: skip
    condition_of = {row["session_id"]: row["assistant"] for row in entry.rows}
    per_session = entry.per_session()
    headings = [h for _, h in METRICS]
    # Two tables, so that neither is wider than the page: turns and tokens, then time and ratings.
    plugins.means_table(section, per_session, condition_of, headings[:6])
    plugins.means_table(section, per_session, condition_of, headings[6:])
    _trajectory(section, entry)
    _final_ratings(section, entry)
    _simulated_and_human(section, entry)
    if entry.problems:
        section.paragraph(f"{len(entry.problems)} conversation line(s) could not be used, e.g. "
                          f"{entry.problems[0]}. `study curate chat` lists them.", note=True)  # fmt: skip
    return section


# (column, heading) of the figures CollabLLM's §6 compares between assistants.
RATED = (("final_document_rating", "document rating"), ("final_interaction_rating", "interaction rating"))
COMPARED_MEANS = (*RATED, ("interaction_seconds", "interaction time"))


def _final_ratings(section: Section, entry: ChatMetrics) -> None:
    """The final ratings as CollabLLM's §6 reports them: per assistant the shares rated >= 8 and
    >= 9, then each assistant's means against each other's (study.paradigms.chat.metrics.ratings)."""
    assistants = sorted({row["assistant"] for row in entry.rows})
    of = {a: [row for row in entry.rows if row["assistant"] == a] for a in assistants}

    def values(assistant: str, column: str) -> list[float]:
        return [v for v in (number(row[column]) for row in of[assistant]) if v is not None]

    def mean(assistant: str, column: str) -> float:
        given = values(assistant, column)
        return statistics.mean(given) if given else math.nan

    section.add("<h3>Final ratings as CollabLLM reports them</h3>")
    section.paragraph(
        "Per assistant, the percent of its conversations whose final document and interaction "
        "ratings (1-10) are at least 8 and at least 9 (CollabLLM's \"good (8-9)\" and \"very good "
        "(9-10)\" shares, read as >= 8 and >= 9; its \"highly engaging\" share names no item or "
        "threshold); then each assistant's mean rating and interaction time against another's, "
        "as a relative change 100 x (assistant - baseline) / baseline (the paper's +17.6 % "
        "satisfaction and -10.4 % time against Base).",
        note=True,
    )
    rows = []
    for assistant in assistants:
        cells = [assistant, len(of[assistant])]
        for column, _ in RATED:
            cells += [ratings.share_at_least(values(assistant, column), t) for t in ratings.THRESHOLDS]
        rows.append(cells)
    section.table(["assistant", "n", *(f"{heading} >= {t} (%)" for _, heading in RATED for t in ratings.THRESHOLDS)],
                  rows, digits=1)  # fmt: skip
    if len(assistants) > 1:
        section.table(
            ["assistant", "against", *(f"{heading} (% change)" for _, heading in COMPARED_MEANS)],
            [[a, b, *(ratings.relative_change(mean(a, c), mean(b, c)) for c, _ in COMPARED_MEANS)]
             for a in assistants for b in assistants if a != b],
            digits=1,
        )  # fmt: skip


def _trajectory(section: Section, entry: ChatMetrics) -> None:
    section.add("<h3>Rating trajectory</h3>")
    trajectory = entry.trajectory()
    points = sorted({p for by_point in trajectory.values() for p in by_point})
    if not points:
        section.paragraph("No periodic rating was given (no in-session survey, or none answered).",
                          note=True)  # fmt: skip
        return
    section.paragraph(
        "The in-session ratings (e.g. CollabLLM's 1-10 rating of the last exchanges) by the "
        "exchange they followed: mean rating with its 95% interval (CollabLLM's Fig. 7d by "
        f"checkpoint; {RESAMPLES} bootstrap resamples of the ratings, none for fewer than 3) and "
        "the number of ratings, at each rating point, per assistant.",
        note=True,
    )
    rows = []
    for assistant in sorted(trajectory):
        by_point = trajectory[assistant]
        rows.append([assistant, *(f"{cell(bootstrap_mean(by_point[p]))} (n={len(by_point[p])})"
                                  if by_point.get(p) else "–" for p in points)])  # fmt: skip
    section.table(["assistant", *(f"after exchange {p}" for p in points)], rows)
    series = {a: [(p, statistics.mean(v)) for p, v in by_point.items() if v]
              for a, by_point in sorted(trajectory.items())}  # fmt: skip
    section.figure(plots.lines(series, xlabel="after exchange", ylabel="mean rating"),
                   "Mean periodic rating at each rating point, per assistant.")  # fmt: skip


# What the comparison of simulated with human conversations shows, per assistant.
COMPARED = (
    ("exchanges", "exchanges"),
    ("user_tokens", "user tokens"),
    ("assistant_tokens", "assistant tokens"),
    ("document_words", "document words"),
    ("final_interaction_rating", "interaction rating"),
    ("final_document_rating", "document rating"),
)
END_REASONS = (
    ("termination_marker", "ended by the user (marker)"),
    ("turn_limit", "turn limit"),
    ("fallback", "fallback habit"),
)


def _simulated_and_human(section: Section, entry: ChatMetrics) -> None:
    """Simulated conversations (study simulate) beside the people's, per assistant: do the
    simulated users talk as long, as much, and rate as people do; and why each simulated
    conversation ended (CollabLLM's simulator ends with its termination marker or the limit)."""
    if not any(row["simulated"] for row in entry.rows):
        return
    section.add("<h3>Simulated and human conversations</h3>")
    section.paragraph(
        "Means per assistant of people's and simulated users' conversations (n conversations). "
        "A simulated conversation ends when its user sends the termination marker (after the "
        "study's minimum of exchanges), at [chat.simulator] max_exchanges, or, when the users' "
        "model gave no usable answer, as soon as the study allows (fallback habit).",
        note=True,
    )
    rows = []
    for assistant in sorted({row["assistant"] for row in entry.rows}):
        for simulated, who in ((False, "people"), (True, "simulated")):
            group = [r for r in entry.rows if r["assistant"] == assistant and r["simulated"] == simulated]
            if not group:
                rows.append([assistant, who, 0, *("–" for _ in COMPARED), "–"])
                continue
            cells = []
            for column, _ in COMPARED:
                values = [v for v in (number(r[column]) for r in group) if v is not None]
                cells.append(f"{statistics.mean(values):.1f}" if values else "–")
            ends = Counter(r["simulated_end_reason"] for r in group)
            ending = ", ".join(f"{label}: {ends[key]}" for key, label in END_REASONS if ends[key]) if simulated else "–"
            rows.append([assistant, who, len(group), *cells, ending or "–"])
    section.table(["assistant", "who", "n", *(h for _, h in COMPARED), "why simulated chats ended"], rows)
    _table1(section, entry)


def _table1(section: Section, entry: ChatMetrics) -> None:
    """The simulated conversations per assistant as CollabLLM's Table 1 reports its document task
    (MediumDocEdit-Chat: Doc BLEU, #Tok(k), ITR), each computed as `study curate chat` does."""
    simulated = [r for r in entry.rows if r["simulated"]]
    judged = bool(entry.judge)
    section.add("<h4>Simulated conversations as CollabLLM's Table 1</h4>")
    notes = [
        "Means per assistant over its simulated conversations. Doc BLEU: the final document's "
        "character BLEU-4 against the simulated user's goal document x 100 (`bleu_char`: the "
        "paper's nltk sentence_bleu on strings), over the conversations with a goal document (n "
        "BLEU); a goal made of the intent and notes is none. #Tok(k): the assistant's tokens per "
        "conversation in thousands, counted by this toolkit's tokenizer (the paper used "
        "tiktoken's cl100k_base, whose counts differ)."
    ]
    if judged:
        notes.append(
            f"ITR: the interactivity judge's raw 1-3 score (`itr`) rescaled (s - 1) / 2 x 100, so "
            f"3 is 100, 2 is 50, 1 is 0 (the paper does not say its rescaling; this is the one in "
            f"its stated [0, 1]), over the judged conversations (n ITR), by {entry.judge}. "
            "CollabLLM's judge was Claude-3.5-Sonnet: another judge's ITR is not the paper's, and "
            "a small local model's (SmolLM2-135M) means nothing."
        )
        if entry.judge == JudgeBackend.model_id:
            notes.append("The deterministic judge scores ITR by a rule (the share of the assistant's "
                         "replies that ask a question), not by an LLM: not a figure to compare.")  # fmt: skip
    else:
        notes.append("ITR is not computed: it needs an LLM judge (`study report ... --judge-endpoint "
                     "URL --judge-model NAME`, or `--deterministic-judge` to try it offline).")  # fmt: skip
    section.paragraph(" ".join(notes), note=True)
    headings = ["assistant", "n", "n BLEU", "Doc BLEU", "#Tok(k)"] + (["n ITR", "ITR"] if judged else [])
    rows = []
    for assistant in sorted({r["assistant"] for r in simulated}):
        group = [r for r in simulated if r["assistant"] == assistant]
        bleu = [r["bleu_char"] for r in group if r["bleu_char"] is not None]
        cells = [assistant, len(group), len(bleu), f"{100 * statistics.mean(bleu):.1f}" if bleu else "–",
                 f"{statistics.mean(r['assistant_tokens'] for r in group) / 1000:.2f}"]  # fmt: skip
        if judged:
            scores = [r["itr"] for r in group if r.get("itr") is not None]
            cells += [len(scores), f"{100 * itr_metric.rescaled(statistics.mean(scores)):.1f}" if scores else "–"]
        rows.append(cells)
    section.table(headings, rows)

