"""Turn raw model outputs into the suggestions a writer sees (CoAuthor App. A.3).

CoAuthor queried GPT-3 five times, kept only the first sentence of each output "for
readability", and dropped outputs that were empty, duplicates, or contained swear words, so a
writer often saw fewer than five suggestions. This module does the same, as pure functions:
the engine (`study.paradigms.tab.engine`) does the I/O and calls `postprocess`. A condition
may keep a paragraph instead of a sentence (its `unit`, UNITS): Dhillon et al.'s (CHI 2024)
next-paragraph arm.

A suggestion is the dict the CoAuthor dataset stores:
`{"index": i, "original": str, "trimmed": str, "probability": float | None}`.
`original` keeps the leading whitespace of the model output, because the editor appends it to
the end of the document as is (" He left." after "...the door."); `trimmed` is for display.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

import pysbd
from pysbd.lang.english import English

# The paper used Stanza; pysbd is rule-based, offline and fast. Building a Segmenter compiles
# many regexes, so build one; `segment()` keeps per-call state on the instance, so calls from
# the server's threads take turns.
_SEGMENTER = pysbd.Segmenter(language="en", clean=False)
_SEGMENTER_LOCK = threading.Lock()

_LEADING_SPACE = re.compile(r"^\s*")

# The longest suggestion the editor's log holds (schemas/event-batch.schema.json: a suggestion's
# `original` and `trimmed`). A model that writes on without ending a sentence, at a large
# max_tokens, has a longer first sentence: shown whole, the list's suggestion-open would be
# refused by the event API, and the writer could never finish. It is cut there.
MAX_CHARS = 5000

# Plain words (letters, spaces, commas, apostrophes, hyphens) up to a full stop, question or
# exclamation mark that a capitalised word follows, or up to the end: the first sentence of most
# model outputs. Such a sentence needs none of pysbd's rules but its abbreviations (checked
# against pysbd's own lists), and is found in about a microsecond where pysbd takes 150: a Tab
# request splits five outputs while its worker's other requests wait for the GIL (issue 17).
# Anything else goes to pysbd. tests/suggest/test_postprocess.py holds the two to the same
# answer on every suggestion of the CoAuthor sample sessions and on generated texts.
_PLAIN_WORDS = re.compile(r"[A-Za-z][A-Za-z ,'’-]*")
_CAPITALISED_WORD = re.compile(r" [A-Z][a-z]")
_CLOSING_MARKS = re.compile(r"[\"'”’)\]]*")
_ABBREVIATIONS = frozenset(
    English.Abbreviation.ABBREVIATIONS
    + English.Abbreviation.PREPOSITIVE_ABBREVIATIONS
    + English.Abbreviation.NUMBER_ABBREVIATIONS
)


def plain_first_sentence(body: str) -> str | None:
    """The first sentence of `body` (no leading whitespace) when it is plain words, as pysbd
    would split it; None when pysbd must decide."""
    words = _PLAIN_WORDS.match(body)
    if words is None:
        return None
    end = words.end()
    if end == len(body):  # nothing that could end a sentence: the whole text
        return body.rstrip()
    if body[end] not in ".!?":
        return None
    after = end + 1
    if after < len(body) and not _CAPITALISED_WORD.match(body, after):
        return None
    last = body[:end].rsplit(" ", 1)[-1]
    if len(last) < 2 or not (last.isalpha() and last.islower()) or last in _ABBREVIATIONS:
        return None  # an initial, a name or an abbreviation: pysbd knows which end sentences
    return body[:after]


def browser_newlines(text: str) -> str:
    """`text` with its line breaks as a browser's text field holds them: "\\r\\n" and "\\r"
    become "\\n". The editor appends an accepted suggestion to its <textarea>, which keeps only
    "\\n"; a "\\r\\n" left in would be logged as two characters where the writer's text
    holds one, and every later position of the log would be off by one from the screen."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


# Chinese and Japanese (ideographs, kana, their punctuation and full-width forms) put no space
# between words or sentences: a fresh message continuing such text joins it directly.
_UNSPACED = re.compile(
    "[\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\uff00-\uffef\U00020000-\U0003134f]"
)


def starts_apart(doc: str, text: str) -> bool:
    """Whether a chat model's `text`, a fresh message appended to `doc`, starts a word of its
    own and so needs the separating space a completion would carry: a word, or a mark that
    opens one (a quotation, a bracket), not one that attaches to the word before (",", ".", a
    closing quotation: `doc` has a '"' still open), nor Chinese or Japanese after Chinese or
    Japanese. Used by Tab's and ghost text's chat mode."""
    first = text[0]
    if doc and _UNSPACED.match(doc[-1]) and _UNSPACED.match(first):
        return False
    return first.isalnum() or first in "“‘([" or (first == '"' and doc.count('"') % 2 == 0)


def first_sentence(text: str) -> str:
    """The first sentence of `text`, with the text's leading whitespace kept and none trailing.

    Like CoAuthor's backend, the sentence also ends at the first line break: a model that
    writes "a heading\\nThe story..." without punctuation should not suggest both lines.
    Returns "" when the text holds no words.
    """
    lead = _LEADING_SPACE.match(text).group()
    body = text[len(lead) :]
    if not body:
        return ""
    plain = plain_first_sentence(body)
    if plain is not None:
        return lead + plain
    with _SEGMENTER_LOCK:
        sentences = _SEGMENTER.segment(body)
    if not sentences:
        return ""
    sentence = sentences[0].strip().split("\n")[0].rstrip()
    # pysbd leaves the quotation a "." closes to the next segment ('in."' -> 'in.', not after
    # "!" or "?"): the sentence keeps it, as CoAuthor's lists did (33 of the sample's 1,654).
    if sentence and body.startswith(sentence):
        sentence += _CLOSING_MARKS.match(body, len(sentence)).group()
    return lead + sentence if sentence else ""


