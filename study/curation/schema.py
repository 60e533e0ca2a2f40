"""The CoAuthor record schemas, loaded from `schemas/` into a local registry (never the network).

`schemas/coauthor-*.schema.json` are the single source of truth for a record's shape. Checking
2.7 million events with `jsonschema` alone takes minutes, so each schema is also compiled into
one Python predicate (`fast_check`, see `study.curation.schema_compiler`). When it says True
the record is valid; when it says False, `jsonschema` decides and words the errors
(`schema_errors`). Tests check that both agree on fixture records and on broken ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from study.curation.formats import FORMAT_2021, FORMAT_INTERFACE, FORMAT_PROACTIVE
from study.curation.quote import cut, quote
from study.curation.schema_compiler import Unsupported, compile_schema
from study.paths import schemas_dir

BASE = "https://study.local/schemas/"
SCHEMA_FILES = {
    FORMAT_2021: "coauthor-2021.schema.json",
    FORMAT_INTERFACE: "coauthor-interface.schema.json",
    FORMAT_PROACTIVE: "coauthor-proactive.schema.json",
}


def _no_network(uri: str) -> Resource:
    raise LookupError(f"schema {uri} is not in schemas/; the curation tools never fetch schemas")


@cache
def registry() -> Registry:
    """Every `schemas/coauthor-*.schema.json`, under its `$id`."""
    resources = []
    for path in sorted(schemas_dir().glob("coauthor-*.schema.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        resources.append((contents["$id"], Resource.from_contents(contents, DRAFT202012)))
    return Registry(retrieve=_no_network).with_resources(resources)


@cache
def validator(format_name: str) -> Draft202012Validator:
    uri = BASE + SCHEMA_FILES[format_name]
    return Draft202012Validator(registry().contents(uri), registry=registry())


def field_path(parts) -> str:
    """`textDelta.ops[1].retain` from a jsonschema path deque."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(record)"


def schema_errors(record: object, format_name: str) -> Iterator[tuple[str, str]]:
    """(field, message) for each way `record` breaks its format's schema."""
    for error in sorted(validator(format_name).iter_errors(record), key=lambda e: list(e.path)):
        path = list(error.absolute_path)
        if error.validator == "required":
            for key in error.validator_value:
                if isinstance(error.instance, dict) and key not in error.instance:
                    yield field_path(path + [key]), "is missing"
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = error.schema.get("properties", {})
            for key in sorted(set(error.instance) - set(known)):
                yield cut(field_path(path + [key])), "is not a field of this format"
        else:
            yield field_path(path), _say(error)


def _say(error) -> str:
    got = quote(error.instance)
    keyword, expected = error.validator, error.validator_value
    if keyword == "type":
        names = expected if isinstance(expected, list) else [expected]
        return f"must be {' or '.join(_TYPE_WORDS.get(n, n) for n in names)}, got {got}"
    if keyword == "minimum":
        return f"must be at least {expected}, got {got}"
    if keyword in _COUNTED:
        bound, unit = _COUNTED[keyword]
        return f"must have {bound} {expected} {unit}{'' if expected == 1 else 's'}, got {got}"
    if keyword == "const":
        return f"must be {quote(expected)}, got {got}"
    if keyword == "enum":
        return f"must be one of {', '.join(map(str, expected))}; got {got}"
    if keyword == "required":
        return f"needs {', '.join(k for k in expected if k not in error.instance)}"
    if keyword == "oneOf":
        if all(isinstance(b, dict) and set(b) == {"required"} for b in expected):
            names = ", ".join(b["required"][0] for b in expected)
            return f"must have exactly one of {names}, got {got}"
        # The branch that failed on something other than its type is the one meant.
        meant = [
            e for e in error.context if e.relative_path or e.validator not in ("type", "const")
        ]
        if meant:
            deepest = max(meant, key=lambda e: len(e.absolute_path))
            inner = field_path(deepest.relative_path) if deepest.relative_path else ""
            return f"{inner} {_say(deepest)}".strip()
        return f"has the wrong type: got {got}"
    if keyword == "anyOf":
        # Branches that each constrain one field (coauthor-proactive: L0, or at most one
        # suggestion): the rule broken is the one on something other than a type or constant.
        meant = [e for e in error.context if e.validator not in ("type", "const")]
        if meant:
            deepest = max(meant, key=lambda e: len(e.absolute_path))
            inner = field_path(deepest.relative_path) if deepest.relative_path else ""
            branch = expected[deepest.schema_path[0]] if deepest.schema_path else {}
            why = f" ({branch['description']})" if isinstance(branch, dict) and "description" in branch else ""
            return f"{inner} {_say(deepest)}{why}".strip()
    # jsonschema's own wording quotes the whole value, however long: word it here instead.
    return f"breaks the schema's {keyword} rule ({quote(expected)}), got {got}"


_COUNTED = {
    "minLength": ("at least", "character"), "maxLength": ("at most", "character"),
    "minItems": ("at least", "item"), "maxItems": ("at most", "item"),
    "minProperties": ("at least", "key"), "maxProperties": ("at most", "key"),
}  # fmt: skip
_TYPE_WORDS = {
    "integer": "an integer",
    "string": "a string",
    "number": "a number",
    "object": "an object",
    "array": "a list",
    "null": "null",
    "boolean": "true or false",
}


@cache
def fast_check(format_name: str) -> Callable[[object], bool]:
    """The compiled predicate for one format's record schema (falls back to jsonschema)."""
    uri = BASE + SCHEMA_FILES[format_name]
    resolver = registry().resolver(base_uri=uri)
    try:
        return compile_schema(registry().contents(uri), resolver)
    except Unsupported:
        return validator(format_name).is_valid
