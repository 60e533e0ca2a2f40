"""A study touches only its own HITs: each gets an id at `study init`, and its HITs are found
by that id, never by a name two studies made from the same template share. And a HIT pays
what the consent page promises."""

from __future__ import annotations

import re
import tomllib

from click.testing import CliRunner

from study import config
from study.cli import main
from tests.mturk.conftest import TASK_URL, new_study, with_model
from tests.mturk.walk import take_hit


def _hit_id(result) -> str:
    assert result.exit_code == 0, result.output
    (hit_id,) = re.findall(r"^(3[A-Z0-9]{29})\s", result.stdout, flags=re.M)
    return hit_id


def test_study_init_gives_every_study_its_own_id(tmp_path):
    for name in ("first", "second"):
        result = CliRunner().invoke(main, ["init", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    first, second = (config.load(tmp_path / name) for name in ("first", "second"))
    assert first.name == second.name == "coauthor"
    assert re.fullmatch(r"[0-9a-f]{32}", first.id) and first.id != second.id
    written = tomllib.loads((tmp_path / "first" / "study.toml").read_text())
    assert written["study"]["id"] == first.id


def test_a_chat_study_gets_its_own_id_too(tmp_path):
    result = CliRunner().invoke(main, ["init", str(tmp_path / "chat"), "--paradigm", "chat"])
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"[0-9a-f]{32}", config.load(tmp_path / "chat").id)


def test_two_studies_from_one_template_never_see_each_others_hits(cli, tmp_path, emulator, model_url):
    first = new_study(tmp_path / "first", reward="2.50", budget="100.00")
    second = new_study(tmp_path / "second", reward="2.50", budget="100.00")
    theirs = _hit_id(cli("post", str(first), "--assignments", "2", "--task-url", TASK_URL))
    from study.server import create_app

    app = create_app(with_model(config.load(first), model_url))
    genuine = take_hit(emulator.url, app.test_client(), theirs, "A1GENUINE", ai_requests=2)
    ours = _hit_id(cli("post", str(second), "--task-url", TASK_URL))

    synced = cli("sync", str(second))
    assert synced.exit_code == 0 and "Found HIT" not in synced.stdout
    assert "Assignments: none." in synced.stdout
    listed = cli("list", str(second)).stdout
    assert ours in listed and theirs not in listed
    reviewed = cli("review", str(second), "--yes")
    assert "Nothing to review" in reviewed.stdout and genuine.assignment_id not in reviewed.stdout
    # The first study still reviews its own submission, and approves it.
    assert f"{genuine.assignment_id}: approved" in cli("review", str(first), "--yes").stdout


def test_a_study_toml_without_an_id_is_told_how_to_add_one(cli, tmp_path):
    folder = new_study(tmp_path / "old", reward="2.50")
    path = folder / "study.toml"
    path.write_text(re.sub(r'(?m)^id = "[0-9a-f]+"\n', "", path.read_text()))
    assert config.load(folder).id == ""  # the study itself still loads and serves
    result = cli("list", str(folder))
    assert result.exit_code == 1 and "[study] has no id" in result.output
    suggested = re.search(r'id = "([0-9a-f]{32})"', result.output).group(1)
    added = f'name = "coauthor"\nid = "{suggested}"\n'
    path.write_text(path.read_text().replace('name = "coauthor"\n', added))
    assert cli("list", str(folder)).exit_code == 0


def test_post_refuses_a_reward_other_than_the_promised_pay_unless_forced(cli, tmp_path, emulator):
    folder = new_study(tmp_path / "study", budget="100.00")  # the consent page says "$2.50"
    refused = cli("post", str(folder), "--reward", "0.40", "--task-url", TASK_URL)
    assert refused.exit_code == 1
    assert "'$2.50'" in refused.output and "$0.40" in refused.output and "--force" in refused.output
    assert emulator.state.data["hits"] == {}
    forced = cli("post", str(folder), "--reward", "0.40", "--task-url", TASK_URL, "--force")
    assert "Warning: The consent page promises" in forced.output
    assert _hit_id(forced) and len(emulator.state.data["hits"]) == 1
    assert cli("post", str(folder), "--reward", "2.50", "--task-url", TASK_URL).exit_code == 0


def test_pay_in_words_agrees_only_with_the_first_amount_it_names(cli, tmp_path, emulator):
    promised = "$2.50 plus a $1.00 bonus for the best stories"
    folder = new_study(tmp_path / "study", pay=promised, budget="100.00")
    refused = cli("post", str(folder), "--reward", "1.00", "--task-url", TASK_URL)
    assert refused.exit_code == 1 and emulator.state.data["hits"] == {}
    assert f"The consent page promises pay = '{promised}'" in refused.output
    assert "but the HIT would pay $1.00 per assignment" in refused.output
    assert cli("post", str(folder), "--reward", "2.50", "--task-url", TASK_URL).exit_code == 0


def test_two_studies_from_one_template_keep_their_own_exclusion(cli, tmp_path, emulator):
    folders = [
        new_study(tmp_path / name, reward="2.50", budget="100.00", once_per_worker=True)
        for name in ("first", "second")
    ]
    for folder in folders:
        _hit_id(cli("post", str(folder), "--task-url", TASK_URL))
    listed = [cli("qual", "list", str(folder)).stdout for folder in folders]
    exclusions = [
        re.search(r"^(\S+)  .*\[exclusion\]$", text, flags=re.M).group(1) for text in listed
    ]
    assert exclusions[0] != exclusions[1]
