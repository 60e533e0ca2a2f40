"""The schema compiler agrees with jsonschema on the keywords it handles, and refuses others."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from study.curation.schema_compiler import Unsupported, compile_schema

TREE = {
    "$id": "https://study.local/test/tree.json",
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]"},
        "weight": {"type": ["number", "null"], "minimum": 0, "maximum": 10},
        "kind": {"enum": ["leaf", "node"]},
        "tag": {"anyOf": [{"const": "x"}, {"type": "integer"}]},
        "children": {"type": "array", "maxItems": 2, "items": {"$ref": "#"}},
    },
    "additionalProperties": False,
}
INSTANCES = [
    {"name": "a"}, {"name": ""}, {"name": "toolong"}, {"name": 1}, {}, [], "x", None,
    {"name": "a", "weight": 3.5}, {"name": "a", "weight": None}, {"name": "a", "weight": -1},
    {"name": "a", "weight": 11}, {"name": "a", "weight": True}, {"name": "a", "kind": "leaf"},
    {"name": "a", "kind": "root"}, {"name": "a", "kind": ["leaf"]}, {"name": "a", "tag": "x"},
    {"name": "a", "tag": 3}, {"name": "a", "tag": "y"}, {"name": "a", "extra": 1},
    {"name": "a", "children": [{"name": "b"}, {"name": "c", "children": []}]},
    {"name": "a", "children": [{"name": "b", "children": [{"name": 5}]}]},
    {"name": "a", "children": [{"name": "b"}] * 3}, {"name": "A"}, {"name": "ab1"}, {"name": "1a"},
]  # fmt: skip


def compiled(schema):
    registry = Registry().with_resource(schema["$id"], Resource.from_contents(schema, DRAFT202012))
    return compile_schema(schema, registry.resolver(base_uri=schema["$id"])), Draft202012Validator(
        schema, registry=registry
    )


@pytest.mark.parametrize("instance", INSTANCES, ids=range(len(INSTANCES)))
def test_compiled_predicate_matches_jsonschema_including_recursive_refs(instance):
    check, reference = compiled(TREE)
    assert check(instance) == reference.is_valid(instance)


def test_unhandled_keywords_are_refused_so_callers_fall_back():
    with pytest.raises(Unsupported):
        compiled({"$id": "https://study.local/test/p.json", "type": "string", "format": "email"})


# A Delta op's kind: exactly one of its alternatives' keys (one key, or a set of them).
KINDS = {
    "$id": "https://study.local/test/kinds.json",
    "type": "object",
    "properties": {"insert": {"type": "string"}, "retain": {"type": "integer"}, "to": {}, "by": {}},
    "oneOf": [{"required": ["insert"]}, {"required": ["retain"]}, {"required": ["to", "by"]}],
}
KIND_INSTANCES = [
    {"insert": "a"}, {"retain": 1}, {"to": 1, "by": 2}, {"to": 1}, {}, {"insert": "a", "retain": 1},
    {"insert": "a", "to": 1, "by": 2}, {"retain": 1, "to": 1}, {"insert": 1}, [],
]  # fmt: skip


@pytest.mark.parametrize("instance", KIND_INSTANCES, ids=range(len(KIND_INSTANCES)))
def test_one_of_required_keys_matches_jsonschema(instance):
    check, reference = compiled(KINDS)
    assert check(instance) == reference.is_valid(instance)


# A record of the release: every key required and no other. The compiled code counts the keys
# and reads each; a key with nothing to check is not read, so the key sets are compared then.
CLOSED = {
    "$id": "https://study.local/test/closed.json",
    "type": "object",
    "required": ["index", "length"],
    "properties": {"index": {"type": "integer"}, "length": {"type": "integer"}},
    "additionalProperties": False,
}
CLOSED_ANY = {
    **CLOSED,
    "$id": "https://study.local/test/closed-any.json",
    "properties": {"index": {"type": "integer"}, "length": {}},
}
CLOSED_INSTANCES = [
    {"index": 1, "length": 2}, {"length": 2, "index": 1}, {"index": 1}, {"index": 1, "span": 2},
    {"index": 1, "length": 2, "span": 3}, {}, {"index": 1, "length": "2"}, {"index": "1", "length": 2},
    [], "index",
]  # fmt: skip


@pytest.mark.parametrize("schema", [CLOSED, CLOSED_ANY], ids=["every key checked", "a key of any value"])
@pytest.mark.parametrize("instance", CLOSED_INSTANCES, ids=range(len(CLOSED_INSTANCES)))
def test_an_object_of_exactly_its_required_keys_matches_jsonschema(schema, instance):
    check, reference = compiled(schema)
    assert check(instance) == reference.is_valid(instance)
