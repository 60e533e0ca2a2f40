"""Every request's declared contract, checked at the door (README, "Request contracts").

A view declares what it accepts with `@declare(...)`, under its route decorator:

    @blueprint.post("/<session_id>/chat/messages")
    @declare("Send a chat message", body="api/chat-message.schema.json",
             responses={200: "api/responses.schema.json#/$defs/chatSent"})
    def send(session_id): ...

`body`, `query` and `form` name JSON Schemas under `schemas/` (a file, or a file and a
`#/$defs/...` pointer): the single source of truth for the request's format, read here for
validation, by study.server.openapi for the description served at /api/openapi.json, and by
the property-based tests (tests/contract). Path parameters are declared once for every route,
by name, in schemas/api/path-parameters.schema.json. A view that declares no `query` takes no
query parameters; a form is checked on POST only (GET shows the page).

`install(app)` runs the check before every request, ahead of the view and any database call:
path parameters (404 when they cannot name anything), then the query, the form and the JSON
body. A request that breaks its contract is refused with a 4xx naming the field (JSON for the
API, a short page otherwise); nothing is stored and no model is called. The view reads the
checked body with `body()`.

What every schema guarantees, and tests/contract/test_declarations.py checks: every integer
has a maximum within a signed 64-bit integer, every string a maxLength, every list a maxItems,
every object closed or capped, so nesting and size are bounded by the declaration itself.
JSON is parsed with orjson, which refuses nesting past 1,024 levels and numbers past 64 bits
(a bigger integer becomes a float, which no integer field accepts).

Hot routes (the event batches) are checked by a compiled predicate of the same schema
(study.curation.schema_compiler, microseconds); jsonschema walks only refused requests, to
word the error. jsonschema is told that only a whole number written without a decimal point is
an integer, as the compiled predicate does, so the two always agree.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jsonschema
import orjson
from flask import Flask, current_app, g, jsonify, render_template_string, request
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from study import paradigms
from study.curation.schema import field_path
from study.curation.schema_compiler import Unsupported, compile_schema
from study.paths import schemas_dir

BASE = "https://study.local/schemas/"
PATH_PARAMETERS = "api/path-parameters.schema.json"
ERROR = "api/responses.schema.json#/$defs/error"
# A problem list is for people: the first few name what to fix.
MAX_PROBLEMS = 20
# No request of ours nests deeper than a few levels (an event's textDelta.ops[].attributes is
# six); the validator's wording of a value nested hundreds deep (orjson reads up to 1,024)
# recursed past Python's limit, a 500 for anyone who sent one.
MAX_NESTING = 64
SHOWN_LEVELS = 8  # of such a value's path, in the refusal


@dataclass(frozen=True)
class Contract:
    summary: str
    body: str | None = None
    query: str | None = None
    form: str | None = None
    # status -> schema of a JSON answer, or None for a page (text/html)
    responses: Mapping[int, str | None] = field(default_factory=dict)
    # The status of a body that breaks its schema: 400, or 422 for the event batches, whose
    # clients (the editor's outbox) treat 422 as "this batch will never be stored".
    refusal: int = 400


def declare(
    summary: str,
    *,
    body: str | None = None,
    query: str | None = None,
    form: str | None = None,
    responses: Mapping[int, str | None] | None = None,
    refusal: int = 400,
) -> Callable:
    """Attach a contract to a view (place it under the route decorator)."""

    def decorate(view: Callable) -> Callable:
        view.contract = Contract(summary, body, query, form, dict(responses or {}), refusal)
        return view

    return decorate


def contract_of(view: Callable | None) -> Contract | None:
    return getattr(view, "contract", None)


def is_static(endpoint: str) -> bool:
    """Whether a route serves files: the app's static/ ("static") or a blueprint's, e.g. a
    paradigm's scripts ("chat.static"). They take no input, so they declare none and are no
    part of the API's description."""
    return endpoint == "static" or endpoint.endswith(".static")


def body():
    """The request's JSON body as the door checked it."""
    return g.study_body


# -- the schemas ------------------------------------------------------------------------------


def _no_network(uri: str) -> Resource:
    raise LookupError(f"schema {uri} is not in schemas/; the server never fetches schemas")


def registry() -> Registry:
    """Every schema under schemas/ (and schemas/api/), and every registered paradigm's own
    (study.paradigms.base.Paradigm.schemas), under its `$id`."""
    folders = [schemas_dir(), *(p.schemas for p in paradigms.registered() if p.schemas)]
    return _registry(tuple(str(folder) for folder in folders))


