"""The leak scan: a finished release must hold no personal data, or it is not released.

Two independent looks at every file (and the text look at its name):

1. **Raw bytes**, with plain regular expressions that need no parsing: e-mail addresses,
   MTurk-shaped worker ids, the API key patterns, and the source's own worker ids (any case,
   when known: the build passes them; `study release verify --key` reads them from the
   re-identification table). Masks (`<EMAIL___>`) never match these.
2. **Text as a reader would see it**, with the same detector as the redaction
   (`study.release.pii`): every text cell of the CSV and Parquet tables (columns that
   datapackage.json types as numbers hold the toolkit's statistics, and digits such as
   0.31818181818181823 pass for card numbers), every string of the JSON files, the card and
   the CHANGELOG (after blanking the ISO dates and versions the toolkit writes there:
   "[1.0.0] - 2021-09-06" passes for a phone number), and for each session log every state of
   the document (`study.release.redaction` in detect mode: whatever it would still redact is a
   leak), which is how text typed one key at a time is seen; in conversations.jsonl every
   text the redaction reads (study.release.conversations) and every state of each
   conversation's document pane, the same way.

SHA256SUMS and datapackage.json hashes are hex digests and pass the byte patterns (lower-case).

The one exception is the study's own contact, which the release declares in datapackage.json
(study.release.contact), and its creators and funding (study.release.creators): their e-mail
addresses and phone numbers pass in the card and in datapackage.json, and nowhere else. (The host of a URL that preregistration.json quotes from
study.toml, a model endpoint at "http://127.0.0.1:8001/v1", is the study's own server, not
personal data: `_without_url_host`.)
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator
from urllib.parse import urlsplit

from study.curation.runner import run
from study.plan.record import RECORD_NAME as PREREGISTRATION
from study.release import contact, creators
from study.release.csvtable import wide_fields
from study.release.layout import CONVERSATIONS, SUMS, release_files
from study.release.pii import API_KEY_PATTERNS, MIN_KNOWN_ID_LENGTH, WORKER_ID_PATTERN, Detector

EMAIL = r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+"
_TOOLKIT_TOKENS = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d+\.\d+\.\d+\b")
# JSON keys whose values are checksums or file names, not text anyone wrote.
_STRUCTURAL_KEYS = frozenset(
    {"hash", "path", "$id", "$ref", "$schema", "pattern", "key_fingerprint"}
)


@dataclass(frozen=True)
class Leak:
    file: str
    where: str
    kind: str
    excerpt: str
    # The whole finding, to compare with the published contact; never rendered or logged.
    value: str = field(default="", repr=False, compare=False)

    def render(self) -> str:
        return f"{self.file} {self.where}: {self.kind} ({self.excerpt})"


def _hint(text: str) -> str:
    """Enough of a finding to locate it, not enough to republish it in a log."""
    text = text.replace("\n", " ")
    return text[:3] + "…" + f" ({len(text)} chars)" if len(text) > 4 else "…"


_SCANNER: "LeakScanner | None" = None  # set before the worker pool forks (study.curation.runner)


def _scan_session_job(job: tuple[str, Path, tuple[str, ...]]) -> list[Leak]:
    global _SCANNER
    name, path, known_ids = job
    if _SCANNER is None or tuple(_SCANNER.known_ids) != known_ids:  # a spawned worker
        _SCANNER = LeakScanner(known_ids, processes=1)
    return list(_SCANNER._scan_session(name, path))


def _not_scanned(job: tuple[str, Path, tuple[str, ...]], message: str) -> list[Leak]:
    """A session whose scan failed: unscanned text cannot be declared free of leaks."""
    return [Leak(job[0], "(its text)", "not scanned", message)]


class LeakScanner:
    def __init__(self, known_ids: Iterable[str] = (), detector: Detector | None = None,
                 processes: int | None = None) -> None:  # fmt: skip
        self.processes = processes
        self.known_ids = sorted({i for i in known_ids if len(i) >= MIN_KNOWN_ID_LENGTH})
        self.detector = detector or Detector(self.known_ids)
        patterns = [("email address", EMAIL), ("worker id", WORKER_ID_PATTERN)]
        patterns += [(f"API key ({label})", expression) for label, expression in API_KEY_PATTERNS]
        if self.known_ids:
            alternatives = "|".join(re.escape(i) for i in self.known_ids)
            patterns.append(
                ("source worker id", rf"(?i)(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")
            )
        self._bytes = [(kind, re.compile(expression.encode())) for kind, expression in patterns]

    def scan(self, directory: Path) -> list[Leak]:
        global _SCANNER
        leaks: list[Leak] = []
        numeric = _numeric_columns(directory)
        declared = (contact.from_package(directory), *creators.from_package(directory).texts())
        published = frozenset().union(*(contact.published_values(text, self.detector) for text in declared))
        sessions = []
        for name in release_files(directory):
            path = directory / name
            # A file's name is published too (and is an archive member's): SHA256SUMS lists it,
            # but its bytes are only searched for the byte patterns, not phone numbers or IPs.
            found = list(self._found(name, "file name", name))
            found += self._scan_bytes(name, path.read_bytes())
            if name == CONVERSATIONS:
                found.extend(self._scan_conversations(name, directory))
            elif name.endswith(".jsonl"):
                sessions.append((name, path, tuple(self.known_ids)))
            elif name != SUMS:
                found.extend(self._scan_text(name, path, numeric.get(name, frozenset())))
            if name in contact.PUBLISHED_IN:
                found = [leak for leak in found if not _published(leak, published)]
            leaks.extend(found)
        _SCANNER = self
        try:
            for found in run(
                _scan_session_job, sessions, processes=self.processes, progress=False,
                failed=_not_scanned,
            ):  # fmt: skip
                leaks.extend(found)
        finally:
            _SCANNER = None
        return leaks

    def _scan_bytes(self, name: str, data: bytes) -> Iterator[Leak]:
        for kind, pattern in self._bytes:
            for match in pattern.finditer(data):
                line = data.count(b"\n", 0, match.start()) + 1
                text = match.group().decode("utf-8", "replace")
                yield Leak(name, f"line {line}", kind, _hint(text), text)

    def _scan_text(self, name: str, path: Path, numeric: frozenset[str]) -> Iterator[Leak]:
        suffix = path.suffix.lower()
        if suffix == ".csv":
            # errors="replace": a damaged file is still scanned (verify reports the damage).
            with (
                open(path, newline="", encoding="utf-8", errors="replace") as handle,
                wide_fields(),
            ):
                rows = csv.reader(handle)
                header = next(rows, [])
                for cell in header:
                    yield from self._found(name, "line 1 (header)", cell)
                for number, row in enumerate(rows, start=2):
                    for index, cell in enumerate(row):
                        column = header[index] if index < len(header) else f"#{index + 1}"
                        if column not in numeric:
                            yield from self._found(name, f"line {number} column {column}", cell)
        elif suffix == ".parquet":
            import pyarrow.parquet as pq

            for number, row in enumerate(
                pq.read_table(io.BytesIO(path.read_bytes())).to_pylist(), start=1
            ):
                for column, cell in row.items():
                    if isinstance(cell, str):
                        yield from self._found(name, f"row {number} column {column}", cell)
        elif suffix == ".json":
            try:
                value = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                value = path.read_text(encoding="utf-8", errors="replace")
            for where, text in _strings(value, ""):
                if name == PREREGISTRATION and where.startswith("configuration."):
                    text = _without_url_host(text)
                yield from self._found(name, where or "(top)", text)
        else:
            for number, line in enumerate(
                path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1
            ):
                blanked = _TOOLKIT_TOKENS.sub(lambda m: " " * len(m.group()), line)
                yield from self._found(name, f"line {number}", blanked, original=line)

    def _found(
        self, name: str, where: str, text: str | None, original: str | None = None
    ) -> Iterator[Leak]:
        if not text:
            return
        for span in self.detector.find_in(text):
            value = (original or text)[span.start : span.end]
            yield Leak(name, where, span.entity, _hint(value), value)

    def _scan_conversations(self, name: str, directory: Path) -> Iterator[Leak]:
        """Each conversation's texts as the redaction read them, and every state of its
        document pane (study.release.conversations)."""
        from study.release import conversations
        from study.release.redaction import redact_session

        for number, _, record in conversations.lines(directory):
            if record is None:
                yield Leak(name, f"line {number}", "not scanned", "not a JSON object")
                continue
            for where, text in conversations.texts(record):
                yield from self._found(name, f"line {number} {where}", text)
            events = record.get("events")
            if not isinstance(events, list) or not events:
                continue
            try:
                result = redact_session(str(record.get("session_id", "")), events, self.detector)
            except (ValueError, TypeError, AttributeError) as error:  # a pane's log that does not replay
                yield Leak(name, f"line {number} events", "not scanned", f"the log does not replay: {error}")
                continue
            for redaction in result.redactions:
                yield Leak(name, f"line {number} events {redaction.where}", redaction.entity, _hint(redaction.original))

    def _scan_session(self, name: str, path: Path) -> Iterator[Leak]:
        from study.curation.formats import SessionFileError, read_session
        from study.release.redaction import redact_session

        try:
            session = read_session(path)
        except SessionFileError:
            return  # unreadable logs are the schema check's business; the byte scan still ran
        try:
            result = redact_session(session.session_id, session.events, self.detector)
        except ValueError as error:  # DeltaError: the log does not replay
            yield Leak(name, "(its text)", "not scanned", f"the log does not replay: {error}")
            return
        for redaction in result.redactions:
            yield Leak(name, redaction.where, redaction.entity, _hint(redaction.original))


# The byte patterns' names for the kinds a contact may hold (the detector's are its entities).
_BYTE_KINDS = {"email address": "EMAIL_ADDRESS"}


def _published(leak: Leak, published: frozenset[tuple[str, str]]) -> bool:
    entity = _BYTE_KINDS.get(leak.kind, leak.kind)
    return entity in contact.KINDS and contact.is_published(entity, leak.value, published)


def _numeric_columns(directory: Path) -> dict[str, frozenset[str]]:
    """file -> the columns datapackage.json types as numbers (none when it cannot be read)."""
    try:
        package = json.loads((directory / "datapackage.json").read_text(encoding="utf-8"))
        return {
            resource["path"]: frozenset(
                f["name"]
                for f in resource["schema"]["fields"]
                if f.get("type") in ("number", "integer")
            )
            for resource in package.get("resources", [])
            if isinstance(resource, dict)
            and isinstance(resource.get("schema"), dict)
            and isinstance(resource.get("path"), str)
        }
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _without_url_host(text: str) -> str:
    """A setting's URL with its host blanked: the preregistration record quotes study.toml, whose
    model endpoint or task page is often a bare address ("http://127.0.0.1:8001/v1"), the study's
    own server, published on purpose as part of the plan and nobody's personal data. The record
    is signed, so it cannot be redacted; the rest of the URL (a key in its query) is still scanned."""
    try:
        parts = urlsplit(text.strip())
        host = parts.hostname
    except ValueError:
        return text
    if parts.scheme not in ("http", "https") or not host:
        return text
    start = text.lower().find(host)
    return text if start < 0 else text[:start] + " " * len(host) + text[start + len(host):]


def _strings(value, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in _STRUCTURAL_KEYS:
                yield from _strings(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")
