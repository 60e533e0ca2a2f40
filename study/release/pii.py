"""Find personal data in free text: Microsoft Presidio with offline recognizers only.

The analyzer runs with Presidio's `NoOpNlpEngine`: no spaCy model is loaded or downloaded, and
only pattern recognizers run. Named entities (people's names, places) would need an NER model;
none ships in a PyPI package that this project can vouch for, so they are not detected. That is
also the right default for creative writing, where every character has a name.

What is found (`ENTITIES`), with Presidio's own recognizers where it has one:

- EMAIL_ADDRESS: Presidio's, checking the domain against the Public Suffix List snapshot
  bundled in `tldextract` (Presidio's default fetches the list over the network); an unknown
  suffix keeps the pattern's score instead of being dropped.
- PHONE_NUMBER: Presidio's (`phonenumbers`; regions US GB DE FR IL IN CA BR).
- CREDIT_CARD, IBAN_CODE, IP_ADDRESS, US_SSN, CRYPTO: Presidio's, with its checksums.
- MTURK_WORKER_ID: `A` + 12-20 upper-case letters or digits, e.g. A1B2C3D4E5F6G7.
- API_KEY: OpenAI/Anthropic `sk-...`, AWS `AKIA...`, GitHub `ghp_...`, Slack `xox?-...`,
  Google `AIza...`, Hugging Face `hf_...`, Stripe `sk_live_...`, PEM private keys.
- KNOWN_WORKER_ID: the source's own worker ids (and access codes of 6 characters or more), in
  any case.

URLs are not redacted: Presidio's URL recognizer flags bare domains ("Netflix.com"), common in
essays. Overlapping findings keep the highest score, then the longest.

`Detector.find` is exact for any text; `Detector.windows` narrows a long text to the short
windows around tokens that could hold an entity (a digit, an `@`, or 13+ characters with an
upper-case letter, `_` or `-`), which is what makes scanning every state of a session
affordable (`study.release.redaction`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from study.without_torch import torch_hidden

ENTITIES = (
    "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS", "US_SSN",
    "CRYPTO", "MTURK_WORKER_ID", "API_KEY", "KNOWN_WORKER_ID",
)  # fmt: skip
SCORE_THRESHOLD = 0.4
# Worker ids (or lab access codes) shorter than this are not searched for in free text: a code
# like "P017" or "demo" would match ordinary words. They are still pseudonymised in metadata.
MIN_KNOWN_ID_LENGTH = 6

LABELS = {
    "EMAIL_ADDRESS": "EMAIL", "PHONE_NUMBER": "PHONE", "CREDIT_CARD": "CARD", "IBAN_CODE": "IBAN",
    "IP_ADDRESS": "IP", "US_SSN": "SSN", "CRYPTO": "CRYPTO", "MTURK_WORKER_ID": "WORKER",
    "API_KEY": "KEY", "KNOWN_WORKER_ID": "WORKER",
}  # fmt: skip

WORKER_ID_PATTERN = r"\bA[A-Z0-9]{12,20}\b"
API_KEY_PATTERNS = (
    ("openai/anthropic", r"\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_\-]{20,}"),
    ("aws access key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("github", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b"),
    ("slack", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    ("google", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("hugging face", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("stripe", r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}\b"),
    (
        "private key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:.|\n)*?-----END [A-Z ]*PRIVATE KEY-----",
    ),
)
# A token (maximal run of non-space) that could be, or be part of, an entity above: it has a
# digit or an @, or 13+ characters with an upper-case letter, "_" or "-" (worker ids, keys).
# Anchored at token starts so the search stays linear.
_CANDIDATE = r"(?<!\S)(?=\S*[@\d]|(?=\S*[A-Z_\-])\S{13})\S+"
_REACH = 40  # characters of context each side of a candidate token (phone numbers have spaces)
_MAX_REACH = 300  # how far a window may grow to reach whitespace (long tokens: keys, emails)


@dataclass(frozen=True, order=True)
class Span:
    start: int
    end: int
    entity: str
    score: float
    recognizer: str


def mask(entity: str, length: int) -> str:
    """The same-length replacement of an entity: `<EMAIL_________>`, `<PHONE_____>`, `<___>`.

    Same length, so that every retain and delete of a Quill delta still lands where it did
    (`study.release.redaction`). The label is dropped when the text is shorter than it.
    """
    label = LABELS.get(entity, "PII")
    if length >= len(label) + 2:
        return "<" + label + "_" * (length - len(label) - 2) + ">"
    if length >= 2:
        return "<" + "_" * (length - 2) + ">"
    return "_" * length


def _import_presidio():
    # Presidio imports its spaCy/transformers NLP engines eagerly, with torch and transformers
    # when the `lm` extra installed them: about 10 s for engines this module never uses.
    with torch_hidden():
        import presidio_analyzer
        from presidio_analyzer import nlp_engine, predefined_recognizers
    return presidio_analyzer, nlp_engine, predefined_recognizers


def _build_analyzer(known_ids: Iterable[str]):
    presidio, nlp_engine, predefined = _import_presidio()
    import regex
    import tldextract

    flags = regex.DOTALL | regex.MULTILINE  # no IGNORECASE: worker ids and keys are upper-case
    offline_suffixes = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)

    class OfflineEmailRecognizer(predefined.EmailRecognizer):
        def validate_result(self, pattern_text: str):
            # A known public suffix raises the score to 1; an unknown one is kept (None), not
            # dropped: "me@lab.internal" is still an address.
            return True if offline_suffixes(pattern_text.split("@")[-1]).suffix else None

    def pattern(entity: str, patterns: list[tuple[str, str, float]], name: str):
        return presidio.PatternRecognizer(
            supported_entity=entity,
            name=name,
            patterns=[
                presidio.Pattern(label, expression, score) for label, expression, score in patterns
            ],
            global_regex_flags=flags,
        )

    recognizers = [
        OfflineEmailRecognizer(),
        predefined.PhoneRecognizer(),
        predefined.CreditCardRecognizer(),
        predefined.IbanRecognizer(),
        predefined.IpRecognizer(),
        predefined.UsSsnRecognizer(),
        predefined.CryptoRecognizer(),
        pattern(
            "MTURK_WORKER_ID",
            [("mturk worker id", WORKER_ID_PATTERN, 0.6)],
            "MTurkWorkerIdRecognizer",
        ),
        pattern(
            "API_KEY", [(label, expr, 0.9) for label, expr in API_KEY_PATTERNS], "ApiKeyRecognizer"
        ),
    ]
    known = sorted(
        {i for i in known_ids if len(i) >= MIN_KNOWN_ID_LENGTH}, key=lambda i: (-len(i), i)
    )
    if known:
        alternatives = "|".join(re.escape(i) for i in known)
        expression = rf"(?i)(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])"
        recognizers.append(
            pattern(
                "KNOWN_WORKER_ID",
                [("source worker id", expression, 1.0)],
                "KnownWorkerIdRecognizer",
            )
        )
    registry = presidio.RecognizerRegistry(recognizers=recognizers, global_regex_flags=flags)
    engine = nlp_engine.NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "none"}])
    engine.load()
    return presidio.AnalyzerEngine(registry=registry, nlp_engine=engine, supported_languages=["en"])


class Detector:
    """Presidio's analyzer with this project's recognizers, and a cache of its answers."""

    CACHE_SIZE = 200_000

    def __init__(self, known_ids: Iterable[str] = ()) -> None:
        self.known_ids = tuple(sorted(set(known_ids)))
        self._analyzer = _build_analyzer(self.known_ids)
        known = [re.escape(i) for i in self.known_ids if len(i) >= MIN_KNOWN_ID_LENGTH]
        self._entities = [e for e in ENTITIES if known or e != "KNOWN_WORKER_ID"]
        expression = _CANDIDATE + (
            rf"|(?<!\S)(?i:(?=\S*(?:{'|'.join(known)}))\S+)" if known else ""
        )
        self._candidate = re.compile(expression)
        self._cache: dict[str, tuple[Span, ...]] = {}

    def find(self, text: str) -> tuple[Span, ...]:
        """Non-overlapping entities in `text`, in order."""
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        results = self._analyzer.analyze(
            text=text, language="en", entities=self._entities, score_threshold=SCORE_THRESHOLD
        )
        spans = [
            Span(r.start, r.end, r.entity_type, round(r.score, 2),
                 (r.recognition_metadata or {}).get("recognizer_name", ""))
            for r in results
        ]  # fmt: skip
        chosen: list[Span] = []
        for span in sorted(spans, key=lambda s: (-s.score, -(s.end - s.start), s.start, s.entity)):
            if all(span.end <= other.start or span.start >= other.end for other in chosen):
                chosen.append(span)
        found = tuple(sorted(chosen))
        if len(self._cache) >= self.CACHE_SIZE:
            self._cache.clear()
        self._cache[text] = found
        return found

    def windows(self, text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
        """Merged (start, end) windows of `text` around every candidate token in text[start:end].

        Every entity `find` reports in `text` that overlaps text[start:end] lies inside one
        window: entities contain a candidate token, and windows reach `_REACH` characters past
        it and then on to the next whitespace.
        """
        # Whole tokens only: a token cut by the range would hide its digit or its length.
        start = _to_space_left(text, start)
        end = _to_space_right(text, len(text) if end is None else end)
        windows: list[tuple[int, int]] = []
        for match in self._candidate.finditer(text, start, end):
            low = _to_space_left(text, max(0, match.start() - _REACH))
            high = _to_space_right(text, min(len(text), match.end() + _REACH))
            if windows and low <= windows[-1][1]:
                windows[-1] = (windows[-1][0], max(windows[-1][1], high))
            else:
                windows.append((low, high))
        return windows

    def find_in(self, text: str, start: int = 0, end: int | None = None) -> list[Span]:
        """Entities of `text` overlapping text[start:end], found window by window (cached)."""
        spans: list[Span] = []
        for low, high in self.windows(text, start, end):
            for span in self.find(text[low:high]):
                spans.append(
                    Span(span.start + low, span.end + low, span.entity, span.score, span.recognizer)
                )
        return spans


def _to_space_left(text: str, position: int) -> int:
    limit = max(0, position - _MAX_REACH)
    while position > limit and not text[position - 1].isspace():
        position -= 1
    return position


def _to_space_right(text: str, position: int) -> int:
    limit = min(len(text), position + _MAX_REACH)
    while position < limit and not text[position].isspace():
        position += 1
    return position


def redact_text(text: str, detector: Detector) -> tuple[str, list[Span]]:
    """`text` with every entity replaced by its same-length mask, and the entities found."""
    spans = detector.find_in(text)
    if not spans:
        return text, []
    pieces, position = [], 0
    for span in spans:
        pieces.append(text[position : span.start])
        pieces.append(mask(span.entity, span.end - span.start))
        position = span.end
    pieces.append(text[position:])
    return "".join(pieces), list(spans)
