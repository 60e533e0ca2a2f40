"""Who created the dataset and who funded it: the Datasheets question the toolkit cannot answer.

The curator declares them before the build: `[release] creators` and `funding` in study.toml,
or `study release build --creator NAME --funding TEXT` (the only way for a folder of session
files, which has no study.toml; for a study the options replace its [release] values). The
card cannot be filled in afterwards: SHA256SUMS and `study release verify` refuse an edited
card. The build then

1. answers the card's "Who created it, and who funded it?" with them (`answer`); without them
   the card keeps its note for the curator (study.release.card);
2. records them in datapackage.json as Frictionless contributors (`contributors`): each creator
   with the role "author" (Data Package, `contributors`), the funding with the role "funder"
   (DataCite's contributor type Funder), so `study release verify` knows them without
   study.toml (`from_package`);
3. lets the leak scan pass the e-mail addresses and phone numbers they hold ("Ada Lovelace,
   ada@cs.example.edu") in the card, datapackage.json and preregistration.json only, as it
   passes the study's contact (study.release.contact.PUBLISHED_IN). Names of people are not
   detected (study.release.pii), so a writer who types a creator's name is neither redacted
   nor affected, and a writer who types a creator's address is redacted like anyone's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from study.release.layout import DATAPACKAGE

AUTHOR = "author"
FUNDER = "funder"
# As schemas/study.schema.json's [release]: the options are held to the same.
MAX_CREATOR = 300
MAX_FUNDING = 500


class CreatorsError(ValueError):
    pass


@dataclass(frozen=True)
class Creators:
    names: tuple[str, ...] = ()
    funding: str = ""

    def __bool__(self) -> bool:
        return bool(self.names or self.funding)

    def texts(self) -> tuple[str, ...]:
        return (*self.names, *((self.funding,) if self.funding else ()))


def from_study(raw: dict) -> Creators:
    """study.toml's [release], as study.config checked it against the schema."""
    section = raw.get("release", {})
    return Creators(tuple(name.strip() for name in section.get("creators", ())), section.get("funding", "").strip())


def check_options(names: Sequence[str], funding: str | None) -> None:
    """Refuse an empty or overlong `--creator` or `--funding`, before the build reads anything."""
    for name in names:
        if not name.strip() or len(name) > MAX_CREATOR:
            raise CreatorsError(
                f"--creator {name!r}: give one person or group per --creator, 1 to {MAX_CREATOR} "
                'characters, e.g. --creator "Ada Lovelace (Example University)".'
            )
    if funding is not None and (not funding.strip() or len(funding) > MAX_FUNDING):
        raise CreatorsError(
            f"--funding {funding!r}: give who funded the work, 1 to {MAX_FUNDING} characters, "
            'e.g. --funding "NSF grant IIS-2112633".'
        )


def from_options(names: Sequence[str], funding: str | None, declared: Creators) -> Creators:
    """`--creator` and `--funding` (checked), each replacing what study.toml declares (`declared`)."""
    return Creators(
        tuple(name.strip() for name in names) if names else declared.names,
        funding.strip() if funding is not None else declared.funding,
    )


def answer(creators: Creators) -> str:
    """The card's answer to "Who created it, and who funded it?" ("" when nothing is declared)."""
    if not creators:
        return ""
    made = f"Created by {'; '.join(creators.names)}." if creators.names else "The creators were not declared."
    funded = f" Funded by {creators.funding}." if creators.funding else " The funding was not declared."
    return made + funded + " (As the curator declared them for the release, published on purpose.)"


def contributors(creators: Creators) -> list[dict]:
    """datapackage.json's `contributors` entries of the creators and the funding."""
    entries = [{"title": name, "role": AUTHOR} for name in creators.names]
    return entries + ([{"title": creators.funding, "role": FUNDER}] if creators.funding else [])


def from_package(directory: Path) -> Creators:
    """The creators and funding a release declares in its datapackage.json (none when unreadable)."""
    try:
        package = json.loads((directory / DATAPACKAGE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Creators()
    entries = package.get("contributors") if isinstance(package, dict) else None
    titles = {AUTHOR: [], FUNDER: []}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("role") in titles and isinstance(entry.get("title"), str):
            titles[entry["role"]].append(entry["title"])
    return Creators(tuple(titles[AUTHOR]), "; ".join(titles[FUNDER]))
