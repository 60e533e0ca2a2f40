"""The `study` command: every group is there, and a command imports only what it runs
(study.cli GROUPS: `study serve`, and its restart after a crash, start without the report's
plotting, MTurk's boto3 or judging's pandas)."""

from __future__ import annotations

import socket
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from study.cli import GROUPS, main

HEAVY = ("matplotlib", "boto3", "pandas")


def test_importing_the_command_loads_no_group_of_another_task():
    shown = subprocess.run(
        [sys.executable, "-c", f"import sys, study.cli; print(sorted(set({HEAVY!r}) & set(sys.modules)))"],
        capture_output=True, text=True, check=True,
    )
    assert shown.stdout.strip() == "[]"


@pytest.mark.parametrize("module", ["study.status", "study.report.cli", "study.mturk.cli", "study.prolific.cli",
                                    "study.backup", "study.plan.cli"])
def test_a_command_that_calls_no_model_loads_no_model_client(module):
    # The openai SDK costs about a second of CPU at every start (its types); `study status`,
    # `study report` and the platform commands read a model's URL at most.
    shown = subprocess.run(
        [sys.executable, "-c", f"import sys, {module}; print('openai' in sys.modules)"],
        capture_output=True, text=True, check=True,
    )
    assert shown.stdout.strip() == "False"


def test_help_lists_every_group_and_judging_keeps_its_mturk_commands():
    runner = CliRunner()
    listed = runner.invoke(main, ["--help"])
    assert listed.exit_code == 0, listed.output
    commands = {line.split()[0] for line in listed.output.split("Commands:")[1].splitlines() if line.strip()}
    assert commands == {*GROUPS, "init", "serve", "demo", "export", "chat"}

    judging = runner.invoke(main, ["judging", "--help"])
    assert judging.exit_code == 0, judging.output
    assert {"post", "review", "build", "export", "status"} <= {
        line.split()[0] for line in judging.output.split("Commands:")[1].splitlines() if line.strip()
    }


def test_a_mistyped_command_is_refused_and_the_nearest_group_suggested():
    # In a process of its own: here the other tests have imported every group already.
    refused = subprocess.run([sys.executable, "-m", "study", "curat"], capture_output=True, text=True)
    assert refused.returncode == 2
    assert "No such command 'curat'" in refused.stderr
    if hasattr(click.exceptions, "NoSuchCommand"):  # click 8.2 on suggests; 8.1 does not
        assert "'curate'" in refused.stderr.split("Did you mean", 1)[1]


