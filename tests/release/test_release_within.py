"""A within-subjects study's release carries its design (within.json, schemas/within-release.schema.json):
each released session's participant pseudonym, arm and position in that participant's order,
each participant's arm list and Latin-square row, and the counts of released participants; so a
reader of the published data can analyse it paired and check the counterbalancing. `study
report` on the release shows the study folder's "Within-subjects design" section, and `study
release verify` refuses a within.json at odds with metadata.csv or with itself."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from click.testing import CliRunner

from study.cli import main, write_study_files
from study.lm.backends import DeterministicBackend
from study.lm.server import serve_in_thread
from study.release.checksums import sha256_file, write_sums
from study.release.keys import init_keyfile
from study.server.within import latin_square
from tests.conftest import CONTACT
from tests.report.conftest import Tables
from tests.server.study_edits import sessions_of

ARMS = ["no-ai", "next-sentence", "next-paragraph"]  # the dhillon design, in study.toml order


# One process runs this module's tests, so `piloted` (a simulated pilot and its release, 3-6 s) is built
# once per run rather than once in each test process (as in tests/release/test_build.py).
pytestmark = pytest.mark.xdist_group("within_release")


@pytest.fixture(scope="module")
def piloted(tmp_path_factory):
    """A dhillon study three simulated writers took part in, and its release 1.0.0."""
    tmp_path = tmp_path_factory.mktemp("within-release")
    folder = tmp_path / "dhillon"
    write_study_files(folder, design="dhillon", replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    base_url, stop = serve_in_thread(DeterministicBackend())
    try:
        result = CliRunner().invoke(main, ["simulate", str(folder), "--writers", "3", "--suggestions-endpoint", base_url])
    finally:
        stop()
    assert result.exit_code == 0, result.output
    (tmp_path / "keys").mkdir()
    key = init_keyfile(tmp_path / "keys" / "study.key")
    out = tmp_path / "releases"
    built = CliRunner().invoke(main, ["release", "build", str(folder), "--version", "1.0.0",
                                      "--out", str(out), "--key", str(key.path), "-j", "1"])  # fmt: skip
    assert built.exit_code == 0, built.output
    return folder, out / "dhillon-1.0.0", tmp_path



def test_each_released_session_names_its_participant_arm_and_position_and_their_row(piloted):
    folder, release, _ = piloted
    design = json.loads((release / "within.json").read_text(encoding="utf-8"))
    metadata = {row["session_id"]: row for row in csv.DictReader((release / "metadata.csv").open(encoding="utf-8"))}

    assert design["assignment"] == "within" and design["counted"] == "released participants"
    assert design["arms"] == ARMS
    people = design["participants"]
    assert len(people) == 3
    # Three writers, the three rows of the square, each writer's order that row's.
    assert sorted(p["row"] for p in people) == [0, 1, 2]
    for person in people:
        assert person["arms"] == ARMS
        assert person["order"] == [ARMS[i] for i in latin_square(3)[person["row"]]]
        # Their sessions, by position, follow their order; metadata.csv agrees on writer and arm.
        assert [s["position"] for s in person["sessions"]] == [1, 2, 3]
        assert [s["condition"] for s in person["sessions"]] == person["order"]
        for session in person["sessions"]:
            assert metadata[session["session_id"]]["worker_id"] == person["worker_id"]
            assert metadata[session["session_id"]]["condition"] == session["condition"]
    assert sorted(s["session_id"] for p in people for s in p["sessions"]) == sorted(metadata)

    # Nothing raw: no access code, worker id or study session id in the file.
    text = (release / "within.json").read_text(encoding="utf-8")
    for stored in sessions_of(folder):
        for value in (stored["access_code"], stored["worker_id"], stored["session_id"]):
            assert not value or value not in text


def test_the_package_and_the_card_say_the_design_and_count_released_participants(piloted):
    _, release, _ = piloted
    package = json.loads((release / "datapackage.json").read_text(encoding="utf-8"))
    design = package["study"]["design"]
    assert design["assignment"] == "within" and design["file"] == "within.json"
    assert design["counted"] == "released participants"
    assert design["participants"] == {"began": 3, "completed_every_arm": 3, "part_way": 0}
    assert [(entry["row"], entry["began"], entry["part_way"]) for entry in design["lists"]] == [(0, 1, 0), (1, 1, 0), (2, 1, 0)]
    (resource,) = [r for r in package["resources"] if r["path"] == "within.json"]
    assert "Latin-square row" in resource["description"]
    assert (release / "schemas" / "within-release.schema.json").is_file()

    card = (release / "README.md").read_text(encoding="utf-8")
    assert "**Arms were assigned within subjects:**" in card
    assert "| creative | no-ai, next-sentence, next-paragraph | 1 | next-sentence → next-paragraph → no-ai | 1 | 1 | 0 |" in card
    assert "- `within.json`: the within-subjects design" in card


def test_the_release_s_report_shows_the_study_folder_s_within_subjects_design(piloted):
    folder, release, tmp_path = piloted
    runner = CliRunner()
    tables = {}
    for name, source in (("study", folder), ("release", release)):
        out = tmp_path / f"{name}.html"
        result = runner.invoke(main, ["report", str(source), "--out", str(out)])
        assert result.exit_code == 0, result.output
        tables[name] = Tables(out.read_text(encoding="utf-8"))
    study, released = tables["study"].sections["within"], tables["release"].sections["within"]
    assert released[0] == study[0]  # lists and rows, began, completed every arm, part-way
    assert released[0][-1][4:] == ["3", "3", "0"]
    assert released == study  # the paired differences and positions: the same figures
    assert "From a release: its participants are the released ones" in tables["release"].texts["within"]


def test_a_release_s_report_refuses_a_within_json_not_of_its_schema_naming_the_field(piloted):
    _, release, tmp_path = piloted
    copy = tmp_path / "broken"
    shutil.copytree(release, copy)
    design = json.loads((copy / "within.json").read_text(encoding="utf-8"))
    design["participants"][1]["sessions"][0]["position"] = 0
    (copy / "within.json").write_text(json.dumps(design), encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(copy), "--out", str(tmp_path / "broken.html")])
    assert result.exit_code != 0
    assert "within.json: participants[1].sessions[0].position: 0 is less than the minimum of 1" in result.output


def _tampered(release, tmp_path, name: str, change) -> str:
    copy = tmp_path / name
    shutil.copytree(release, copy)
    design = json.loads((copy / "within.json").read_text(encoding="utf-8"))
    change(design)
    (copy / "within.json").write_text(json.dumps(design, indent=2) + "\n", encoding="utf-8")
    write_sums(copy)  # as one who edits the file would: the checksums must not be what catches it
    result = CliRunner().invoke(main, ["release", "verify", str(copy)])
    assert result.exit_code != 0, result.output
    return result.output


def test_verify_passes_the_release_and_names_what_is_at_odds_in_within_json(piloted):
    _, release, tmp_path = piloted
    result = CliRunner().invoke(main, ["release", "verify", str(release)])
    assert result.exit_code == 0, result.output
    assert "ok   within-subjects design (within.json)" in result.output

    def swap_arms(design):
        first, second = design["participants"][0]["sessions"][:2]
        first["condition"], second["condition"] = second["condition"], first["condition"]

    output = _tampered(release, tmp_path, "swapped", swap_arms)
    assert "FAIL within-subjects design (within.json)" in output
    assert "participants[0].sessions[0]: metadata.csv gives session" in output

    def wrong_row(design):
        design["participants"][0]["row"] = (design["participants"][0]["row"] + 1) % 3

    output = _tampered(release, tmp_path, "row", wrong_row)
    assert "participants[0]: order is not row" in output
    assert "lists do not count its participants" in output

    def raw_code(design):
        design["participants"][0]["worker_id"] = "lab-writer-1"

    output = _tampered(release, tmp_path, "raw", raw_code)
    assert "within.json: participants[0].worker_id: 'lab-writer-1' does not match" in output


def test_verify_passes_a_within_json_built_before_squares_were_named(piloted):
    # A release built by a version that wrote no `square`: its rows are of the square of that
    # version (the cyclic one for three arms, whose rows 0-2 are Williams' first three).
    _, release, tmp_path = piloted
    copy = tmp_path / "unnamed"
    shutil.copytree(release, copy)
    design = json.loads((copy / "within.json").read_text(encoding="utf-8"))
    assert {p["square"] for p in design["participants"]} == {e["square"] for e in design["lists"]} == {"williams"}
    for entry in (*design["participants"], *design["lists"]):
        del entry["square"]
    (copy / "within.json").write_text(json.dumps(design, indent=2) + "\n", encoding="utf-8")
    package = json.loads((copy / "datapackage.json").read_text(encoding="utf-8"))
    for entry in package["study"]["design"]["lists"]:
        del entry["square"]
    (resource,) = [r for r in package["resources"] if r["path"] == "within.json"]
    resource.update(bytes=(copy / "within.json").stat().st_size, hash="sha256:" + sha256_file(copy / "within.json"))
    (copy / "datapackage.json").write_text(json.dumps(package, indent=2) + "\n", encoding="utf-8")
    write_sums(copy)
    result = CliRunner().invoke(main, ["release", "verify", str(copy)])
    assert result.exit_code == 0, result.output

    def beyond(design):
        for entry in (*design["participants"], *design["lists"]):
            del entry["square"]  # three arms, cyclic: rows 0-2 only
        design["participants"][0]["row"] = 4

    output = _tampered(release, tmp_path, "beyond", beyond)
    assert "participants[0]: row 4, but the cyclic square over its 3 arms has rows 0 to 2" in output


def test_a_between_subjects_release_carries_no_design_file(tmp_path):
    from tests.release.test_contact import a_study, build, one_session

    folder = a_study(tmp_path, declared=True)
    one_session(folder, " A story.")
    result, directory, _ = build(folder, tmp_path)
    assert result.exit_code == 0, result.output
    assert not (directory / "within.json").exists()
    assert not (directory / "schemas" / "within-release.schema.json").exists()
    assert "design" not in json.loads((directory / "datapackage.json").read_text(encoding="utf-8"))["study"]


def test_counts_are_of_released_participants_and_a_left_out_session_leaves_its_writer_part_way(tmp_path):
    # Writer 4 withdraws: not a released participant, not counted (the study's report counts 4).
    from tests.server.study_edits import dhillon_study, serve_again, write_part

    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    whole = [write_part(client, "lab-writer-1", first=first) for first in (True, False, False)]
    for first in (True, False, False):
        write_part(client, "lab-writer-2", first=first)
    write_part(client, "lab-writer-3", first=True)  # stops after one of three arms
    for first in (True, False):
        write_part(client, "lab-writer-4", first=first)  # then withdraws
    client.application.extensions["study.engine"].dispose()
    key = init_keyfile(tmp_path / "study.key")
    assert CliRunner().invoke(main, ["withdraw", "lab-writer-4", "--key", str(key.path)]).exit_code == 0
    # The curator leaves out writer 1's second session (say its log does not replay).
    built = CliRunner().invoke(main, ["release", "build", str(folder), "--version", "1.0.0", "--out",
                                      str(tmp_path / "releases"), "--key", str(key.path), "-j", "1",
                                      "--exclude", whole[1]])  # fmt: skip
    assert built.exit_code == 0, built.output
    release = tmp_path / "releases" / "dhillon-1.0.0"
    design = json.loads((release / "within.json").read_text(encoding="utf-8"))

    first = design["participants"][0]
    assert first["row"] == 0
    # Positions are in the writer's own order: the left-out second session leaves a gap.
    assert [s["position"] for s in first["sessions"]] == [1, 3]
    assert [s["condition"] for s in first["sessions"]] == [first["order"][0], first["order"][2]]
    assert [(e["row"], e["began"], e["completed_every_arm"], e["part_way"]) for e in design["lists"]] == [
        (0, 1, 0, 1), (1, 1, 1, 0), (2, 1, 0, 1)]
    package = json.loads((release / "datapackage.json").read_text(encoding="utf-8"))
    assert package["study"]["design"]["participants"] == {"began": 3, "completed_every_arm": 1, "part_way": 2}
    assert "lab-writer" not in (release / "within.json").read_text(encoding="utf-8")
    assert CliRunner().invoke(main, ["release", "verify", str(release)]).exit_code == 0


def test_the_build_reads_the_design_once_in_the_read_of_the_model_calls(tmp_path):
    """within.json's design comes from the read that gives metadata.csv's and arms.json's model
    calls (study.release.source), not from study.db opened again later in the build: a session
    finished or withdrawn between two reads would have within.json describe another database
    than metadata.csv."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from tests.server.study_edits import dhillon_study, serve_again, write_part

    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    for writer in ("lab-writer-1", "lab-writer-2"):
        for first in (True, False, False):
            write_part(client, writer, first=first)
    client.application.extensions["study.engine"].dispose()
    key = init_keyfile(tmp_path / "study.key")
    reads = []  # (what, the SQLite connection it ran on), in the order run; "end": a transaction's

    def note(connection, cursor, statement, parameters, context, executemany):
        if not statement.lstrip().upper().startswith("SELECT"):
            return
        if "suggestion_requests.parameters" in statement:
            reads.append(("calls", cursor.connection))
        elif "sessions.within_order" in statement and "WHERE sessions.condition IS NOT NULL" in statement:
            reads.append(("design", cursor.connection))  # study.export.within_design.read

    def ended(connection):
        reads.append(("end", connection.connection.dbapi_connection))

    hooks = (("before_cursor_execute", note), ("commit", ended), ("rollback", ended))
    for name, hook in hooks:
        event.listen(Engine, name, hook)
    try:
        built = CliRunner().invoke(main, ["release", "build", str(folder), "--version", "1.0.0", "--out",
                                          str(tmp_path / "releases"), "--key", str(key.path), "-j", "1"])  # fmt: skip
    finally:
        for name, hook in hooks:
            event.remove(Engine, name, hook)
    assert built.exit_code == 0, built.output

    assert [what for what, _ in reads if what != "end"] == ["calls", "design"], reads
    (calls, design) = [index for index, (what, _) in enumerate(reads) if what != "end"]
    database = reads[calls][1]
    assert reads[design][1] is database  # the same connection to study.db ...
    assert not any(what == "end" and c is database for what, c in reads[calls:design])  # ... in one transaction
    document = json.loads((tmp_path / "releases" / "dhillon-1.0.0" / "within.json").read_text(encoding="utf-8"))
    assert [len(person["sessions"]) for person in document["participants"]] == [3, 3]