@cache
def _registry(folders: tuple[str, ...]) -> Registry:
    resources = []
    for folder in folders:
        for path in sorted(Path(folder).glob("**/*.schema.json")):
            contents = json.loads(path.read_text(encoding="utf-8"))
            resources.append((contents["$id"], Resource.from_contents(contents, DRAFT202012)))
    return Registry(retrieve=_no_network).with_resources(resources)


@cache
def inlined(reference: str) -> dict:
    """The schema `reference` names (relative to schemas/) with every `$ref` replaced by what
    it points to: one self-contained schema, as OpenAPI and the compiled predicate want it."""
    resolved = registry().resolver().lookup(BASE + reference)
    return _inline(resolved.contents, resolved.resolver, ())


def edit_limits(batch: str, finish: str, text: str) -> dict:
    """What a page logging a writer's edits lets into its text (study/static/editor-events.js,
    `tooMuch`), as its boot data: `maxInsert`, the longest text one event of a `batch` may insert,
    and `maxText`, the longest `text` its `finish` request takes. Past either, the page's log or
    its finish would be refused, and the writer could never finish."""
    delta = inlined(batch)["properties"]["events"]["items"]["properties"]["textDelta"]["oneOf"][1]
    return {
        "maxInsert": delta["properties"]["ops"]["items"]["properties"]["insert"]["maxLength"],
        "maxText": inlined(finish)["properties"][text]["maxLength"],
    }


_DROPPED = {"$defs", "$id", "$schema", "$comment"}


def _inline(node, resolver, seen: tuple):
    if isinstance(node, list):
        return [_inline(item, resolver, seen) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in _DROPPED or key == "$ref":
            continue
        if key in ("enum", "const", "examples", "default"):
            out[key] = value  # data, not schemas
        elif key in ("properties", "patternProperties"):
            out[key] = {name: _inline(sub, resolver, seen) for name, sub in value.items()}
        else:
            out[key] = _inline(value, resolver, seen)
    if "$ref" not in node:
        return out
    resolved = resolver.lookup(node["$ref"])
    if id(resolved.contents) in seen:
        raise ValueError(f"{node['$ref']}: a recursive schema cannot bound nesting; declare a depth")
    target = _inline(resolved.contents, resolved.resolver, seen + (id(resolved.contents),))
    if set(target) & set(out) - {"description", "title"}:
        return {"allOf": [target, out]}
    return {**target, **out}


def _strict_integer(checker, instance) -> bool:
    # 3.0 is not an integer here: the release format writes whole numbers plainly, and the
    # compiled predicate (type(x) is int) agrees.
    return type(instance) is int


_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_integer),
)


@cache
def validator(reference: str):
    return _Validator(inlined(reference))


@cache
def fast_check(reference: str) -> Callable[[object], bool]:
    """True only for valid instances (False: ask the validator, which words the errors)."""
    try:
        return compile_schema(inlined(reference), None)
    except Unsupported:
        return validator(reference).is_valid


def problems(reference: str, instance, where: str = "") -> list[str]:
    """What is wrong with `instance` under the schema, one line per field, [] when valid."""
    if fast_check(reference)(instance):
        return []
    if (deep := _too_deep(instance)) is not None:
        path = ".".join(part for part in (where, field_path(deep[:SHOWN_LEVELS])) if part)
        return [f"{path}...: lists and objects nest deeper than {MAX_NESTING} levels; "
                "no request to this server nests that deep"]
    errors = sorted(validator(reference).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [problem(error, where) for error in errors[:MAX_PROBLEMS]]


def _too_deep(value) -> list | None:
    """The path to where lists and objects in `value` first nest deeper than MAX_NESTING, or
    None; found without recursion, as the validator's own wording would need it."""
    stack = [(value, [])]
    while stack:
        value, path = stack.pop()
        children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in children:
            if isinstance(child, dict | list):
                if len(path) + 2 > MAX_NESTING:  # the child's level: `value` is at len(path) + 1
                    return [*path, key]
                stack.append((child, [*path, key]))
    return None


# -- wording ----------------------------------------------------------------------------------

_KINDS = {"string": "a string", "integer": "a whole number", "number": "a number",
          "object": "an object", "array": "a list", "boolean": "true or false", "null": "null"}  # fmt: skip


def _shown(value) -> str:
    # Short, and safe for anything a request can hold (nesting past orjson's writer, huge text).
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 40 else value[:37] + "...")
    return json.dumps(value)


