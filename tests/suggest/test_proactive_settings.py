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
    with pytest.raises(config.ConfigError, match=r"conditions\[0\] \('creative-low'\)\.paradigm"):
        _load(tmp_path, 'name = "creative-low"\n', 'name = "creative-low"\nparadigm = "L9"\n')


def test_a_unit_on_a_condition_without_the_tab_list_is_refused_with_the_fix(tmp_path):
    # Ghost text is cut by [proactive] unit: a condition's unit there would be ignored unsaid.
    with pytest.raises(config.ConfigError, match=r"conditions\[0\] \('creative-low'\)\.unit: paradigm \"L1\" shows "
                       r"ghost text.*Fix: remove unit \(ghost text is cut by \[proactive\] unit"):
        _load(tmp_path, 'name = "creative-low"\n', 'name = "creative-low"\nparadigm = "L1"\nunit = "paragraph"\n')
    panel = _load(tmp_path / "tab", 'name = "creative-low"\n', 'name = "creative-low"\nunit = "paragraph"\n')
    assert panel.condition("creative-low").unit == "paragraph"  # L0 is the Tab list by default


def test_l3_stage_cuts_out_of_order_are_refused_naming_the_key_and_the_order(tmp_path):
    # [0.67, 0.33] leaves no middle stage: every L3 writer would go from early straight to late.
    with pytest.raises(config.ConfigError, match=r"proactive\.stage_cuts: \[0\.67, 0\.33\] is out of order.*\[0\.33, 0\.67\]"):
        _load(tmp_path, "[texts]\n", "[proactive]\nstage_cuts = [0.67, 0.33]\n\n[texts]\n")
    assert _load(tmp_path / "equal", "[texts]\n", "[proactive]\nstage_cuts = [0.5, 0.5]\n\n[texts]\n").proactive.stage_cuts == (0.5, 0.5)
