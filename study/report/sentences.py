"""Sentences of a final text by who wrote them (CoAuthor section 5.1.1, Figure 4).

The paper compares sentences "written by writers alone, GPT-3 alone, and writers and GPT-3
together" in the final texts. A sentence's authors are read from the replayed document's
per-character author codes (`study.curation.replay`): only writer characters -> "writer",
only accepted-suggestion characters -> "model", both -> "both". Prompt characters and
whitespace are ignored; a sentence of prompt text only is left out. Sentences are split with
pysbd, the rule-based splitter the suggestion engine already uses (the paper used Stanza).
"""

from __future__ import annotations

from functools import cache

from study.curation.replay import PROMPT, SUGGESTION, WRITER, Document

WRITER_ONLY, MODEL_ONLY, BOTH = "writer", "model", "both"
AUTHOR_CLASSES = (WRITER_ONLY, MODEL_ONLY, BOTH)


@cache
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def authored_sentences(document: Document) -> list[tuple[str, str]]:
    """(author class, sentence text) for each sentence of the document that the session added."""
    text, authors = document.text, document.authors
    out = []
    for span in _segmenter().segment(text):
        start, end = span.start, span.end
        codes = {
            authors[i] for i in range(start, min(end, len(authors)))
            if not text[i].isspace() and authors[i] != PROMPT
        }  # fmt: skip
        if not codes:
            continue
        if codes == {WRITER}:
            kind = WRITER_ONLY
        elif codes == {SUGGESTION}:
            kind = MODEL_ONLY
        else:
            kind = BOTH
        sentence = text[start:end].strip()
        if sentence:
            out.append((kind, sentence))
    return out
