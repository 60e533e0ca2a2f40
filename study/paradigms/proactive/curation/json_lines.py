"""Reading a JSON-lines input of MindCopilot's commands against its schema in schemas/: every
error names the file, the line and the field, and points to the schema (the format's one
description). Blank lines are skipped."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from study.paths import schemas_dir


def read_json_lines(path: Path, schema: str, error: type[ValueError]) -> list[tuple[int, dict]]:
    """(line number, object) per line of `path`, each valid against schemas/`schema`; raises
    `error` at the first bad line."""
    document = json.loads((schemas_dir() / schema).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(document)
    objects = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise error(f"{path} line {number}: not JSON ({exc})") from None
        problem = next(iter(validator.iter_errors(data)), None)
        if problem is not None:
            where = ".".join(str(p) for p in problem.absolute_path) or "the line"
            raise error(f"{path} line {number}: {where}: {problem.message}. Fix: see schemas/{schema}")
        objects.append((number, data))
    return objects
