"""A study file saved in another encoding (Latin-1, UTF-16 from a Windows editor) is a user
mistake: `study status`, `serve`, `export`... say which file and line, and how to fix it,
instead of a UnicodeDecodeError traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from study.cli import main


def _append_latin1(path, text="Café\n"):
    with path.open("ab") as handle:
        handle.write(text.encode("latin-1"))


def _add_survey_file(folder, name):
    path = folder / "study.toml"
    path.write_text(path.read_text() + f'\n[[surveys]]\nname = "extra"\nfile = "{name}"\nplacement = "after_session"\n')


@pytest.mark.parametrize("name", ["study.toml", "consent.html", "instructions.html", "blocklist.txt", "extra-survey.toml"])
def test_a_study_file_that_is_not_utf8_is_named_with_its_line_and_the_fix(study_folder, name):
    if name == "extra-survey.toml":
        (study_folder / name).write_bytes('[[items]]\nid = "q"\ntype = "text"\ntext = "Caf\u00e9?"\n'.encode("latin-1"))
        _add_survey_file(study_folder, name)
    elif name == "study.toml":
        _append_latin1(study_folder / name, '# Café\n')
    else:
        _append_latin1(study_folder / name)
    result = CliRunner().invoke(main, ["status", str(study_folder)])
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, UnicodeDecodeError), repr(result.exception)
    assert "Traceback" not in result.output
    assert name in result.output
    assert "not UTF-8" in result.output and "line " in result.output
    assert "Fix: save" in result.output


def test_a_study_toml_saved_with_a_byte_order_mark_says_so_and_how_to_fix_it(study_folder):
    # Windows Notepad's "UTF-8 with BOM": TOML forbids the mark, and "Invalid statement at line 1,
    # column 1" points at a line that looks right.
    path = study_folder / "study.toml"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = CliRunner().invoke(main, ["status", str(study_folder)])
    assert result.exit_code == 1, result.output
    assert "study.toml" in result.output and "byte-order mark" in result.output
    assert "Fix: save it as UTF-8 without BOM" in result.output
