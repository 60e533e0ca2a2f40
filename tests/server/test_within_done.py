"""A within-subjects participant who has written in every arm is owed nothing more: no page
offers them another session, and a request for one (an earlier part's link, a bookmark)
creates none and says they are done (study.server.within, study.server.participant.task)."""

from __future__ import annotations

from study import config
from study.cli import write_study_files
from study.server import create_app
from tests.conftest import CONTACT
from tests.server.flow import finish, start, to_writing
from tests.server.study_edits import dhillon_study, keep_prompts, serve_again, sessions_of, told_all_done, write_part



def test_back_after_the_last_arm_a_participant_is_told_so_and_no_session_is_made(tmp_path):
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    last = [write_part(client, "p1", first=part == 0) for part in range(3)][-1]
    page = client.get(f"/s/{last}/complete").get_data(as_text=True)
    assert "another=1" not in page and "You have written every part of this study." in page
    before = len(sessions_of(folder))

    back = client.get("/task?access_code=p1&another=1")

    assert back.status_code == 200
    assert "You have written in every part of this study." in back.get_data(as_text=True)
    assert len(sessions_of(folder)) == before  # nothing left at the prompt stage
    assert all(s["stage"] == "complete" for s in sessions_of(folder))
    # Without `another`, the participant's last session is shown again, as before.
    assert client.get("/task?access_code=p1").location.endswith(f"/s/{last}/complete")


def test_a_participant_part_way_through_still_gets_their_next_part(tmp_path):
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    write_part(client, "p1", first=True)
    nxt = client.get("/task?access_code=p1&another=1")
    assert nxt.status_code == 302 and "/consent" in nxt.location
    assert len(sessions_of(folder)) == 2


def _two_genre_within_study(tmp_path):
    """`study init`'s study (two arms per genre) with the arms assigned within subjects."""
    folder = tmp_path / "two-genres"
    write_study_files(folder, replacements={"min_seconds = 600": "min_seconds = 0", **CONTACT})
    toml = folder / config.CONFIG_NAME
    toml.write_text(toml.read_text(encoding="utf-8") + '\n[design]\nassignment = "within"\n', encoding="utf-8")
    return folder


def test_a_genre_whose_every_arm_is_written_is_not_offered_again(tmp_path):
    # After both creative arms the participant still owes the argumentative ones: the next
    # session's prompt page lists only argumentative prompts. A creative prompt would have no
    # arm left to give, and its session would stay at the prompt stage.
    folder = _two_genre_within_study(tmp_path)
    study = config.load(folder)
    client = create_app(study, suggestion_engine=object()).test_client()
    for part in range(2):
        session_id = start(client, access_code="p1", **({"another": "1"} if part else {}))
        to_writing(client, session_id, prompt=None if part else "shapeshifter")  # a prompt per arm
        finish(client, session_id)
    third = start(client, access_code="p1", another="1")
    client.post(f"/s/{third}/consent", data={"consent": "yes"})
    client.post(f"/s/{third}/instructions")
    page = client.get(f"/s/{third}/prompt").get_data(as_text=True)
    creative = {p.code for p in study.prompts if p.genre == "creative"}
    argumentative = {p.code for p in study.prompts if p.genre == "argumentative"}
    assert not any(f'value="{code}"' in page for code in creative)
    assert all(f'value="{code}"' in page for code in argumentative)
    refused = client.post(f"/s/{third}/prompt", data={"prompt": "mana"})
    assert refused.status_code == 200 and "/writing" not in (refused.location or "")

    to_writing(client, third, prompt="screen")
    finish(client, third)
    fourth = start(client, access_code="p1", another="1")
    to_writing(client, fourth, prompt="dating")
    finish(client, fourth)
    given = [s["condition"] for s in sessions_of(folder)]
    assert sorted(given) == sorted(c.name for c in study.conditions)  # every arm once
    back = client.get("/task?access_code=p1&another=1")
    assert back.status_code == 200 and "every part of this study" in back.get_data(as_text=True)


def test_each_arm_is_written_on_a_prompt_the_participant_has_not_written(tmp_path):
    # Dhillon et al. gave each condition a prompt of its own: a prompt written in two arms would
    # make the prompt part of the arms' comparison. The next part's page leaves it out.
    folder = dhillon_study(tmp_path)
    client = serve_again(folder)
    first = start(client, access_code="p1")
    to_writing(client, first, prompt="shapeshifter")
    finish(client, first)
    second = start(client, access_code="p1", another="1")
    client.post(f"/s/{second}/consent", data={"consent": "yes"})
    client.post(f"/s/{second}/instructions")

    page = client.get(f"/s/{second}/prompt").get_data(as_text=True)

    assert 'value="shapeshifter"' not in page and 'value="mana"' in page
    again = client.post(f"/s/{second}/prompt", data={"prompt": "shapeshifter"})
    assert "/writing" not in (again.location or "")
    to_writing_from_prompt = client.post(f"/s/{second}/prompt", data={"prompt": "mana"})
    assert to_writing_from_prompt.location.endswith(f"/s/{second}/writing")


def test_a_genre_with_fewer_prompts_than_arms_offers_its_prompts_again(tmp_path):
    # Two prompts and three arms: once both are written, the third arm is still written (on a
    # prompt already written) rather than the participant being left with nothing to choose.
    folder = dhillon_study(tmp_path)
    keep_prompts(folder, 2)
    client = serve_again(folder)

    parts = [write_part(client, "p1", first=part == 0) for part in range(3)]

    written = {s["session_id"]: s for s in sessions_of(folder)}
    assert len({written[s]["prompt_code"] for s in parts[:2]}) == 2  # a prompt of its own while any remain
    assert len({written[s]["condition"] for s in parts}) == 3  # and every arm written
    assert told_all_done(client, "p1")
