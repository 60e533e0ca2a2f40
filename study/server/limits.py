"""What the participant server lets one session, one address and the whole study use.

The keys live in study.toml ([session] and [suggestions], README "Configuration"; defined in
schemas/study.schema.json) and are read from `Study.raw` here, so study.config stays small.
Every default is the safe one: a study that sets nothing is protected.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from study.config import ConfigError, Study

# A CoAuthor session has about 1,300 events and 0.6 MB (the largest of the public release about
# 2,200 events and 1 MB): the defaults leave ten times that room and stop a flood long before
# it fills a disk.
MAX_EVENTS = 20_000
MAX_BYTES = 20_000_000


@dataclass(frozen=True)
class Limits:
    # Per session: events and bytes of CoAuthor records stored.
    max_events: int = MAX_EVENTS
    max_bytes: int = MAX_BYTES
    # New sessions one IP address may start per hour (0: no limit). A lab where everyone
    # shares one address raises it.
    new_sessions_per_ip_per_hour: int = 20
    # Calls to the model per minute for the whole study, all sessions together.
    model_calls_per_minute: int = 300
    # Model calls (suggestions, ghost text, chat replies; study.server.model_calls) served at the
    # same time; the rest of the server's threads stay free for events and pages. Past it a
    # request is answered 503 at once.
    concurrent_suggestions: int = 4
    # The largest request body read at all ([session] max_request_bytes): the per-request total
    # of every text a request carries (issue 24); the declared schemas cap each field.
    max_request_bytes: int = 1_000_000
    # The end of the document a Tab request sends the model ([suggestions] prompt_chars).
    prompt_chars: int = 50_000
    # Access codes a lab participant may enter with; None: any code (README, "Running a study").
    access_codes: frozenset[str] | None = None

    def last_seq_error(self, last_seq: int, lowest: int = 0) -> str | None:
        """What is wrong with a finish request's `last_seq`, or None. The browser numbers every
        event it records and a session never stores more than `max_events`, so a larger number
        is not a real page's; refusing it keeps the gap count meaningful and cheap. (`lowest`
        -1: a page that may finish having numbered no event, as the chat page.)"""
        if lowest <= last_seq < self.max_events:
            return None
        return f"'last_seq' must be between {lowest} and {self.max_events - 1}"


def from_study(study: Study) -> Limits:
    session = study.raw.get("session", {})
    suggestions = study.raw.get("suggestions", {})
    defaults = Limits()
    return Limits(
        max_events=session.get("max_events", defaults.max_events),
        max_bytes=session.get("max_bytes", defaults.max_bytes),
        new_sessions_per_ip_per_hour=session.get(
            "new_sessions_per_ip_per_hour", defaults.new_sessions_per_ip_per_hour
        ),
        model_calls_per_minute=suggestions.get(
            "model_calls_per_minute", defaults.model_calls_per_minute
        ),
        concurrent_suggestions=suggestions.get(
            "concurrent_requests", defaults.concurrent_suggestions
        ),
        max_request_bytes=session.get("max_request_bytes", defaults.max_request_bytes),
        prompt_chars=suggestions.get("prompt_chars", defaults.prompt_chars),
        access_codes=_access_codes(study, session.get("access_codes_file", "")),
    )


MAX_ACCESS_CODE = 64


def _access_codes(study: Study, name: str) -> frozenset[str] | None:
    if not name:
        return None
    path = Path(study.directory) / name
    source = Path(study.directory) / "study.toml"
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(
            f"{source}: session.access_codes_file: cannot read '{path}' ({error}). "
            f'Fix: create it with one access code per line, or set access_codes_file = "".'
        ) from None
    listed = [
        (number, line.strip()) for number, line in enumerate(lines, start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]  # fmt: skip
    for number, code in listed:
        if len(code) > MAX_ACCESS_CODE:  # /task's access_code (schemas/api/pages.schema.json)
            raise ConfigError(
                f"{path} line {number}: an access code of {len(code)} characters; the task link "
                f"carries at most {MAX_ACCESS_CODE}, so it could never enter. Fix: hand out a "
                "shorter code and list that one."
            )
    codes = frozenset(code for _, code in listed)
    if not codes:
        raise ConfigError(
            f"{source}: session.access_codes_file: '{path}' lists no access code, so nobody "
            f"could enter. Fix: add one code per line, or set access_codes_file = \"\"."
        )
    return codes
