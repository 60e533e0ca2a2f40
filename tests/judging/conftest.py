"""Fixtures of the judging tests: the MTurk fixtures (emulator, real boto3, the task server)."""

from tests.mturk.conftest import (  # noqa: F401
    _botocore_session, ctx, emulator, fake_aws, make_ctx, requester, study_folder, task_app,
)
