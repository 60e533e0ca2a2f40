"""Every declared request is bounded by its declaration alone (study.server.contract): each
integer within a signed 64-bit integer, each number, text, list and object capped, so no field
of any route can carry an unbounded value to a handler, the model or the database."""

from __future__ import annotations

import pytest

from study.review.web import create_review_app
from study.server.contract import PATH_PARAMETERS, contract_of, inlined

INT64 = 2**63 - 1
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")


def unbounded(node, where: str = "") -> list[str]:
    """Where `node` (an inlined JSON Schema) lets a value grow without limit."""
    if not isinstance(node, dict):
        return []
    found = []
    if "enum" not in node and "const" not in node and not any(key in node for key in _SCHEMA_LISTS):
        kinds = node.get("type")
        kinds = [kinds] if isinstance(kinds, str) else (kinds or [])
        if not kinds and not ({"properties", "patternProperties"} & node.keys()):
            found.append(f"{where or '(root)'}: any value at all")
        for kind in kinds:
            if kind == "integer" and not (-INT64 - 1 <= node.get("minimum", -INT64 - 2) and node.get("maximum", INT64 + 1) <= INT64):
                found.append(f"{where}: an integer without minimum and maximum within 64 bits")
            elif kind == "number" and not ("minimum" in node and "maximum" in node):
                found.append(f"{where}: a number without minimum and maximum")
            elif kind == "string" and "maxLength" not in node:
                found.append(f"{where}: a text without maxLength")
            elif kind == "array" and "maxItems" not in node:
                found.append(f"{where}: a list without maxItems")
        if ("object" in kinds or not kinds) and node.get("additionalProperties", True) is not False and "maxProperties" not in node:
            found.append(f"{where}: an object open to any number of fields")
    for key in _SCHEMA_LISTS:
        for n, sub in enumerate(node.get(key, [])):
            found += unbounded(sub, f"{where}/{key}[{n}]")
    for key in _SCHEMA_MAPS:
        for name, sub in node.get(key, {}).items():
            found += unbounded(sub, f"{where}.{name}")
    for key in ("items", "additionalProperties", "not"):
        if isinstance(node.get(key), dict):
            found += unbounded(node[key], f"{where}[{key}]")
    return found


def _declared(app) -> dict[str, str]:
    references = {}
    for rule in app.url_map.iter_rules():
        contract = contract_of(app.view_functions[rule.endpoint])
        for reference in (contract.body, contract.query, contract.form) if contract else ():
            if reference:
                references[reference] = rule.rule
    return references


def _every_declaration(app, review_study) -> dict[str, str]:
    return {**_declared(app), **_declared(create_review_app(review_study)), PATH_PARAMETERS: "every path"}


def test_the_checker_finds_an_unbounded_field():
    loose = {"type": "object", "additionalProperties": False,
             "properties": {"n": {"type": "integer", "maximum": 2**64}, "s": {"type": "string"},
                            "l": {"type": "array", "items": {"type": "string", "maxLength": 5}}}}  # fmt: skip
    assert unbounded(loose) == [
        ".n: an integer without minimum and maximum within 64 bits",
        ".s: a text without maxLength",
        ".l: a list without maxItems",
    ]


@pytest.fixture
def review_study(tmp_path):
    from study import config
    from study.cli import write_study_files

    write_study_files(tmp_path / "review")
    return config.load(tmp_path / "review")


def test_every_declared_body_form_query_and_path_is_bounded(app, review_study):
    declarations = _every_declaration(app, review_study)
    assert len(declarations) >= 15

    found = {reference: unbounded(inlined(reference)) for reference in declarations}

    assert {reference: problems for reference, problems in found.items() if problems} == {}
