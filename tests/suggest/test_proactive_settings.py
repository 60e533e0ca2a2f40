"""study.toml: a condition's paradigm and the [proactive] table."""

from __future__ import annotations

import pytest

from study import config
from study.cli import write_study_files


def _load(tmp_path, old, new):
    folder = tmp_path / "study"
    write_study_files(folder, replacements={old: new})
    return config.load(folder)


def test_paradigm_and_proactive_settings_load(tmp_path):
    study = _load(tmp_path, 'name = "creative-low"\n', (
        'name = "creative-low"\nparadigm = "L3"\n'))
    assert study.condition("creative-low").paradigm == "L3"
    assert study.condition("creative-high").paradigm == "L0"
    assert study.proactive.idle_ms == 2000


def test_proactive_table_overrides_defaults_per_key(tmp_path):
    study = _load(tmp_path, "[texts]\n", (
        "[proactive]\nidle_ms = 2500\nstage_idle_ms = {early = 5000}\n\n[texts]\n"))
    assert study.proactive.idle_ms == 2500
    assert study.proactive.stage_idle_ms == {"early": 5000, "middle": 3000, "late": 2000}


def test_an_unknown_paradigm_is_refused_naming_the_key(tmp_path):
    with pytest.raises(config.ConfigError, match=r"conditions\[0\].paradigm"):
        _load(tmp_path, 'name = "creative-low"\n', 'name = "creative-low"\nparadigm = "L9"\n')
