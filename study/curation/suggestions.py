"""Which shown suggestion an inserted text is: accepted suggestions are matched by text.

Shared data README: an accepted suggestion is `suggestion-select` (user), `suggestion-close`
(api), `text-insert` whose inserted text equals an item's `original` (or its stripped form) in
the last shown list. The index fields do not reliably identify the chosen item. Quill moves a
suggestion's leading newline to its end ("\\n\\nThe wolf..." is inserted as "\\nThe wolf...\\n"),
which is why the stripped forms are compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

EXACT = "exact"  # the inserted text is an item's original (or trimmed) text
STRIPPED = "stripped"  # equal after stripping surrounding whitespace
LOOSE = "loose"  # equal only after collapsing all runs of whitespace


def inserted_text(event: Mapping) -> str:
    """The text an event's delta inserts (string inserts joined, in order)."""
    delta = event.get("textDelta")
    if not delta or not (type(delta) is dict or isinstance(delta, Mapping)):
        return ""
    return "".join(
        op["insert"]
        for op in delta.get("ops") or ()
        if isinstance(op, dict) and type(op.get("insert")) is str
    )


def shown_texts(suggestions: Sequence[Mapping]) -> list[str]:
    """The texts a suggestion list offered (`original`, and `trimmed` when it differs)."""
    texts: list[str] = []
    for item in suggestions:
        if not (type(item) is dict or isinstance(item, Mapping)):
            continue
        for key in ("original", "trimmed"):
            text = item.get(key)
            if isinstance(text, str) and text not in texts:
                texts.append(text)
    return texts


def match_suggestion(inserted: str, suggestions: Sequence[Mapping]) -> str | None:
    """How `inserted` matches the shown list: EXACT, STRIPPED, LOOSE, or None for no match."""
    texts = shown_texts(suggestions)
    if inserted in texts:
        return EXACT
    stripped = inserted.strip()
    if stripped and any(stripped == text.strip() for text in texts):
        return STRIPPED
    collapsed = " ".join(inserted.split())
    if collapsed and any(collapsed == " ".join(text.split()) for text in texts):
        return LOOSE
    return None
