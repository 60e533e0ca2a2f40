"""What changed between two parsed configurations (the preregistration record's and today's),
each change named by the key a researcher would look up in study.toml.

A table's keys are followed down (`session.min_seconds`); a list of tables is followed by each
table's own name where it has one (`prompts[mana].text`, `surveys[about_ai].items[trust]`: the
[[prompts]] code, a survey's name, an item's id), else by position (`review.rubric[2].label`),
so that one prompt reworded is one line naming it rather than the whole list twice. A table
added to or removed from such a list is one change, and so is a new order of the tables kept:
the order is part of the design (prompts are offered and assigned in it, items asked in it).
"""

from __future__ import annotations

import json

# The key that names a table in a list, in the order tried: [[prompts]] code, a survey item's
# or [[survey]] question's id, [[surveys]], [[rounds]] and [[plan.outcomes]] name, a chat
# intent's key as the record holds it (study.plan.files).
NAMING_KEYS = ("code", "id", "name", "key")


def shown(value) -> str:
    return "(absent)" if value is None else json.dumps(value, ensure_ascii=False)


def changes(old, new, path: str = "") -> list[tuple[str, str]]:
    """(key, what changed) for every difference between `old` and `new`, in key order."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in sorted(old.keys() | new.keys()):
            found += changes(old.get(key), new.get(key), f"{path}.{key}" if path else key)
        return found
    if isinstance(old, list) and isinstance(new, list) and _tables(old) and _tables(new):
        return _list_changes(old, new, path)
    return [] if old == new else [(path, f"{shown(old)} -> {shown(new)}")]


def _tables(values: list) -> bool:
    return bool(values) and all(isinstance(value, dict) for value in values)


def _naming_key(*lists: list[dict]) -> str | None:
    for key in NAMING_KEYS:
        names = [table.get(key) for tables in lists for table in tables]
        if all(isinstance(name, str) and name for name in names) and all(
            len({table[key] for table in tables}) == len(tables) for tables in lists
        ):
            return key
    return None


def _list_changes(old: list[dict], new: list[dict], path: str) -> list[tuple[str, str]]:
    key = _naming_key(old, new)
    if key is None:  # tables with no name of their own: by position
        return [change for i in range(max(len(old), len(new)))
                for change in changes(old[i] if i < len(old) else None, new[i] if i < len(new) else None, f"{path}[{i}]")]  # fmt: skip
    before = {table[key]: table for table in old}
    now = {table[key]: table for table in new}
    found = [(f"{path}[{name}]", "removed after the record") for name in before if name not in now]
    found += [(f"{path}[{name}]", f"added after the record: {shown(now[name])}") for name in now if name not in before]
    kept_before = [name for name in before if name in now]
    kept_now = [name for name in now if name in before]
    if kept_before != kept_now:
        found.append((path, f"order {', '.join(kept_before)} -> {', '.join(kept_now)}"))
    for name in kept_before:
        found += changes(before[name], now[name], f"{path}[{name}]")
    return found