def problem(error: jsonschema.ValidationError, where: str = "") -> str:
    """`events[0].textDelta.ops[0].retain: must be at most 10000000, got 2e+19`."""
    # For "one of" rules (textDelta is "" or a delta), report the deepest failure: it names
    # the field that is actually wrong.
    while error.context:
        error = max(error.context, key=lambda e: len(e.absolute_path))
    path = field_path(error.absolute_path) if error.absolute_path else ""
    path = f"{where}.{path}" if where and path else (where or path or "body")
    value, rule, keyword = error.instance, error.validator_value, error.validator
    if keyword == "type":
        kinds = rule if isinstance(rule, list) else [rule]
        if "integer" in kinds and isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            return f"{path}: send whole numbers without a decimal point (3, not 3.0)"
        wanted = " or ".join(_KINDS.get(kind, kind) for kind in kinds)
        return f"{path}: must be {wanted}, got {_shown(value)}"
    if keyword == "required":
        missing = next((name for name in rule if isinstance(value, dict) and name not in value), rule[0])
        kind = error.schema.get("properties", {}).get(missing, {}).get("type")
        article = f"{_KINDS[kind]} " if isinstance(kind, str) and kind in _KINDS else ""
        return f"{path}: {article}'{missing}' is required"
    if keyword == "additionalProperties":
        extra = sorted(set(value) - set(error.schema.get("properties", {})))
        return f"{path}: unknown field {', '.join(repr(name) for name in extra[:5])}"
    if keyword in ("maximum", "minimum"):
        side = "at most" if keyword == "maximum" else "at least"
        return f"{path}: must be {side} {rule}, got {_shown(value)}"
    if keyword in ("maxLength", "minLength"):
        side = "at most" if keyword == "maxLength" else "at least"
        return f"{path}: must have {side} {rule} characters, got {len(value)}"
    if keyword in ("maxItems", "minItems"):
        side = "at most" if keyword == "maxItems" else "at least"
        return f"{path}: must have {side} {rule} items, got {len(value)}"
    if keyword in ("maxProperties", "minProperties"):
        side = "at most" if keyword == "maxProperties" else "at least"
        return f"{path}: must have {side} {rule} fields, got {len(value)}"
    if keyword in ("enum", "const"):
        allowed = rule if keyword == "enum" else [rule]
        return f"{path}: must be one of {', '.join(_shown(v) for v in allowed[:12])}, got {_shown(value)}"
    if keyword == "pattern":
        return f"{path}: must match {rule}, got {_shown(value)}"
    return f"{path}: {error.message[:200]}"


# -- the door ---------------------------------------------------------------------------------

_PAGE = """<!doctype html><meta charset="utf-8"><title>Cannot accept this request</title>
<h1>Cannot accept this request</h1><p>{{ message }}</p>"""


def _refuse(status: int, found: list[str]):
    if request.path.startswith("/api/") or request.is_json or request.accept_mimetypes.best == "application/json":
        return jsonify(error=found[0], problems=found), status
    return render_template_string(_PAGE, message=found[0]), status


def _fields(multi) -> dict:
    # One value per name as a string; a name sent several times (a multiple-choice question)
    # as a list, which a field declared as a string refuses.
    return {key: values[0] if len(values) == 1 else values for key, values in multi.lists()}


def _nul(multi, where: str) -> list[str]:
    # PostgreSQL's text cannot hold NUL: a parameter or form field carrying one was a 500 there
    # (SQLite stored it). No one types it; a page's fields never need it. (JSON bodies keep
    # theirs: the event records store it escaped in their JSON, on both databases.)
    for key, values in multi.lists():
        if any("\x00" in value for value in values):
            return [f"{where}.{key}: must not contain the NUL character (\\u0000)"]
    return []


def check_request():
    """Flask `before_request`: the contract of the view about to run, checked."""
    view = current_app.view_functions.get(request.endpoint or "")
    contract = contract_of(view)
    if contract is None:
        return None
    if request.view_args:
        found = problems(PATH_PARAMETERS, dict(request.view_args), "path")
        if found:
            return _refuse(404, found)
    if contract.query is not None:
        found = problems(contract.query, _fields(request.args), "query") or _nul(request.args, "query")
        if found:
            return _refuse(400, found)
    elif request.args:
        # A view that declares no query takes none: a stray parameter is a client's mistake
        # (or a probe), said now rather than ignored.
        return _refuse(400, [f"query: unknown parameter {', '.join(repr(k) for k in list(request.args)[:5])}"])
    if contract.form is not None and request.method == "POST":
        found = problems(contract.form, _fields(request.form), "form") or _nul(request.form, "form")
        if found:
            return _refuse(400, found)
    if contract.body is not None:
        try:
            g.study_body = orjson.loads(request.get_data(cache=False))
        except orjson.JSONDecodeError as error:
            return _refuse(400, [f"body is not valid JSON: {error}"])
        found = problems(contract.body, g.study_body)
        if found:
            return _refuse(contract.refusal, found)
    return None


def install(app: Flask) -> Flask:
    app.before_request(check_request)
    return app
