"""What the toolkit knows about a release, gathered once by the build for every document.

The card, the CHANGELOG and datapackage.json render these facts; nothing in them is typed by
hand, and nothing depends on the clock: dates come from the sessions' own timestamps.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone

from study.release.arms_as_run import ArmsAsRun
from study.release.creators import Creators
from study.release.diff import ReleaseDiff
from study.release.source import StudyInfo
from study.release.versioning import Version

LAYOUT_VERSION = 1  # bump when the release layout (layout.py) changes: a major release


@dataclass
class ReleaseFacts:
    name: str
    version: Version
    namespace: str
    license: str
    key_fingerprint: str
    source_kind: str  # "study" or "folder"
    date: str  # YYYY-MM-DD, the last session's last event (or the previous release's date)
    first_date: str
    last_date: str
    sessions: int
    writers: int
    events: int
    formats: Counter = field(default_factory=Counter)
    genres: Counter = field(default_factory=Counter)
    prompts: Counter = field(default_factory=Counter)
    conditions: Counter = field(default_factory=Counter)  # (genre, temperature, frequency_penalty)
    survey_sessions: int = 0
    survey_columns: list[str] = field(default_factory=list)
    redacted_by_entity: Counter = field(default_factory=Counter)
    redacted_by_place: Counter = field(
        default_factory=Counter
    )  # "session text", "suggestions", "survey"
    redacted_sessions: int = 0
    withdrawn_excluded: int = 0  # sessions left out of this release because their writer withdrew
    simulated: int = 0  # sessions written by `study simulate`, not by people
    # conversations.jsonl (study.release.conversations): a chat study's or chat arm's, and their messages
    conversations: int = 0
    messages: int = 0
    # The study's design files the release carries (study.release.design): arms.json, judging, ...
    design_files: list[str] = field(default_factory=list)
    # A study folder's arms as its released sessions ran them (study.release.arms_as_run).
    arms: ArmsAsRun | None = None
    # A within-subjects study's within.json (study.release.within); None between subjects.
    within: dict | None = None
    study: StudyInfo | None = None
    # Who created the dataset and who funded it, as the curator declared them (study.release.creators).
    creators: Creators = field(default_factory=Creators)
    previous: Version | None = None
    previous_date: str = ""
    diff: ReleaseDiff | None = None
    withdrawn_removed: list[str] = field(default_factory=list)  # previously released, now withdrawn
    left_out_removed: list[str] = field(default_factory=list)  # previously released, now --exclude'd

    @property
    def title(self) -> str:
        if self.study and self.study.title:
            return f"{self.study.title} ({self.name} {self.version})"
        return f"{self.name} {self.version}"

    @property
    def mtime(self) -> int:
        """The release's time for archive entries: midnight UTC of its date."""
        day = datetime.strptime(self.date, "%Y-%m-%d").replace(tzinfo=timezone.utc)
        return int(day.timestamp())


def utc_date(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d")
