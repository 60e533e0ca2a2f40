"""Text pasted into Quill keeps its formatting `attributes`, a link's target among them
(`{"link": "tel:..."}`, `{"link": "mailto:..."}`). That target is personal data as much as the
text is: a release must not carry it, and `study release verify` must see it."""

from __future__ import annotations

from study.curation.formats import read_session
from study.curation.replay import replay
from study.release.build import build_release
from study.release.keys import load_key
from study.release.pseudonyms import released_session_id
from study.release.redaction import redact_session
from study.release.pii import Detector
from study.release.verify import verify
from tests.conftest import COAUTHOR
from tests.release.conftest import PASTED, copy_source, write_session
from tests.release.inject import Writer

OTHER = "88daaed513824fbd9c77746eec7862d9"
LINK = "tel:+1-415-555-2671"  # a pasted e-mail signature: "Call me" linked to the writer's phone


def _with_pasted_link(events: list[dict]) -> tuple[list[dict], int]:
    writer = Writer(events)
    writer.paste("Call me", attributes={"link": LINK, "bold": True})
    return writer.events, len(writer.events) - 1


def test_a_pasted_links_target_is_redacted_and_the_release_still_replays(key, tmp_path):
    source = copy_source(tmp_path / "coauthor", [PASTED, OTHER])
    path = source / "sessions" / f"{PASTED}.jsonl"
    events, line = _with_pasted_link(read_session(path).events)
    write_session(path, events)

    built = build_release(source, version="1.0.0", out=tmp_path / "out", key_path=key.path, processes=1)

    for file in built.directory.rglob("*"):
        if file.is_file():
            assert b"555-2671" not in file.read_bytes(), file.name
    released = read_session(
        built.directory / "sessions" / f"{released_session_id(load_key(key.path), PASTED, 'coauthor')}.jsonl"
    ).events
    op = released[line]["textDelta"]["ops"][-1]
    assert op["insert"] == "Call me" and op["attributes"]["bold"] is True
    assert len(op["attributes"]["link"]) == len(LINK)
    assert replay(released).text == replay(events).text  # the link's text was nothing personal
    assert any(r.entity == "PHONE_NUMBER" and "attributes" in r.where for r in built.redactions)
    assert verify(built.directory, processes=1).ok


def test_the_leak_scan_sees_a_links_target():
    events, _ = _with_pasted_link(read_session(COAUTHOR / "sessions" / f"{PASTED}.jsonl").events)
    found = redact_session(PASTED, events, Detector()).redactions
    assert any("555-2671" in r.original for r in found if "attributes" in r.where), found
