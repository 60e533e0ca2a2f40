"""A MindCopilot session (schemas/coauthor-proactive.schema.json) holds text outside the
document: the text of an accepted ghost text as the writer edited it (`suggestion-modify`), and
an L2 suggestion's `rationale`, the model's reading of the document. A phone number the writer
typed is personal data there as much as in the document: a release must not carry it, and
`study release verify` must see it."""

from __future__ import annotations

import json

from study.curation.formats import read_session
from study.curation.replay import replay
from study.curation.validate import validate_events
from study.release.build import build_release
from study.release.checksums import write_sums
from study.release.verify import verify
from tests.curation.conftest import record
from tests.curation.proactive_session import Script

PHONE = "415-555-2671"
GHOST = " My friend moved."


def a_session_with_a_phone_in_its_extension() -> list[dict]:
    """An L2 writer accepts a ghost text, types their phone into it; the model's rationale for
    the suggestion quotes the phone they had written before."""
    script = Script(paradigm="L2")
    script.type(f"Snow fell all night. Text me on {PHONE}.")
    script.add(record("suggestion-get", "api"), trigger="idle", idleMs=2000, stage=None)
    item = {"index": 0, "original": GHOST, "trimmed": GHOST.strip(), "probability": None}
    script.add(record("suggestion-open", "api", currentSuggestions=[item]), suggestionId=1,
               strategy="L2", stage=None, maxTokens=30,
               rationale=f"The writer gave their number, {PHONE}; keep the story personal.")  # fmt: skip
    script.add(record("suggestion-select"), suggestionId=1, partial=False)
    script.add(record("suggestion-close", "api"), suggestionId=1, closeReason="accept")
    start = script.end
    script.edit(start, insert=GHOST, source="api", suggestionId=1, partial=False,
                span={"index": start, "length": len(GHOST)})  # fmt: skip
    typed = f" (call {PHONE})"
    script.edit(start + len(" My friend"), insert=typed)
    return script.modify(1, start, len(GHOST) + len(typed)).events


def build(key, tmp_path):
    """A release of a folder holding that one session."""
    source = tmp_path / "mindcopilot"
    (source / "sessions").mkdir(parents=True)
    events = a_session_with_a_phone_in_its_extension()
    (source / "sessions" / "s1.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (source / "metadata.csv").write_text("session_id,worker_id\ns1,A2GHOSTWRITER01\n")
    return build_release(source, version="1.0.0", out=tmp_path / "out", key_path=key.path, processes=1)


def test_the_text_of_a_proactive_sessions_extension_is_redacted_and_the_log_still_validates(key, tmp_path):
    built = build(key, tmp_path)

    for file in built.directory.rglob("*"):
        if file.is_file():
            assert PHONE.encode() not in file.read_bytes(), file.name
    (log,) = (built.directory / "sessions").glob("*.jsonl")
    released = read_session(log).events
    modified = next(e for e in released if e["eventName"] == "suggestion-modify")["proactive"]
    text = replay(released).text
    # The span's text as the writer left it, masked as the document is: the log still validates.
    assert modified["text"] == " My friend (call <PHONE_____>) moved."
    assert text[modified["span"]["index"] :].startswith(modified["text"])
    assert not [i for i in validate_events(released, "s1.jsonl").issues if i.severity == "error"]
    assert {r.where.split(".")[-1] for r in built.redactions if "proactive" in r.where} == {"rationale", "text"}


def test_verify_sees_a_phone_in_a_proactive_sessions_extension(key, tmp_path):
    built = build(key, tmp_path)
    (log,) = (built.directory / "sessions").glob("*.jsonl")
    # Someone puts the rationale back as the model wrote it, and recomputes the checksums.
    log.write_text(log.read_text().replace("<PHONE_____>; keep", f"{PHONE}; keep"))
    write_sums(built.directory)

    report = verify(built.directory, processes=1)

    (leak,) = [check for check in report.checks if check.name == "leak scan"]
    assert any("PHONE_NUMBER" in problem and "proactive.rationale" in problem for problem in leak.problems), leak.problems
