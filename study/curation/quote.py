"""How a value from a session file is quoted in an error or warning: short, whatever its size.

A log can hold a value of any size: a pasted image is a Quill embed whose `data:` URI runs to
hundreds of kilobytes, and one such value once filled a terminal with base64. Every message of
curation and release quotes values through `quote`, which shows the value as JSON (the form the
file holds it in) and cuts it to `LIMIT` characters, saying how long it really is.
"""

from __future__ import annotations

import json

LIMIT = 80  # characters of a value shown in a message


def cut(text: str, limit: int = LIMIT) -> str:
    """`text` itself when short; else its first `limit` characters, "…" and the full length."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text):,} characters)"


def quote(value: object, limit: int = LIMIT) -> str:
    """`value` as JSON (`"3"`, `{"image": "data:image/png;base64,iVBO…"}`), cut by `cut`."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON (a set, a tuple key, NaN in strict mode, ...)
        text = repr(value)
    return cut(text, limit)
