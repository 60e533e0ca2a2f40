"""The task URL a HIT opens, as `study mturk post` checks it before anything is sent: a dry
run's address on this machine is refused on MTurk itself, where it is each worker's own
computer (whoever accepted would find no study and go unpaid)."""

from __future__ import annotations

import pytest

SANDBOX_AS_AWS_EXAMPLES_NAME_IT = ("--endpoint-url", "https://mturk-requester-sandbox.us-east-1.amazonaws.com")


@pytest.mark.parametrize("where", [("--live",), ("--sandbox",), SANDBOX_AS_AWS_EXAMPLES_NAME_IT])
@pytest.mark.parametrize("address", ["https://127.0.0.1:5000/task", "https://localhost/task"])
def test_a_dry_runs_task_url_is_refused_on_mturk_itself(cli, study_folder, where, address):
    result = cli("post", str(study_folder), "--task-url", address, where=where)

    assert result.exit_code == 1
    assert f"The task URL '{address}' is on this machine (a dry run's address)" in result.output
    assert "Fix: pass --task-url (or set task_url in [mturk]) to the https address" in result.output

