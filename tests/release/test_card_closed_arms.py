"""An arm closed to new participants (`assign = false`, tests/server/test_closed_arms.py) is
said to be closed in a release's arms.json and in the card's table of conditions, as study.toml
has it when the release is built: a reader comparing the arms' sizes must know that one stopped
taking writers."""

from __future__ import annotations

from tests.export.served_as_run import ARM, a_study, change_arm, serve_one
from tests.release.test_card_as_run import build, card_rows


def test_a_closed_arm_is_marked_closed_in_arms_json_and_the_cards_table(tmp_path, model_url):
    folder = a_study(tmp_path, model_url)
    serve_one(folder, "A1FIRSTWRITER", asks=True)
    # After the pilot the researcher closes the arm; its session stays in the study.
    change_arm(folder, "temperature = 0.75\n", "temperature = 0.75\nassign = false\n")

    card, arms = build(folder, tmp_path)

    closed = {a["name"]: a["closed"] for a in arms}
    assert closed == {"creative-low": False, ARM: True, "argumentative-low": False, "argumentative-high": False}
    (row,) = card_rows(card)[ARM]
    assert row["new participants"] == "closed" and row["sessions"] == "1"
    assert f"**Closed to new participants:** `{ARM}` (`assign = false` in `study.toml` when this release was built)" in card
