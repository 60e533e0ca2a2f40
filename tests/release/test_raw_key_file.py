"""A release key file of the wrong kind and size, e.g. 32 raw random bytes made with
`head -c 32 /dev/urandom` (a common way to make a key), is refused with the file's name and the
fix, by every command that reads a key, not with a UnicodeDecodeError traceback."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from study.cli import main
from study.release.keys import KeyFileError, load_key


def _raw_key(tmp_path):
    path = tmp_path / "raw.key"
    path.write_bytes(bytes(range(200, 232)))  # 32 bytes, not UTF-8
    os.chmod(path, 0o600)
    return path


def test_load_key_refuses_raw_bytes_with_the_fix(tmp_path):
    path = _raw_key(tmp_path)
    with pytest.raises(KeyFileError, match="study keys init") as error:
        load_key(path)
    assert str(path) in str(error.value)


@pytest.mark.parametrize("command", [["withdraw", "w-1"], ["release", "verify", "RELEASE"]])
def test_commands_reading_a_raw_key_say_so_without_a_traceback(tmp_path, command):
    path = _raw_key(tmp_path)
    (tmp_path / "RELEASE").mkdir()
    args = [str(tmp_path / "RELEASE") if a == "RELEASE" else a for a in command]
    result = CliRunner().invoke(main, [*args, "--key", str(path)])
    assert result.exit_code != 0
    assert not isinstance(result.exception, UnicodeDecodeError), repr(result.exception)
    assert "not a key made by `study keys init`" in result.output, result.output
