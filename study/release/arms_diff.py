"""What changed in a release's arms.json (study.release.design) since the previous release, one
sentence per arm: "arm `gpt3-hi`: temperature 0.9 -> 0.75", "arm `control` added".

A reader told only "arms.json changed" must open both files to learn whether a setting changed
under an arm's name (which splits its sessions into two groups) or only its session count grew.
An arm may have several entries in arms.json (one per setting its sessions ran with), so each
field is compared as the values of all the arm's entries, and `sessions` as their sum.
"""

from __future__ import annotations

import json
from pathlib import Path

from study.release.design import ARMS

NOT_RECORDED = "not recorded"  # arms.json's null: nothing stored with the sessions says
# Long texts: the diff says that they changed, and arms.json gives them.
UNQUOTED = frozenset({"system_prompt"})


def _entries(directory: Path) -> list[dict] | None:
    path = directory / ARMS
    if not path.is_file():
        return None
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["arms"]
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{ARMS} of {directory}: not a release's arms file ({error}); rebuild the release") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("name"), str) for e in entries):
        raise ValueError(f"{ARMS} of {directory}: `arms` must be a list of entries with a `name`; rebuild the release")
    return entries


def _values(entries: list[dict], key: str) -> str:
    """The field over an arm's entries as the diff writes it: distinct values in order, "; "."""
    if key == "sessions":
        return str(sum(e.get("sessions") or 0 for e in entries))
    seen: list[str] = []
    for entry in entries:
        value = entry.get(key)
        for one in value if isinstance(value, list) else [value]:
            text = NOT_RECORDED if one is None else json.dumps(one) if isinstance(one, bool) else str(one)
            if text not in seen:
                seen.append(text)
    return "; ".join(seen) if seen else "none"


def _label(key: str, unit: str) -> str:
    # arms.json's `sessions` counts what the release counts: a chat study's conversations.
    return f"{unit}s" if key == "sessions" else key.replace("_", " ")


def changes(old: Path, new: Path, unit: str = "session") -> list[str]:
    """Each arm's change from `old`'s arms.json to `new`'s; [] when either has none. `unit`:
    what the releases count (study.release.diff.ReleaseDiff.unit)."""
    before, after = _entries(old), _entries(new)
    if before is None or after is None:
        return []
    names = list(dict.fromkeys([e["name"] for e in after] + [e["name"] for e in before]))
    old_keys = list(dict.fromkeys(k for e in before for k in e if k != "name"))
    new_keys = list(dict.fromkeys(k for e in after for k in e if k != "name"))
    # A field only one release's arms.json has (an older toolkit's release) is named once, not
    # per arm as a change of every arm's value.
    shared = [k for k in new_keys if k in old_keys]
    found = []
    for name in names:
        was = [e for e in before if e["name"] == name]
        now = [e for e in after if e["name"] == name]
        if not was:
            found.append(f"arm `{name}` added")
            continue
        if not now:
            found.append(f"arm `{name}` removed")
            continue
        parts = []
        for key in shared:
            a, b = _values(was, key), _values(now, key)
            if a != b:
                parts.append(f"{_label(key, unit)} changed" if key in UNQUOTED else f"{_label(key, unit)} {a} -> {b}")
        if len(was) != len(now):
            parts.append(f"entries (settings it ran with) {len(was)} -> {len(now)}")
        if parts:
            found.append(f"arm `{name}`: " + ", ".join(parts))
    found += [f"field `{k}` added to every arm" for k in new_keys if k not in old_keys]
    found += [f"field `{k}` removed from every arm" for k in old_keys if k not in new_keys]
    return found
