"""Values quoted in messages are cut to about 80 characters, whatever their size (issue 11:
a pasted image's base64 once filled the terminal)."""

from __future__ import annotations

import pytest

from study.curation.quote import LIMIT, cut, quote
from study.curation.replay import DeltaError, apply_delta
from study.curation.validate import validate_events

from .conftest import ops, small_session

HUGE = "data:image/png;base64," + "iVBORw0KGgo" * 50_000


def test_short_values_are_quoted_whole_as_json():
    assert quote("3") == '"3"'
    assert quote({"retain": -1}) == '{"retain": -1}'
    assert cut("short") == "short"


def test_long_values_are_cut_and_say_how_long_they_are():
    text = quote(HUGE)
    assert text.startswith('"data:image/png;base64,iVBORw0KGgo')
    assert text.endswith(f"… ({len(HUGE) + 2:,} characters)")
    assert len(text) < LIMIT + 30


@pytest.mark.parametrize(
    "op",
    [{"insert": ["not", "text", HUGE]}, {"retain": HUGE}, {"insert": {"image": HUGE, "x": 1}}],
    ids=["insert a list", "retain a string", "embed with two keys"],
)
def test_delta_errors_quote_the_op_short(op):
    with pytest.raises(DeltaError) as caught:
        apply_delta("abc\n", [op])
    assert len(str(caught.value)) < 3 * LIMIT + 50


def test_every_message_of_validate_is_short_however_long_the_values():
    events = small_session()
    events[2]["textDelta"] = ops({"retain": 19}, {"insert": {"image": HUGE, "alt": HUGE}})
    events[3]["currentTemperature"] = HUGE  # past the schema's maxLength
    events[4][HUGE[:5000]] = HUGE  # a key the format does not have
    events[5]["currentTemperature"] = "0.2"
    report = validate_events(events, "s")
    assert {"schema", "controls-changed"} <= {issue.code for issue in report.issues}
    for issue in report.issues:
        assert len(issue.render()) < 3 * LIMIT + 250, issue.render()[:300]
