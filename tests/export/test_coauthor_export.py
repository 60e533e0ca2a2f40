"""`study export --format coauthor` writes the 2021 release format byte for byte.

The strongest check available: real released sessions are posted through the editor's event
API (in batches arriving out of order, with resends), exported, and compared with the released files.
"""

from __future__ import annotations

import csv
import json
import random

import pytest
from click.testing import CliRunner

from study.cli import main
from study.curation.formats import RELEASE_KEYS
from study.export.coauthor import release_timestamp
from study.store import writing
from study.store import sessions as session_store
from tests.conftest import COAUTHOR
from tests.server.flow import start, to_writing

METADATA = {row["session_id"]: row for row in csv.DictReader(open(COAUTHOR / "metadata.csv"))}
# Twelve sessions plus the edge cases: pasted formatting attributes, no queries at all.
FIXTURES = sorted(set(sorted(METADATA)[:12]) | {"11142ca391e749809df56da90091adb4", "7748d213f66743dd9abe45f23dacca99"})


def _condition_for(study, row):
    for condition in study.conditions_for(row["genre"]):
        if condition.controls()["currentTemperature"] == row["temperature"]:
            return condition.name
    raise AssertionError(row)


def _replay_through_api(client, app, study, session_id, finish=True):
    """Post a released session's events as the browser would; return the released lines."""
    row = METADATA[session_id]
    lines = (COAUTHOR / "sessions" / f"{session_id}.jsonl").read_text().splitlines()
    ours = start(client, access_code=f"w-{session_id[:8]}")
    to_writing(client, ours, prompt=row["prompt_code"])
    with writing(app.extensions["study.engine"]) as connection:
        session_store.update_session(connection, ours, condition=_condition_for(study, row))
    events = []
    for seq, line in enumerate(lines):
        record = json.loads(line)
        del record["eventNum"]
        events.append({"seq": seq, **record})
    batches = [events[i : i + 37] for i in range(0, len(events), 37)]
    # Out of order as two of the browser's requests in flight can arrive: about one batch in
    # three overtakes the one before it; the first three are resent at the end, as after a lost
    # acknowledgement.
    rng = random.Random(session_id)
    arriving = list(batches)
    for i in range(1, len(arriving)):
        if rng.random() < 1 / 3:
            arriving[i - 1], arriving[i] = arriving[i], arriving[i - 1]
    waiting = []
    for batch in arriving + batches[:3]:
        # A batch that cannot replay yet (it arrived before events it builds on) is refused
        # with 422 and, as the browser does, kept and sent again once an earlier one is stored.
        response = client.post(f"/api/sessions/{ours}/events", json={"events": batch})
        assert response.status_code in (200, 422), response.json
        if response.status_code == 422:
            waiting.append(batch)
            continue
        while waiting:
            response = client.post(f"/api/sessions/{ours}/events", json={"events": waiting[0]})
            assert response.status_code in (200, 422), response.json
            if response.status_code == 422:
                break
            waiting.pop(0)
    assert not waiting, "some batches were never accepted"
    if not finish:
        return ours, lines
    response = client.post(
        f"/s/{ours}/writing/finish", json={"last_seq": len(events) - 1, "text": "final"}
    )
    assert response.status_code == 200, response.json
    return ours, lines


