"""Language capabilities (CoAuthor section 5.1.1, Figure 4): vocabulary diversity and
grammaticality of the final texts' sentences by who wrote them."""

from __future__ import annotations

from study.report import grammar, plots
from study.report.data import ReportData
from study.report.html import Section
from study.report.intervals import bootstrap_mean
from study.report.sentences import AUTHOR_CLASSES

PAPER_DISTINCT = {"writer": 0.884, "model": 0.876, "both": 0.923}


def build(data: ReportData) -> Section | None:
    if not data.sessions:
        return None
    section = Section("language", "Language: vocabulary diversity and grammaticality (§5.1.1)")
    section.add("<h3>Vocabulary diversity (distinct-2)</h3>")
    section.paragraph(
        "distinct-2 (unique bigrams / words, Li et al. 2016) of each sentence of the final "
        "texts, by who wrote it: the writer alone, the model alone (accepted suggestions), or "
        "both; sentences split with pysbd, the prompt left out. The paper averages over "
        "sentences; the interval here resamples sessions (a session's sentences stay together). "
        "Last row: every suggestion shown, accepted or not.",
        note=True,
    )
    rows, plotted = [], []
    for kind in AUTHOR_CLASSES:
        per_session = [
            [v for k, v in s.sentence_distinct if k == kind] for s in data.sessions
        ]
        sentences = sum(len(v) for v in per_session)
        mean = sum(sum(v) for v in per_session) / sentences if sentences else float("nan")
        estimate = bootstrap_mean([sum(v) / len(v) for v in per_session if v])
        rows.append([kind, sentences, mean, estimate, PAPER_DISTINCT[kind]])
        if estimate.n:
            plotted.append((kind, estimate))
    shown = [v for s in data.sessions for v in s.suggestion_distinct]
    rows.append(["all suggestions shown", len(shown),
                 sum(shown) / len(shown) if shown else None, None, 0.868])  # fmt: skip
    section.table(["sentences by", "sentences", "mean over sentences",
                   "mean of session means [95% CI]", "paper"], rows, digits=3)  # fmt: skip
    if plotted:
        section.figure(plots.intervals(plotted, xlabel="distinct-2"),
                       "distinct-2 by author: mean of session means, 95% CI.")  # fmt: skip
    section.add("<h3>Grammaticality</h3>")
    if not data.languagetool:
        section.paragraph(grammar.UNAVAILABLE, note=True)
        return section
    _grammaticality(section, data)
    return section


def _grammaticality(section: Section, data: ReportData) -> None:
    checked = [s for s in data.sessions if s.grammar is not None]
    section.paragraph(
        f"Spelling and grammar errors per word (LanguageTool at {data.languagetool}, "
        f"{grammar.LANGUAGE}) of each sentence of the final texts, by who wrote it, as in the "
        "paper; the interval resamples sessions.",
        note=True,
    )
    rows = []
    for kind in AUTHOR_CLASSES:
        per_session = [[v for k, v in s.grammar if k == kind] for s in checked]
        sentences = sum(len(v) for v in per_session)
        mean = sum(sum(v) for v in per_session) / sentences if sentences else None
        estimate = bootstrap_mean([sum(v) / len(v) for v in per_session if v])
        rows.append([kind, sentences, mean, estimate, grammar.PAPER[kind]])
    section.table(["sentences by", "sentences", "errors per word (mean over sentences)",
                   "mean of session means [95% CI]", "paper"], rows, digits=3)  # fmt: skip
    failed = [s for s in data.sessions if s.grammar_error]
    if failed:
        section.paragraph(f"{len(failed)} session(s) could not be checked, e.g. "
                          f"{failed[0].grammar_error}", note=True)  # fmt: skip
