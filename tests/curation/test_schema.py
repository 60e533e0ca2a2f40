"""The schemas load from schemas/ only, and the compiled fast check agrees with jsonschema."""

from __future__ import annotations

import copy

import pytest
from referencing.exceptions import Unretrievable

from study.curation.formats import FORMAT_2021, FORMAT_INTERFACE, read_session
from study.curation.schema import fast_check, registry, schema_errors, validator

from .conftest import INTERFACE_SESSION, SESSIONS, small_session


def test_registry_holds_the_local_coauthor_schemas_and_never_fetches():
    for name in ("coauthor-defs", "coauthor-2021", "coauthor-interface"):
        uri = f"https://study.local/schemas/{name}.schema.json"
        assert registry().contents(uri)["$id"] == uri
    with pytest.raises(Unretrievable) as raised:
        registry().get_or_retrieve("https://json-schema.org/some/remote.json")
    assert "never fetch" in str(raised.value.__cause__)


def _sample():
    for path in sorted(SESSIONS.glob("*.jsonl"))[:8]:
        yield from read_session(path).events[::7]


def test_every_sampled_fixture_record_passes_both_checks():
    check, full = fast_check(FORMAT_2021), validator(FORMAT_2021)
    for event in _sample():
        assert check(event) and full.is_valid(event)
    interface = read_session(INTERFACE_SESSION).events
    assert all(map(fast_check(FORMAT_INTERFACE), interface))
    assert all(validator(FORMAT_INTERFACE).is_valid(e) for e in interface[::5])


BREAKAGES = {
    "missing key": lambda r: r.pop("currentCursor"),
    "extra key": lambda r: r.update(extra=1),
    "unknown event": lambda r: r.update(eventName="text-paste"),
    "unknown source": lambda r: r.update(eventSource="model"),
    "string timestamp": lambda r: r.update(eventTimestamp="1630035416013"),
    "negative cursor": lambda r: r.update(currentCursor=-1),
    "retain as string": lambda r: r.update(textDelta={"ops": [{"retain": "3"}, {"insert": "x"}]}),
    "empty ops": lambda r: r.update(textDelta={"ops": []}),
    "op with two actions": lambda r: r.update(textDelta={"ops": [{"retain": 1, "insert": "x"}]}),
    "delete zero": lambda r: r.update(textDelta={"ops": [{"delete": 0}]}),
    "insert a number": lambda r: r.update(textDelta={"ops": [{"insert": 3}]}),
    "embed with two keys": lambda r: r.update(
        textDelta={"ops": [{"insert": {"image": "x.png", "alt": "x"}}]}
    ),
    "empty embed": lambda r: r.update(textDelta={"ops": [{"insert": {}}]}),
    "delta as list": lambda r: r.update(textDelta=[]),
    "cursor range half": lambda r: r.update(cursorRange={"index": 1}),
    "control as number": lambda r: r.update(currentTemperature=0.9),
    "hover index string": lambda r: r.update(currentHoverIndex="2"),
    "suggestion without text": lambda r: r.update(
        currentSuggestions=[{"index": 0, "probability": 0.1}]
    ),
    "bool eventNum": lambda r: r.update(eventNum=True),
    "not an object": None,
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_fast_check_and_jsonschema_reject_the_same_broken_records(breakage):
    broken = copy.deepcopy(small_session()[1]) if BREAKAGES[breakage] else ["not", "an", "event"]
    if BREAKAGES[breakage]:
        BREAKAGES[breakage](broken)
    assert not validator(FORMAT_2021).is_valid(broken)
    assert not fast_check(FORMAT_2021)(broken)
    assert list(schema_errors(broken, FORMAT_2021))


def test_fast_check_is_conservative_and_jsonschema_decides():
    record = small_session()[1]
    record["currentCursor"] = 19.0  # JSON Schema counts 19.0 as an integer
    assert not fast_check(FORMAT_2021)(record)
    assert validator(FORMAT_2021).is_valid(record)


def test_attributes_on_ops_and_deltas_without_leading_retain_are_valid():
    record = small_session()[1]
    record["textDelta"] = {"ops": [{"insert": "Hi", "attributes": {"bold": True}}]}
    assert fast_check(FORMAT_2021)(record) and validator(FORMAT_2021).is_valid(record)


def test_errors_name_the_field_path_and_what_was_found():
    record = small_session()[1]
    record["textDelta"] = {"ops": [{"retain": 18}, {"retain": "3"}]}
    record["eventName"] = "text-paste"
    errors = dict(schema_errors(record, FORMAT_2021))
    assert errors["textDelta"] == 'ops[1].retain must be an integer, got "3"'
    assert errors["eventName"].startswith("must be one of system-initialize")
    assert 'got "text-paste"' in errors["eventName"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("textDelta", {"ops": [{"retain": 1, "insert": "x"}]},
         'ops[0] must have exactly one of insert, retain, delete, '
         'got {"retain": 1, "insert": "x"}'),
        ("cursorRange", {"index": 1}, "needs length"),
        ("currentHoverIndex", "2", 'has the wrong type: got "2"'),
        ("currentHoverIndex", -1, "must be at least 0, got -1"),
        ("textDelta", {"ops": [{"delete": 0}]}, "ops[0].delete must be at least 1, got 0"),
    ],
)  # fmt: skip
def test_alternatives_are_explained_by_the_branch_that_was_meant(field, value, message):
    record = small_session()[1]
    record[field] = value
    assert dict(schema_errors(record, FORMAT_2021))[field] == message


def test_interface_records_break_the_2021_schema_and_the_other_way_round():
    interface = read_session(INTERFACE_SESSION).events[1]
    assert not fast_check(FORMAT_2021)(interface)
    errors = dict(schema_errors(interface, FORMAT_2021))
    assert errors["eventNum"] == "is missing"
    assert errors["originalSuggestions"] == "is not a field of this format"
    assert not fast_check(FORMAT_INTERFACE)(small_session()[1])
