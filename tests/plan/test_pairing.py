"""How a planned comparison takes its two arms (study.plan.comparisons.pairing): the design the
record fixed decides, paired by writer within subjects and independent groups between them,
not how many writers stopped part-way; only a design nobody recorded is inferred from the data."""

from __future__ import annotations

import math

from study.plan import comparisons
from study.plan import record as record_module


def _sessions(rows):
    """(session, arm, writer, value) rows -> the values, arms and writers `estimate` takes."""
    return ({s: v for s, _, _, v in rows}, {s: a for s, a, _, _ in rows}, {s: w for s, _, w, _ in rows})


# Within subjects, three writers wrote in both arms and four stopped after their first: most of
# the two arms' writers are in one of them only. Each writer's own level differs; the arm adds 10.
DROPOUTS = _sessions(
    [(f"t{i}", "assisted", f"w{i}", 100 * i + 10) for i in range(3)]
    + [(f"c{i}", "control", f"w{i}", 100 * i) for i in range(3)]
    + [("t3", "assisted", "w3", 900), ("t4", "assisted", "w4", 40)]
    + [("c5", "control", "w5", 700), ("c6", "control", "w6", 5)]
)
# Between subjects, a small pilot where three writers came back for the other arm, beside two who did not.
CAME_BACK = _sessions(
    [(f"t{i}", "assisted", f"w{i}", 100 * i + 10) for i in range(3)]
    + [(f"c{i}", "control", f"w{i}", 100 * i) for i in range(3)]
    + [("t3", "assisted", "v3", 500), ("c4", "control", "v4", 20)]
)


def test_within_subjects_is_paired_however_many_stopped_part_way():
    found = comparisons.estimate(*DROPOUTS, "assisted", "control", design="within")
    assert found.paired and not found.inferred
    assert (found.participants, found.one_arm_only) == (3, 4)
    assert (found.difference, found.low, found.high) == (10.0, 10.0, 10.0)  # writers' own levels cancel
    assert (found.n_treatment, found.n_control) == (5, 5)  # every session is still counted per arm


def test_within_subjects_with_fewer_than_three_writers_in_both_arms_has_no_interval():
    values, arm_of, writer_of = DROPOUTS
    two = {s: v for s, v in values.items() if writer_of[s] != "w2"}
    found = comparisons.estimate(two, arm_of, writer_of, "assisted", "control", design="within")
    assert found.paired and found.participants == 2 and found.difference == 10.0
    assert math.isnan(found.low) and math.isnan(found.high)
    # Nobody in both arms yet: still paired, over nobody, not two independent groups.
    alone = {s: v for s, v in values.items() if writer_of[s] in {"w3", "w4", "w5", "w6"}}
    nobody = comparisons.estimate(alone, arm_of, writer_of, "assisted", "control", design="within")
    assert nobody.paired and nobody.participants == 0 and nobody.one_arm_only == 4
    assert math.isnan(nobody.difference)


def test_between_subjects_is_independent_even_where_writers_came_back():
    found = comparisons.estimate(*CAME_BACK, "assisted", "control", design="between")
    assert not found.paired and not found.inferred and found.participants == 0
    assert found.difference == (110 + 210 + 500 + 10) / 4 - (0 + 100 + 200 + 20) / 4
    assert found == comparisons.difference([10, 110, 210, 500], [0, 100, 200, 20])


def test_a_design_nobody_recorded_is_inferred_from_how_many_wrote_in_both():
    dropouts = comparisons.estimate(*DROPOUTS, "assisted", "control")
    assert not dropouts.paired and dropouts.inferred  # 3 of 7 writers in both
    came_back = comparisons.estimate(*CAME_BACK, "assisted", "control")
    assert came_back.paired and came_back.inferred and came_back.participants == 3  # 3 of 5


def test_the_record_fixes_the_design_the_planned_comparisons_follow():
    assert record_module.assignment({"configuration": {"design": {"assignment": "within"}}}) == "within"
    assert record_module.assignment({"configuration": {"study": {"name": "s"}}}) == "between"  # study.toml's default
    assert record_module.assignment({"plan": {}}) is None  # no configuration recorded: inferred
