"""Fixtures: the real CoAuthor sessions with personal data injected, keys, and built releases."""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from study.curation.formats import read_session
from study.release.build import build_release
from study.release.keys import init_keyfile
from study.release.pseudonyms import released_session_id
from tests.conftest import COAUTHOR
from tests.release.inject import Writer

if not (COAUTHOR / "sessions").is_dir():  # pragma: no cover - shared data ships with the project
    pytest.skip(f"CoAuthor fixtures not found at {COAUTHOR}", allow_module_level=True)

SMALLEST = "b5f8899be4134579aa75c7625414fa25"
PASTED = "11142ca391e749809df56da90091adb4"  # ops with formatting attributes
AT_ZERO = "35f12c5f76a443f2b20e8a6165ab998f"  # a delta without a leading retain
INTERFACE = "2925c4bef43b49acabcade452c1b3c48"
INTERFACE_WORKER = "A9INTERFACE0042XY"

EMAIL = "jane.doe@example.com"
DELETED_EMAIL = "maria_gonzalez84@gmail.com"
PHONE = "(415) 555-2671"
PHONE_INTL = "+1 617 555 0199"
TYPED_WORKER = "A3KX9PQ2ZL7MWT"
SURVEY_WORKER = "A1B2C3D4E5F6G7"
OPENAI_KEY = "sk-proj-Xk29dLq8VmZ3rTb7Nw4YcH1sFp6Ga0Ue"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
SUGGESTED_EMAIL = "help@writer-tools.io"

# Pieces of the injected data: none may be found anywhere in a release (any case).
FRAGMENTS = (
    "jane.doe",
    "example.com",
    "maria_gonzalez84",
    "gmail.com",
    "555-2671",
    "555 0199",
    TYPED_WORKER,
    SURVEY_WORKER,
    "Xk29dLq8VmZ3",
    "AKIAIOSFODNN7",
    "writer-tools.io",
    INTERFACE_WORKER,
)


def released(key, session_id: str, namespace: str = "coauthor") -> str:
    """The id a release built with `key` gives the source session `session_id`."""
    return released_session_id(key, session_id, namespace)


@dataclass
class PiiSource:
    path: Path
    injected: dict[str, str] = field(default_factory=dict)  # session id -> what was injected
    raw_worker_ids: set[str] = field(default_factory=set)

    @property
    def fragments(self) -> tuple[str, ...]:
        return FRAGMENTS + tuple(sorted(self.raw_worker_ids))


def metadata_rows() -> list[dict]:
    with open(COAUTHOR / "metadata.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write_session(path: Path, events: list[dict]) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


def write_metadata(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def copy_source(target: Path, session_ids: list[str] | None = None) -> Path:
    """A CoAuthor folder (sessions/, metadata.csv) with these fixture sessions (default: all)."""
    rows = [r for r in metadata_rows() if session_ids is None or r["session_id"] in session_ids]
    (target / "sessions").mkdir(parents=True)
    for row in rows:
        shutil.copyfile(
            COAUTHOR / "sessions" / f"{row['session_id']}.jsonl",
            target / "sessions" / f"{row['session_id']}.jsonl",
        )
    write_metadata(target / "metadata.csv", rows)
    return target


def make_pii_source(target: Path) -> PiiSource:
    """All 31 fixture sessions plus the later-interface one, with personal data typed, pasted,
    deleted, suggested and answered in the survey, as a writer could have."""
    rows = metadata_rows()
    copy_source(target)
    source = PiiSource(target, raw_worker_ids={r["worker_id"] for r in rows} | {INTERFACE_WORKER})
    sessions = target / "sessions"
    other_worker = next(r["worker_id"] for r in rows if r["session_id"] != SMALLEST)

    writer = Writer(read_session(sessions / f"{SMALLEST}.jsonl").events)
    writer.type(f" You can reach me at {EMAIL} or {PHONE}.")
    end = writer.type(f" My other mail is {DELETED_EMAIL}")
    writer.backspace(len(DELETED_EMAIL), end)  # typed, then deleted: still in the log
    writer.type(f"{TYPED_WORKER} ", at=writer.text.index("In my opinion,") + 3)
    writer.paste(f" My key is {OPENAI_KEY} and my id {other_worker.lower()}.")
    writer.accept([f"Write to {SUGGESTED_EMAIL} for details.", "Nothing personal here."], chosen=0)
    writer.type(f" And {AWS_KEY}.")
    write_session(sessions / f"{SMALLEST}.jsonl", writer.events)
    source.injected[SMALLEST] = "typed, deleted, pasted and suggested"

    writer = Writer(read_session(sessions / f"{AT_ZERO}.jsonl").events)
    writer.type(f"Call {PHONE_INTL}. ", at=0)
    write_session(sessions / f"{AT_ZERO}.jsonl", writer.events)
    source.injected[AT_ZERO] = "typed at position 0"

    writer = Writer(read_session(sessions / f"{PASTED}.jsonl").events)
    writer.type(f" Worker {other_worker} says hi.", at=len(writer.text) // 2)
    write_session(sessions / f"{PASTED}.jsonl", writer.events)
    source.injected[PASTED] = "a raw worker id typed mid-text"

    writer = Writer(read_session(COAUTHOR / "interface-format" / f"{INTERFACE}.jsonl").events)
    writer.type(f" Mail me: {EMAIL}")
    write_session(sessions / f"{INTERFACE}.jsonl", writer.events)
    source.injected[INTERFACE] = "later interface, typed e-mail"
    rows.append(
        {
            **{k: "" for k in rows[0]},
            "worker_id": INTERFACE_WORKER,
            "session_id": INTERFACE,
            "timestamp": "7/20/2025 15:30:00",
            "prompt_code": "corporations",
            "genre": "argumentative",
        }
    )
    write_metadata(target / "metadata.csv", rows)

    with open(target / "survey.csv", "w", newline="", encoding="utf-8") as handle:
        survey = csv.writer(handle, lineterminator="\n")
        survey.writerow(["session_id", "worker_id", "ownership", "comments"])
        survey.writerow([SMALLEST, rows[0]["worker_id"], "6", f"email me at {EMAIL} anytime"])
        survey.writerow([PASTED, other_worker, "5", f"my worker id is {SURVEY_WORKER}, thanks"])
        survey.writerow([AT_ZERO, "", "7", f"call {PHONE_INTL} or {PHONE}; key {OPENAI_KEY}"])
        survey.writerow([INTERFACE, INTERFACE_WORKER, "4", f"I am {other_worker}"])
    return source


@pytest.fixture(scope="session")
def pii_source(tmp_path_factory) -> PiiSource:
    return make_pii_source(tmp_path_factory.mktemp("pii-source") / "coauthor")


@pytest.fixture(scope="session")
def session_key(tmp_path_factory):
    return init_keyfile(tmp_path_factory.mktemp("keys") / "release.key")


@pytest.fixture(scope="session")
def pii_release(pii_source, session_key, tmp_path_factory):
    """coauthor-1.0.0 built from the PII source (built once for the module's read-only tests)."""
    out = tmp_path_factory.mktemp("releases")
    return build_release(
        pii_source.path, version="1.0.0", out=out, key_path=session_key.path, processes=2
    )


@pytest.fixture
def key(tmp_path):
    """A fresh key in its own folder (the files kept beside it land there too)."""
    folder = tmp_path / "keys"
    folder.mkdir()
    return init_keyfile(folder / "study.key")
