"""The helpme paradigm's own table of study.toml, `[helpme]`: what its button says.

Its schema is declared here (SCHEMA), not in schemas/study.schema.json, so the table is checked
like the toolkit's own without an edit outside this folder.
"""

from __future__ import annotations

from dataclasses import dataclass

SECTION = "helpme"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"button": {"type": "string", "minLength": 1, "description": "the help button's label, e.g. \"Help me\""}},
}


@dataclass(frozen=True)
class HelpSettings:
    button: str = "Help me"


def load(data: dict, directory, source) -> HelpSettings:
    return HelpSettings(**data.get(SECTION, {}))


def problems(data: dict, source) -> list[str]:
    table = data.get(SECTION, {})
    if table.get("button", "").strip().lower() in ("finish", "use it"):
        return [f"{source}: helpme.button: {table['button']!r} is the label of another button on the page. "
                "Fix: choose another label."]
    return []
