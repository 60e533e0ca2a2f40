"""`study release diff` says which arm changed and how, not only that arms.json did: a reader
comparing two versions must learn that an arm's temperature changed or a control arm was added
without opening both files (study.release.arms_diff)."""

from __future__ import annotations

from click.testing import CliRunner

from study.release.cli import release
from study.release.keys import init_keyfile
from tests.export.served_as_run import ARM, a_study, change_arm, serve_one

CONTROL = '\n[[conditions]]\nname = "control"\ngenre = "creative"\nparadigm = "none"\n'


def build(folder, key, out, version):
    args = ["build", str(folder), "--version", version, "--out", str(out), "--key", str(key.path), "-j", "1"]
    result = CliRunner().invoke(release, args)
    assert result.exit_code == 0, result.output
    return out / f"coauthor-{version}"


def test_release_diff_names_each_arm_that_changed_and_how(tmp_path, model_url):
    folder = a_study(tmp_path, model_url)
    key, out = init_keyfile(tmp_path / "study.key"), tmp_path / "releases"
    serve_one(folder, "A1FIRSTWRITER", asks=True)
    first = build(folder, key, out, "1.0.0")
    # Between the versions: ARM's temperature raised (its name kept), the unused creative-low
    # arm's lowered from 0.3, a control arm added, and a second writer in ARM.
    change_arm(folder, "temperature = 0.75", "temperature = 0.9")
    toml = folder / "study.toml"
    text = toml.read_text().replace("temperature = 0.3\n", "temperature = 0.5\n", 1)
    toml.write_text(text + CONTROL)
    serve_one(folder, "A2SECONDWRITER", asks=True)
    second = build(folder, key, out, "1.1.0")

    result = CliRunner().invoke(release, ["diff", str(first), str(second)])

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    (files,) = [line for line in lines if line.startswith("files changed: ")]
    assert "arms.json" in files
    assert "  arms.json: arm `creative-low`: temperature 0.3 -> 0.5" in lines
    assert "  arms.json: arm `control` added" in lines
    # ARM's first session ran at 0.75 and its second at 0.9: both are in the new arms.json.
    (changed,) = [line for line in lines if f"arm `{ARM}`:" in line]
    assert "temperature 0.75 -> 0.75; 0.9" in changed and "sessions 1 -> 2" in changed
    # Arms that did not change are not mentioned.
    assert not any("argumentative-low" in line for line in lines)

    as_json = CliRunner().invoke(release, ["diff", "--json", str(first), str(second)])
    assert "arm `control` added" in as_json.output
    # The new version's changelog says the same.
    changelog = (second / "CHANGELOG.md").read_text()
    assert "- Arms (`arms.json`): arm `creative-low`: temperature 0.3 -> 0.5." in changelog
