"""What the participant's pages say of study.toml's settings, and whether they are ready to say
it: the study's duration and minimum writing time in words, the slack the server's check of
that minimum allows, and the consent page's contact, which `study init` leaves for the
researcher to fill in.
"""

from __future__ import annotations

from study.config_types import Study


# The contact line of the consent form `study init` writes; `study serve` will not start while
# the study's consent page still holds it (a participant must be able to reach a real person).
CONSENT_CONTACT_PLACEHOLDER = "[REPLACE with the protocol director's name and how to reach them]"
# What `study demo` writes there instead: a local demonstration has no protocol director. A page
# saying it is a demo's; served to participants it would tell them nothing leaves the computer.
DEMO_CONTACT = ("nobody: this is a local demonstration of the study software, and nothing you "
                "write leaves this computer")  # fmt: skip


def demo_consent(study: Study) -> str | None:
    """Why a demo folder's consent page (`study demo`) may not be served to participants, or None."""
    if DEMO_CONTACT in study.consent_template:
        where = study.raw.get("texts", {}).get("consent") or "the built-in consent template"
        return (
            f"the consent page ({where}) is the demo's: it names {DEMO_CONTACT!r} as the contact. "
            "Fix: replace that with the protocol director's name and how to reach them "
            f"(`study demo --dir {study.directory}` keeps trying the folder as a demo)."
        )
    return None


def unfinished_consent(study: Study) -> str | None:
    """Why the study's consent page is not ready for participants, or None."""
    if CONSENT_CONTACT_PLACEHOLDER in study.consent_template:
        where = study.raw.get("texts", {}).get("consent") or "the built-in consent template"
        return (
            f"the consent page ({where}) still says {CONSENT_CONTACT_PLACEHOLDER!r}. "
            f"Fix: replace it with the protocol director's name and how to reach them."
        )
    return None


def minutes_text(minutes: int) -> str:
    """"1 minute", "15 minutes": how the consent page and the dataset card state a duration."""
    return f"{minutes} minute" if minutes == 1 else f"{minutes} minutes"


# Clocks and networks differ a little; the browser's timer is authoritative for the writer, the
# server's check of the minimum writing time (and MTurk review's) only guards against a
# tampered page.
MIN_TIME_SLACK_SECONDS = 3


def seconds_text(seconds: int) -> str:
    """"1 minute", "10 minutes", "45 seconds", "1 minute 30 seconds": how the instructions
    state the minimum writing time."""
    minutes, rest = divmod(int(seconds), 60)
    parts = [minutes_text(minutes)] if minutes else []
    if rest or not minutes:
        parts.append(f"{rest} second" if rest == 1 else f"{rest} seconds")
    return " ".join(parts)


def min_writing_text(study: Study) -> str:
    """The minimum writing time as the instructions state it ({{ min_writing }}): the timer's
    [session] min_seconds, not the whole study's duration_minutes."""
    return seconds_text(study.min_seconds)


def study_duration(study: Study) -> str:
    """The study's expected duration as participants and the dataset card read it: one source,
    [study] duration_minutes."""
    return minutes_text(study.duration_minutes)
