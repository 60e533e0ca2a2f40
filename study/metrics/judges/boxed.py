"""Reading a judge's answer: `\\boxed{ {...} }` (MindCopilot App. H), a ```json fence, or bare
JSON; the outermost braces are taken and parsed (spec A3.1, "Parsing all MindCopilot judges")."""

from __future__ import annotations

import json


class JudgeParseError(ValueError):
    """The judge's answer holds no JSON object; the message quotes its start."""


def _outermost(text: str, start: int) -> str | None:
    depth, in_string, escaped = 0, False, False
    begin = text.find("{", start)
    if begin < 0:
        return None
    for i in range(begin, len(text)):
        ch = text[i]
        if in_string:
            escaped = ch == "\\" and not escaped
            if ch == '"' and not escaped:
                in_string = False
            elif ch != "\\":
                escaped = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[begin : i + 1]
    return None


def parse_json_answer(text: str) -> dict:
    """The JSON object in a judge's answer; raises JudgeParseError."""
    box = text.find("\\boxed{")
    candidates = []
    if box >= 0:
        inner = _outermost(text, box + len("\\boxed{"))
        if inner:
            candidates.append(inner)
    whole = _outermost(text, 0)
    if whole:
        candidates.append(whole)
    for candidate in candidates:
        for attempt in (candidate, candidate.replace("{{", "{").replace("}}", "}")):
            try:
                value = json.loads(attempt)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    raise JudgeParseError(f"no JSON object in the judge's answer: {text[:120]!r}")