def test_export_reproduces_released_sessions_byte_for_byte(client, app, study, study_folder, tmp_path):
    exported = {}
    for session_id in FIXTURES:
        ours, lines = _replay_through_api(client, app, study, session_id)
        exported[ours] = (session_id, lines)

    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["export", str(study_folder), "--format", "coauthor", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"Exported {len(FIXTURES)} sessions" in result.output

    for ours, (released_id, lines) in exported.items():
        written = (out / f"{ours}.jsonl").read_text()
        assert written == "\n".join(lines) + "\n", released_id

    with open(out / "metadata.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == [
        "timestamp", "worker_id", "session_id", "prompt_code", "temperature", "frequency_penalty",
        "num_query", "num_selected", "perc_selected", "num_cursor", "time", "num_event",
        "written_by_human", "genre", "simulated", "condition", "paradigm",
    ]  # fmt: skip
    for row in rows:
        released = METADATA[exported[row["session_id"]][0]]
        for column in list(row)[3:-3]:
            assert row[column] == released[column], (column, released["session_id"])
        assert row["simulated"] == "false"  # written by people, through the API
        assert row["paradigm"] == "L0" and row["condition"]  # the session's arm, by name


def test_export_skips_unfinished_sessions_unless_asked(client, study_folder, tmp_path):
    session_id = start(client)
    to_writing(client, session_id)
    from tests.server.flow import post_init

    post_init(client, session_id)
    runner = CliRunner()
    result = runner.invoke(main, ["export", str(study_folder), "--out", str(tmp_path / "a")])
    assert "Exported 0 sessions" in result.output
    result = runner.invoke(main, ["export", str(study_folder), "--out", str(tmp_path / "b"), "--all"])
    assert "Exported 1 sessions" in result.output
    record = json.loads((tmp_path / "b" / f"{session_id}.jsonl").read_text())
    assert tuple(record) == RELEASE_KEYS
    assert record["eventNum"] == 0


def test_exporting_again_without_all_leaves_no_unfinished_session_in_the_folder(client, study_folder, tmp_path):
    """`study export --all` into OUT, then `study export` into the same OUT (the folder to
    share): the unfinished writer's text must not stay beside the new metadata.csv, where the
    report, curation and a release would read it as part of the export."""
    from tests.server.flow import finish, post_init

    unfinished = start(client, access_code="still-writing")
    to_writing(client, unfinished)
    post_init(client, unfinished)
    done = start(client, access_code="done")
    to_writing(client, done)
    finish(client, done)
    out = tmp_path / "out"
    (out / "notes").mkdir(parents=True)
    (out / "notes" / "keep.jsonl").write_text("{}\n")  # not the export's: left alone
    runner = CliRunner()
    assert "Exported 2 sessions" in runner.invoke(main, ["export", str(study_folder), "--out", str(out), "--all"]).output

    result = runner.invoke(main, ["export", str(study_folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    assert "Exported 1 sessions" in result.output
    assert sorted(p.name for p in out.glob("*.jsonl")) == [f"{done}.jsonl"]
    assert (out / "notes" / "keep.jsonl").is_file()
    with open(out / "metadata.csv", newline="") as handle:
        assert [row["session_id"] for row in csv.DictReader(handle)] == [done]


@pytest.mark.parametrize(
    ("epoch", "expected"),
    [(1630035416.0, "8/26/2021 20:36:56"), (1609488000.0, "1/1/2021 0:00:00")],
)
def test_release_timestamps_are_us_pacific(epoch, expected):
    assert release_timestamp(epoch) == expected


def test_the_server_state_restores_what_a_browser_needs_to_carry_on(client, app, study):
    """A browser that lost its own copy gets the text, the persisting indices and the last list."""
    # Still writing: a finished session's state is no longer served.
    ours, lines = _replay_through_api(client, app, study, "d4b47a8a66b84e8ebdf986e6d4edf139", finish=False)
    records = [json.loads(line) for line in lines]
    last_open = [r for r in records if r["eventName"] == "suggestion-open"][-1]

    state = client.get(f"/api/sessions/{ours}/state").get_json()

    assert state["next_seq"] == state["stored"] == len(records)
    assert state["suggestion_index"] == records[-1]["currentSuggestionIndex"]
    assert state["hover_index"] == records[-1]["currentHoverIndex"] != ""
    assert state["last_suggestions"] == last_open["currentSuggestions"]
    assert state["doc"].startswith(records[0]["currentDoc"][:40])


def test_metadata_gives_each_session_the_settings_its_log_was_written_with(client, study_folder, tmp_path):
    """A researcher changes a condition's temperature between rounds, keeping its name: the
    sessions written before keep the settings their suggestions were made with, in metadata.csv
    (which `study report` and `study release build` read) as in their logs."""
    from tests.server.flow import finish

    before = start(client, access_code="round-1")
    to_writing(client, before, prompt="shapeshifter")
    finish(client, before)
    toml = study_folder / "study.toml"
    low = "temperature = 0.3\ntop_p = 1\npresence_penalty = 0\nfrequency_penalty = 0\n"
    assert low in toml.read_text()
    toml.write_text(toml.read_text().replace(low, low.replace("0.3", "0.9").replace("penalty = 0\n", "penalty = 0.5\n")))
    out = tmp_path / "out"

    result = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    with open(out / "metadata.csv", newline="") as handle:
        rows = {row["session_id"]: row for row in csv.DictReader(handle)}
    first = json.loads((out / f"{before}.jsonl").read_text().splitlines()[0])
    assert (first["currentTemperature"], first["currentFrequencyPenalty"]) == ("0.3", "0")
    assert (rows[before]["temperature"], rows[before]["frequency_penalty"]) == ("0.3", "0")
    assert rows[before]["condition"] == "creative-low"


def test_models_csv_names_the_model_each_session_asked_even_after_study_toml_changed_it(client, app, study_folder,
                                                                                    tmp_path):
    """A condition moved to another model between rounds, its name kept: the sessions before
    asked the old model, and models.csv says so (as study report's table of models does)."""
    from study.store.db import suggestion_requests
    from tests.server.flow import finish

    before = start(client, access_code="round-1")
    to_writing(client, before, prompt="shapeshifter")
    with writing(app.extensions["study.engine"]) as connection:
        condition = session_store.get(connection, before)["condition"]
        connection.execute(suggestion_requests.insert().values(
            session_id=before, created_at=0.0, condition=condition, model="davinci-002",
            parameters=json.dumps({"model": "davinci-002", "mode": "completion"}), raw="[]",
            suggestions="[]", latency_ms=800.0, error=None,
        ))  # fmt: skip
    finish(client, before)
    toml = study_folder / "study.toml"
    assert toml.read_text().count('model = "davinci-002"') == 4
    toml.write_text(toml.read_text().replace('model = "davinci-002"', 'model = "gpt-3.5-turbo-instruct"'))
    out = tmp_path / "out"

    result = CliRunner().invoke(main, ["export", str(study_folder), "--out", str(out)])

    assert result.exit_code == 0, result.output
    with open(out / "models.csv", newline="") as handle:
        (row,) = csv.DictReader(handle)
    assert (row["session_id"], row["model"], row["answered_model"]) == (before, "davinci-002", "davinci-002")
