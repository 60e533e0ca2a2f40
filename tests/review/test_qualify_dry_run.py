"""`study qualify --dry-run` before the real run: besides each submission's outcome, the money the
run would spend (the figure the real run then says) and the HITs it would leave for MTurk to pay
by itself, with the command that decides them, so the researcher can act before anything is paid."""

from __future__ import annotations

from tests.review.test_qualify import ctx, rated, run  # noqa: F401  (fixtures)

COST = "up to $6.00 ($5.00 to workers + $1.00 MTurk fees)"


def test_the_dry_run_says_what_the_run_would_pay_and_leave_to_mturk(ctx, rated, emulator, review_folder):  # noqa: F811
    folder = str(review_folder)
    dry = run(folder, "--endpoint-url", emulator.url, "--dry-run")
    assert f"Dry run: nothing paid, granted or emailed. The run would pay 2 HIT(s), {COST} (sandbox money)." in dry
    left = [rated[w].assignment_id for w in ("A1SPAMMER", "A1NEVERASKED")]
    assert "MTurk approves (pays) a submitted HIT by itself 72 hours after its submission, so 2 HIT(s)" in dry
    assert f"Fix: study mturk reject {folder} " in dry and all(a in dry for a in left)
    real = run(folder, "--endpoint-url", emulator.url)
    assert f"Paying the qualification HITs: {COST} (sandbox money)." in real
    again = run(folder, "--endpoint-url", emulator.url, "--dry-run")
    assert "The run would pay 0 HIT(s), up to $0.00" in again
