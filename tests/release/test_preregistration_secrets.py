"""A release carries the preregistration record, which quotes study.toml. `[study] database` is
left out of the record because it may hold a password; so is any password in the model
endpoint's address (`http://user:password@proxy/v1`, which the toolkit's logs already hide)."""

from __future__ import annotations

from click.testing import CliRunner

from study.cli import main
from study.plan import record as plan_record
from tests.plan.conftest import PLAN, edit
from tests.release.test_contact import a_study, build, one_session

PASSWORD = "hunter2"
ENDPOINT = f"http://study:{PASSWORD}@llm-proxy:4000/v1"  # a proxy with basic auth (docker compose)


def test_the_endpoints_password_never_reaches_a_release_through_the_preregistration(tmp_path):
    folder = a_study(tmp_path, declared=True)

    def configure(data):
        data.update(plan=PLAN)
        data["suggestions"]["endpoint"] = ENDPOINT

    edit(folder, configure)
    assert CliRunner().invoke(main, ["preregister", str(folder)]).exit_code == 0
    one_session(folder, " The lighthouse keeper waited.")

    result, directory, _ = build(folder, tmp_path)

    assert result.exit_code == 0, result.output
    assert (directory / "preregistration.json").is_file()
    for path in directory.rglob("*"):
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path.name
    published = plan_record.load(directory / "preregistration.json")
    plan_record.verify(published)  # still signed, and still names where the model was
    assert published["configuration"]["suggestions"]["endpoint"] == "http://llm-proxy:4000/v1"
    # Verifying the plan against the study still finds no deviation in the configuration.
    verified = CliRunner().invoke(main, ["preregister", "verify", str(folder)])
    assert verified.exit_code == 0, verified.output


def test_a_study_whose_model_is_at_a_bare_address_is_released_with_its_preregistration(tmp_path):
    # study.toml's own example, a local `study lm serve`: the record quotes it, signed, so the
    # leak scan must not take the study's own server for a participant's IP address.
    folder = a_study(tmp_path, declared=True)

    def configure(data):
        data.update(plan=PLAN)
        data["suggestions"]["endpoint"] = "http://127.0.0.1:8001/v1"

    edit(folder, configure)
    assert CliRunner().invoke(main, ["preregister", str(folder)]).exit_code == 0
    one_session(folder, " The lighthouse keeper waited.")

    result, directory, _ = build(folder, tmp_path)

    assert result.exit_code == 0, result.output
    published = plan_record.load(directory / "preregistration.json")
    assert published["configuration"]["suggestions"]["endpoint"] == "http://127.0.0.1:8001/v1"
    verified = CliRunner().invoke(main, ["release", "verify", str(directory)])
    assert verified.exit_code == 0, verified.output


def test_an_address_a_writer_typed_is_still_caught_in_a_release(tmp_path):
    # Only a URL's host in the record's configuration passes; the same address in a session is
    # redacted, as before.
    folder = a_study(tmp_path, declared=True)
    one_session(folder, " My server is at 203.0.113.7 if you need it.")

    result, directory, _ = build(folder, tmp_path)

    assert result.exit_code == 0, result.output
    for path in directory.rglob("*.jsonl"):
        assert b"203.0.113.7" not in path.read_bytes(), path.name
