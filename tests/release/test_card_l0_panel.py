"""A release of MindCopilot's L0 run as the assistant panel ([proactive] l0 = "assistant")
describes the panel's arm by what study.toml sets for the panel (`assistant_max_tokens`,
`system_prompt_l0`, study.paradigms.proactive.release), so its card does not tell a reader that
the condition's settings changed during the study when nothing changed."""

from __future__ import annotations

import json

from click.testing import CliRunner

from study.cli import main
from study.release.keys import init_keyfile
from tests.simulate.conftest import pilot, suggestion_model  # noqa: F401 - a fixture
from tests.simulate.test_simulate_l0_panel import PanelWriterBackend, _study

CONTACT = "Prof. Ada Lovelace, ada@cs.example.edu"


def test_an_l0_panel_arm_is_published_with_the_panels_settings_and_no_note_of_a_change(tmp_path, suggestion_model):
    folder = _study(tmp_path)  # the L1 arms the panel, L2 and L3 ghost text
    consent = folder / "consent.html"
    consent.write_text(consent.read_text().replace(
        "[REPLACE with the protocol director's name and how to reach them]", CONTACT))  # fmt: skip
    toml = folder / "study.toml"
    text = toml.read_text().replace('contact = ""', f'contact = "{CONTACT}"')
    for level in ("L2", "L3"):  # closed to new participants: the pilot's writer gets the panel
        text = text.replace(f'paradigm = "{level}"\nassign = true', f'paradigm = "{level}"\nassign = false')
    toml.write_text(text)
    result = pilot(folder, PanelWriterBackend(), writers=1, model="panel", suggestions=suggestion_model)
    assert result.exit_code == 0, result.output

    key = init_keyfile(tmp_path / "keys" / "study.key")
    out = tmp_path / "releases"
    result = CliRunner().invoke(main, ["release", "build", str(folder), "--version", "1.0.0", "--out", str(out),
                                       "--key", str(key.path), "--license", "cc-by-4.0", "-j", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    (release,) = [p for p in out.iterdir() if p.is_dir()]
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "now sets max tokens" not in card and "another system prompt" not in card, card
    ran = [arm for arm in json.loads((release / "arms.json").read_text())["arms"] if arm["sessions"]]
    assert ran and all(arm["paradigm"] == "L0" and arm["max_tokens"] == 400 for arm in ran), ran
    assert all(arm["system_prompt"].startswith("You are a writing assistant. The writer is working") for arm in ran)