def _refused_on_a_taken_port(*command: str) -> str:
    """`study COMMAND --port P` where another program listens on P (macOS's AirPlay Receiver
    takes 5000, say): refused in words naming the address and the flag, no traceback."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "study", *command, "--port", str(port)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert f"127.0.0.1:{port}" in result.stderr and "--port" in result.stderr
    return result.stdout


def test_serving_on_a_port_another_program_listens_on_names_the_port_and_the_fix(tmp_path):
    from study.cli import write_study_files
    from study.config_texts import CONSENT_CONTACT_PLACEHOLDER

    folder = tmp_path / "study"
    write_study_files(folder, replacements={CONSENT_CONTACT_PLACEHOLDER: "Dr. A. Researcher, a@example.org"})
    _refused_on_a_taken_port("serve", str(folder), "--workers", "1")


def test_a_demo_on_a_port_another_program_listens_on_names_the_port_and_the_fix(tmp_path):
    _refused_on_a_taken_port("demo", "--dir", str(tmp_path / "demo"), "--backend", "deterministic")


def test_the_reviewers_workspace_on_a_port_another_program_listens_on_names_the_port_and_the_fix(tmp_path):
    from study.cli import write_study_files

    folder = tmp_path / "study"
    write_study_files(folder)
    _refused_on_a_taken_port("review", str(folder))


def test_a_local_model_on_a_port_another_program_listens_on_is_refused_before_it_loads():
    # `study lm serve` beside a demo or another endpoint still running on 8001: said at once,
    # not as waitress's traceback after SmolLM2's 20 s load.
    stdout = _refused_on_a_taken_port("lm", "serve", "--backend", "smollm2")
    assert "loading SmolLM2" not in stdout


@pytest.mark.parametrize("command", [["lm", "serve", "--backend", "deterministic"],
                                     ["demo", "--backend", "deterministic"], ["review"]])
def test_a_port_past_65535_is_refused_rather_than_wrapped_round(tmp_path, command):
    # 80001 typed for 8001: the socket layer takes a port modulo 65536, so the command listened
    # on 14465 while it printed 80001, and a study pointed at :80001 found no model there.
    from study.cli import write_study_files

    folder = tmp_path / "study"
    write_study_files(folder)
    where = {"demo": ["--dir", str(tmp_path / "demo")], "review": [str(folder)]}.get(command[0], [])
    try:
        result = subprocess.run([sys.executable, "-m", "study", *command, *where, "--port", "80001"],
                                capture_output=True, text=True, timeout=60)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("served on a port it was not given")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "80001" in result.stderr and "65535" in result.stderr


@pytest.mark.parametrize("platform", ["mturk", "prolific"])
def test_an_emulator_on_a_port_another_program_listens_on_names_the_port_and_the_fix(tmp_path, platform):
    _refused_on_a_taken_port(platform, "emulate", "--state", str(tmp_path / "state.json"))


def test_init_refuses_a_design_with_a_paradigm_whose_conditions_it_would_replace(tmp_path):
    """--design writes the design's arms in place of study.toml's conditions: MindCopilot's
    L1 conditions asked for with --paradigm L1 would be silently dropped."""
    result = CliRunner().invoke(main, ["init", str(tmp_path / "s"), "--design", "dhillon", "--paradigm", "L1"])
    assert result.exit_code == 1, result.output
    assert "leave out --paradigm L1" in result.output
    assert not (tmp_path / "s" / "study.toml").exists()


def test_a_demo_of_a_design_with_a_paradigm_is_refused_before_it_makes_a_folder(tmp_path):
    import socket

    with socket.socket() as probe:  # a free port, should the refusal not come
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = subprocess.run(
        [sys.executable, "-m", "study", "demo", "--design", "jakesch", "--paradigm", "proactive",
         "--backend", "deterministic", "--port", str(port)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "leave out --paradigm proactive" in result.stderr
    assert list(tmp_path.iterdir()) == []  # no demo folder holding the design, for the next demo to trip on


@pytest.mark.parametrize("paradigm", ["writing", "chat"])
def test_init_names_the_step_study_serve_needs_before_it_serves_the_study(tmp_path, paradigm):
    # init printed "Serve it with: study serve DIR", and that command refused the new folder:
    # its consent page still holds the placeholder for the protocol director's contact.
    from study.config_texts import CONSENT_CONTACT_PLACEHOLDER

    folder = tmp_path / "s"
    made = CliRunner().invoke(main, ["init", str(folder), "--paradigm", paradigm])
    assert made.exit_code == 0, made.output
    assert CONSENT_CONTACT_PLACEHOLDER in (folder / "consent.html").read_text(encoding="utf-8")
    said = " ".join(made.output.split())
    assert f"study demo --dir {folder}" in said
    assert f"{folder / 'consent.html'}" in said and "protocol director" in said
    assert said.index("consent.html") < said.index(f"study serve {folder}")


def test_init_of_a_within_subjects_design_does_not_describe_the_papers_four_balanced_conditions(tmp_path):
    # Above dhillon's three arms, assigned within subjects, study.toml said "The paper's four
    # conditions ... A new session gets the least-used condition", which misleads its editor.
    result = CliRunner().invoke(main, ["init", str(tmp_path / "s"), "--design", "dhillon"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "s" / "study.toml").read_text(encoding="utf-8")

    assert "The paper's four conditions" not in text and "least-used condition" not in text
    assert "# study init --design dhillon: within subjects" in text
    plain = CliRunner().invoke(main, ["init", str(tmp_path / "coauthor")])
    assert plain.exit_code == 0 and "The paper's four conditions" in (tmp_path / "coauthor" / "study.toml").read_text()


def test_a_missing_access_codes_file_is_named_with_its_fix_not_a_traceback(tmp_path):
    # The file is read only when the server's limits are built, past load_study: `study serve`
    # and `study release build` printed the ConfigError's message at the end of a traceback.
    from study.cli import write_study_files
    from study.config_texts import CONSENT_CONTACT_PLACEHOLDER

    folder = tmp_path / "study"
    write_study_files(folder, replacements={
        CONSENT_CONTACT_PLACEHOLDER: "Dr. A. Researcher, a@example.org",
        'prompt_selection = "choose"': 'prompt_selection = "choose"\naccess_codes_file = "codes.txt"',
    })  # fmt: skip
    with socket.socket() as probe:  # a free port: a taken one is refused before the file is read
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    served = subprocess.run(
        [sys.executable, "-m", "study", "serve", str(folder), "--workers", "1", "--port", str(port)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert served.returncode == 1, served.stdout + served.stderr
    assert "Traceback" not in served.stderr, served.stderr
    said = " ".join(served.stderr.split())
    assert said.startswith("Error: ") and "session.access_codes_file" in said
    assert "Fix: create it with one access code per line" in said
