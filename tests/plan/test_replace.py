"""`study preregister` run again does not silently replace the record whose SHA-256 the
researcher may have deposited (OSF, AsPredicted): refused naming it, and with --replace the
earlier record is kept byte for byte beside the new one, which names it; verify, the report and
a release read the new one alone."""

from __future__ import annotations

import hashlib
import json

from click.testing import CliRunner

from study.cli import main
from study.plan import record
from tests.plan.conftest import edit


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_recording_again_is_refused_naming_the_record_and_the_fix(planned):
    assert run("preregister", planned).exit_code == 0
    before = (planned / "preregistration.json").read_bytes()
    signed = json.loads(before)
    result = run("preregister", planned)
    assert result.exit_code != 0
    assert (f"already holds a record, made {signed['recorded_at']} (SHA-256 {record.digest(signed)}). "
            "Nothing was written.") in result.output
    assert f"study preregister {planned} --replace" in result.output
    assert (planned / "preregistration.json").read_bytes() == before
    assert sorted(p.name for p in planned.glob("preregistration*")) == ["preregistration.json", "preregistration.key"]


def test_replacing_keeps_the_earlier_record_and_says_both_digests(planned):
    run("preregister", planned)
    first_bytes = (planned / "preregistration.json").read_bytes()
    first = json.loads(first_bytes)
    edit(planned, lambda data: data["plan"]["comparisons"][0].update(direction="two-sided"))
    result = run("preregister", planned, "--replace")
    assert result.exit_code == 0, result.output
    stamp = first["recorded_at"].replace("-", "").replace(":", "")
    kept = planned / f"preregistration.replaced-{stamp}.json"
    assert kept.read_bytes() == first_bytes  # the deposited digest still matches a file
    now = json.loads((planned / "preregistration.json").read_text())
    assert now["plan"]["comparisons"][0]["direction"] == "two-sided"
    assert now["replaces"] == {"recorded_at": first["recorded_at"], "sha256": record.digest(first)}
    assert f"Kept the earlier record, made {first['recorded_at']} (SHA-256 {record.digest(first)}), as {kept}" in result.output
    assert f"SHA-256 {record.digest(now)}" in result.output
    # The new record is the study's: it verifies, with no deviation.
    verified = run("preregister", "verify", planned)
    assert verified.exit_code == 0 and "No deviation from the record." in verified.output

    # Replaced again within the same second: the first kept file is never overwritten.
    second_bytes = (planned / "preregistration.json").read_bytes()
    now["recorded_at"] = first["recorded_at"]
    (planned / "preregistration.json").write_text(json.dumps(now))  # a record of the same time
    assert run("preregister", planned, "--replace").exit_code == 0
    assert kept.read_bytes() == first_bytes
    assert (planned / f"preregistration.replaced-{stamp}-2.json").read_text() == json.dumps(now)
    assert second_bytes != first_bytes


def test_an_unreadable_record_is_kept_too_and_named_by_the_digest_of_its_bytes(planned):
    (planned / "preregistration.json").write_text("{ half a record", encoding="utf-8")
    digest = hashlib.sha256(b"{ half a record").hexdigest()
    refused = run("preregister", planned)
    assert refused.exit_code != 0 and f"SHA-256 {digest}" in refused.output
    assert run("preregister", planned, "--replace").exit_code == 0
    assert [p.read_text() for p in planned.glob("preregistration.replaced-*.json")] == ["{ half a record"]


def test_the_report_names_the_record_s_digest_and_the_one_it_replaced(planned, tmp_path):
    # A reader who finds the earlier digest deposited (OSF) learns from the report that the
    # plan was recorded again before launch, and which digest the report's plan has.
    run("preregister", planned)
    first = json.loads((planned / "preregistration.json").read_text())
    edit(planned, lambda data: data["plan"]["comparisons"][0].update(direction="two-sided"))
    assert run("preregister", planned, "--replace").exit_code == 0
    now = json.loads((planned / "preregistration.json").read_text())
    out = tmp_path / "report.html"
    assert run("report", planned, "--out", out).exit_code == 0
    html = out.read_text()
    assert f"SHA-256 {record.digest(now)}" in html
    assert (f"This record replaces one made {first['recorded_at']} (SHA-256 {record.digest(first)}), "
            "recorded again before any participant started") in html
