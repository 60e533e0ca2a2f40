"""A session with a pasted image (a Quill embed) is released whole, and the release verifies."""

from __future__ import annotations

import csv

from study.curation.formats import read_session
from study.curation.replay import EMBED, replay
from study.release.build import build_release
from study.release.keys import load_key
from study.release.pseudonyms import released_session_id
from study.release.verify import verify
from tests.curation.pasted_image import image_embed, with_pasted_image
from tests.release.conftest import copy_source, write_session

PASTED = "ae1f2b6df9a74fe4b1eeec602bf6c3ae"  # argumentative, as the release's one
OTHER = "88daaed513824fbd9c77746eec7862d9"


def test_the_release_carries_the_image_and_verifies(key, tmp_path):
    source = copy_source(tmp_path / "coauthor", [PASTED, OTHER])
    path = source / "sessions" / f"{PASTED}.jsonl"
    embed = image_embed()
    events, line = with_pasted_image(read_session(path).events, embed)
    write_session(path, events)

    built = build_release(
        source, version="1.0.0", out=tmp_path / "out", key_path=key.path, processes=2
    )

    # Releases name sessions by fresh keyed ids (issue 10), never the source's.
    pasted = released_session_id(load_key(key.path), PASTED, "coauthor")
    released = read_session(built.directory / "sessions" / f"{pasted}.jsonl").events
    assert released[line]["textDelta"]["ops"][-1]["insert"] == embed  # byte for byte
    assert replay(released).text.count(EMBED) == 1
    with open(built.directory / "metadata.csv", newline="", encoding="utf-8") as handle:
        rows = {row["session_id"]: row for row in csv.DictReader(handle)}
    assert int(rows[pasted]["num_event"]) == len(events)
    with open(built.directory / "stats.csv", newline="", encoding="utf-8") as handle:
        assert pasted in {row["session_id"] for row in csv.DictReader(handle)}

    report = verify(built.directory, processes=2)
    assert report.ok, report.render()