def first_paragraph(text: str, finish_reason: str | None = None) -> str:
    """`text` up to its first line break after some text, with the text's leading whitespace
    (line breaks included) kept and none trailing: the paragraph a model wrote on from the
    writer's text. Returns "" when the text holds no words.

    When `max_tokens` ran out (`finish_reason` "length") before a line break ended it, the
    paragraph ends at its last whole sentence: Dhillon et al.'s (CHI 2024) arm showed paragraphs
    of whole sentences, not one stopped mid-word. Cut inside its first sentence, it is kept
    whole (there is no whole sentence to show). The model's whole output stays in the call's
    `raw` outputs, as a sentence unit's does."""
    lead = _LEADING_SPACE.match(text).group()
    body = text[len(lead) :]
    paragraph = body.split("\n", 1)[0].rstrip()
    if finish_reason == "length" and "\n" not in body and paragraph:
        paragraph = whole_sentences(paragraph)
    return lead + paragraph if paragraph else ""


# A sentence's last mark, and the closing quotes or brackets that may follow it.
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*$")


def whole_sentences(text: str) -> str:
    """`text` (no leading whitespace) without its last sentence when that one is unfinished (no
    closing mark), unless it is the only one; none trailing."""
    with _SEGMENTER_LOCK:
        sentences = _SEGMENTER.segment(text)  # clean=False: they join up to `text` again
    if len(sentences) < 2 or _SENTENCE_END.search(sentences[-1].rstrip()):
        return text.rstrip()
    return "".join(sentences[:-1]).rstrip()


# How much of a model output a Tab suggestion keeps, from the output's text and finish_reason:
# a condition's `unit` (schemas/study.schema.json). "sentence" is CoAuthor's (App. A.3), its
# first sentence however the output ended; "paragraph" is Dhillon et al.'s next-paragraph
# suggestion. The proactive paradigms name the same choice `unit` too ([proactive] unit:
# "sentence" or "span", the whole output).
UNITS = {"sentence": lambda text, finish_reason: first_sentence(text), "paragraph": first_paragraph}


def probability(token_logprobs: Iterable[float] | None) -> float | None:
    """exp(sum of token log-probabilities): the model's probability of the whole output.

    CoAuthor's backend summed the logprobs of the full output, not only of the first sentence
    that is shown, and stored the result times 100; we keep the plain probability in [0, 1].
    """
    if token_logprobs is None:
        return None
    total = math.fsum(lp for lp in token_logprobs if lp is not None)
    return math.exp(total)


@lru_cache(maxsize=16)
def _blocklist_pattern(blocklist: tuple[str, ...]) -> re.Pattern[str] | None:
    # Lookarounds instead of \b so entries that start or end with punctuation ("f*ck") work;
    # a phrase's words may be separated by any whitespace, as in wrapped model output.
    phrases = [
        r"\s+".join(re.escape(word) for word in entry.split())
        for entry in blocklist
        if entry.strip()
    ]
    if not phrases:
        return None
    # Longest first, so "bull shit" is tried before "bull" (only matters for reporting).
    phrases.sort(key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(phrases) + r")(?!\w)", re.IGNORECASE)


def blocked_term(text: str, blocklist: Sequence[str]) -> str | None:
    """The first blocklist word or phrase in `text` (whole words, any case), else None."""
    pattern = _blocklist_pattern(tuple(blocklist))
    if pattern is None:
        return None
    match = pattern.search(text)
    return match.group() if match else None


def _key(text: str) -> str:
    """What two suggestions must share to count as duplicates."""
    return text.strip().casefold()


def postprocess(
    outputs: Sequence[Mapping],
    on_screen: Iterable[str] = (),
    blocklist: Sequence[str] = (),
    unit: str = "sentence",
) -> list[dict]:
    """The suggestions to show for one query, in the order the model produced them.

    `outputs` are the raw choices, each a mapping with "text" and optionally "token_logprobs"
    (a list of floats) or "logprob_sum" (their sum), and "finish_reason" ("length": cut by
    max_tokens). `on_screen` are the suggestion texts the
    writer can already see; an output equal to one of them (stripped, ignoring case) is a
    duplicate, like a repeat within the batch. `unit` (a key of UNITS) is how much of each
    output a suggestion keeps: its first sentence, or its first paragraph.
    """
    cut = UNITS[unit]
    seen = {_key(text) for text in on_screen}
    outputs_seen: set[tuple[str, str | None]] = set()
    kept: list[dict] = []
    for output in outputs:
        text = browser_newlines(output.get("text") or "")
        finish_reason = output.get("finish_reason")
        if (text, finish_reason) in outputs_seen:
            # The same output again is cut to the same suggestion, a duplicate: not cut again
            # (at a low temperature most of a query's outputs can be one text).
            continue
        outputs_seen.add((text, finish_reason))
        original = cut(text, finish_reason)[:MAX_CHARS].rstrip()
        trimmed = original.strip()
        if not trimmed or _key(trimmed) in seen:
            continue
        if blocked_term(trimmed, blocklist) is not None:
            continue
        seen.add(_key(trimmed))
        kept.append(
            {
                "index": len(kept),
                "original": original,
                "trimmed": trimmed,
                "probability": _output_probability(output),
            }
        )
    return kept


def _output_probability(output: Mapping) -> float | None:
    if output.get("token_logprobs") is not None:
        return probability(output["token_logprobs"])
    if output.get("logprob_sum") is not None:
        return math.exp(output["logprob_sum"])
    return None
