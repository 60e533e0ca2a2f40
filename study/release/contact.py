"""The study's contact: the one piece of personal data a release publishes on purpose.

Review boards require the consent page to name the protocol director and how to reach them,
and the dataset card quotes the consent page (study.release.card). `[study] contact` in
study.toml declares that contact. The build then

1. refuses, before writing anything, a consent page that still holds `study init`'s placeholder
   contact (`study serve` refuses it too: the card would publish the placeholder as the contact
   participants were given), and a consent page naming an e-mail address or phone number
   the declaration does not hold (`undeclared`): publishing it would be an accident;
2. states the contact on the card as published on purpose, and records it in datapackage.json
   as a Frictionless contributor with the role "contact" (`contributor`), so that
   `study release verify` knows it without study.toml (`from_package`);
3. lets the leak scan pass exactly those values, and only in the card, datapackage.json and
   the preregistration record, which quotes study.toml (`PUBLISHED_IN`). The same address
   typed by a participant, or found in a survey answer, is redacted and caught like any other.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable

from study.release.layout import CARD, DATAPACKAGE
from study.release.pii import Detector

# preregistration.json quotes study.toml, [study] contact included (study.release.design).
PUBLISHED_IN = frozenset({CARD, DATAPACKAGE, "preregistration.json"})
ROLE = "contact"
# What the declared contact may hold: e-mail addresses and phone numbers, which review boards
# require; anything else the detector finds in it (a worker id, a key) is never published.
KINDS = frozenset({"EMAIL_ADDRESS", "PHONE_NUMBER"})
_KIND_NAMES = {"EMAIL_ADDRESS": "an e-mail address", "PHONE_NUMBER": "a phone number"}


class ContactError(ValueError):
    pass


def normalized(entity: str, text: str) -> str:
    """One spelling per value: a phone number by its digits, an address in lower case."""
    if entity == "PHONE_NUMBER":
        return re.sub(r"\D", "", text)
    return text.strip().lower()


def published_values(contact: str, detector: Detector) -> frozenset[tuple[str, str]]:
    """(entity, normalized value) of every e-mail address and phone number the contact names."""
    return frozenset(
        (span.entity, normalized(span.entity, contact[span.start : span.end]))
        for span in detector.find_in(contact)
        if span.entity in KINDS
    )


def is_published(entity: str, text: str, published: Iterable[tuple[str, str]]) -> bool:
    return (entity, normalized(entity, text)) in set(published)


def check_consent(consent_text: str, contact: str, detector: Detector, where: str, unfinished: str = "") -> None:
    """Refuse a consent page that is not ready (`unfinished`: why, from
    study.config.unfinished_consent) or names personal data the study did not declare as its
    contact."""
    if unfinished:
        raise ContactError(
            f"{where}: not releasing: the dataset card quotes the consent page as participants "
            f"read it, and {unfinished}"
        )
    published = published_values(contact, detector)
    for span in detector.find_in(consent_text):
        value = consent_text[span.start : span.end]
        if span.entity in KINDS and is_published(span.entity, value, published):
            continue
        kind = _KIND_NAMES.get(span.entity, f"personal data ({span.entity})")
        if span.entity not in KINDS:
            fix = "remove it from the consent page: only an e-mail address or phone number is published"
        else:
            fix = (
                f'declare the study\'s contact in study.toml, e.g. [study] contact = "Dr. Name, '
                f'{value}": a release publishes it on purpose in the dataset card'
            )
        raise ContactError(
            f"{where}: the consent page names {kind} ({value!r}) that study.toml's [study] contact "
            f"does not declare, and the dataset card quotes the consent page. Fix: {fix}."
        )


def contributor(contact: str) -> dict:
    """The contact as datapackage.json's `contributors` entry."""
    return {"title": contact, "role": ROLE}


def from_package(directory: Path) -> str:
    """The contact a release declares in its datapackage.json ("" when none, or unreadable)."""
    try:
        package = json.loads((directory / DATAPACKAGE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    contributors = package.get("contributors") if isinstance(package, dict) else None
    for entry in contributors if isinstance(contributors, list) else []:
        if isinstance(entry, dict) and entry.get("role") == ROLE:
            title = entry.get("title")
            return title if isinstance(title, str) else ""
    return ""
