"""The preregistration record holds what every file study.toml names holds, as participants get
it: an intent reworded in the chat intent bank, a word added to the blocklist, a round's
instructions rewritten after the record are deviations naming the key and what changed, while a
record made before files were recorded still verifies as it did."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from study.cli import main, write_study_files
from study.paradigms.chat.config import SHIPPED_INTENTS
from study.plan import record as record_module
from tests.conftest import CONTACT
from tests.plan.conftest import PLAN, edit


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def deviations(folder) -> list[str]:
    result = run("preregister", "verify", folder)
    assert result.exit_code == 0, result.output
    return [line for line in result.output.splitlines() if line.startswith("DEVIATION")]


def test_an_intent_reworded_in_the_chat_intent_bank_after_the_record_is_named_by_its_key(tmp_path):
    folder = tmp_path / "chat-study"
    write_study_files(folder, paradigm="chat", replacements=CONTACT)
    shutil.copytree(SHIPPED_INTENTS, folder / "intents")
    plan = {**PLAN, "comparisons": [{**PLAN["comparisons"][0], "treatment": "collabllm", "control": "base"}]}

    def use_own_bank(data):
        data["chat"]["intent_bank"] = "intents"
        data["plan"] = plan

    edit(folder, use_own_bank)
    assert run("preregister", folder).exit_code == 0
    bank = folder / "intents" / "creative_writing.toml"
    text = bank.read_text(encoding="utf-8")
    # Only a comment: what participants are offered is the same, so nothing deviates.
    bank.write_text("# edited after the record\n" + text, encoding="utf-8")
    assert deviations(folder) == []
    bank.write_text(text.replace('title = "Space Western"', 'title = "Space Opera"'), encoding="utf-8")
    assert deviations(folder) == [
        'DEVIATION (setting) chat.intent_bank[creative_writing/0].title: "Space Western" -> "Space Opera"'
    ]


def test_a_word_added_to_the_blocklist_after_the_record_is_named(planned):
    (planned / "blocklist.txt").write_text("# words the model may not suggest\nheck\ndarn\n", encoding="utf-8")
    edit(planned, lambda data: data["suggestions"].update(blocklist_file="blocklist.txt"))
    assert run("preregister", planned).exit_code == 0
    record = json.loads((planned / "preregistration.json").read_text())
    assert record["files"]["suggestions.blocklist_file"]["content"] == ["darn", "heck"]
    (planned / "blocklist.txt").write_text("heck\ndarn\ngosh\n", encoding="utf-8")
    found = deviations(planned)
    assert len(found) == 1, found
    assert found[0].startswith('DEVIATION (setting) suggestions.blocklist_file: added "gosh" after the record (SHA-256 ')


def test_a_round_s_instructions_rewritten_after_the_record_name_the_line(planned):
    (planned / "qualify.html").write_text("<p>Write a story.</p>\n<p>Take your time.</p>\n", encoding="utf-8")
    edit(planned, lambda data: data.update(rounds=[{"name": "qual", "kind": "qualification",
                                                    "instructions": "qualify.html"}]))  # fmt: skip
    assert run("preregister", planned).exit_code == 0
    (planned / "qualify.html").write_text("<p>Write a story.</p>\n<p>Be quick.</p>\n", encoding="utf-8")
    found = deviations(planned)
    assert len(found) == 1, found
    assert found[0].startswith("DEVIATION (setting) rounds[qual].instructions: the text participants read "
                               "changed after the record (line(s) 2; SHA-256 ")  # fmt: skip


def test_a_record_made_before_files_were_recorded_still_verifies_as_before(planned):
    (planned / "blocklist.txt").write_text("heck\n", encoding="utf-8")
    edit(planned, lambda data: data["suggestions"].update(blocklist_file="blocklist.txt"))
    assert run("preregister", planned).exit_code == 0
    path = planned / "preregistration.json"
    signed = json.loads(path.read_text())
    older = {k: v for k, v in signed.items() if k not in ("signature", "files")}
    record_module.write(planned, record_module.sign(older, record_module.key(planned)))
    (planned / "blocklist.txt").write_text("heck\ngosh\n", encoding="utf-8")
    result = run("preregister", "verify", planned)
    assert result.exit_code == 0, result.output
    assert "Signature OK" in result.output and "No deviation from the record." in result.output
