"""The report's comparison of arms (issue 27 item 2): each outcome per arm with its interval,
and each arm's difference from the control arm, independent between subjects and paired by
writer within subjects."""

from __future__ import annotations

from pathlib import Path

from study.report.data import Question, ReportData
from study.report.entities import EntityModel
from study.report.facts import SessionFacts
from study.report.intervals import bootstrap_difference, bootstrap_mean
from study.report.sections import arms


def _facts(session_id, condition, writer, words, *, assistant=True):
    return SessionFacts(session_id=session_id, condition=condition, prompt_code="p", genre="creative",
                        randomness="unknown", writer=writer, simulated=False, assistant=assistant,
                        stats={"final_words": words, "time": 10.0})  # fmt: skip


def _data(sessions, answers=None):
    data = ReportData("folder", Path("."), "t", sessions, EntityModel(None, "", "none"))
    data.questions = [Question("ownership", "I feel I own it", "scale")]
    data.answers = answers or {}
    return data


def _rows(html: str, heading: str) -> dict[str, list[str]]:
    part = html.split(heading)[1] if heading else html
    body = part.split("<tbody>")[1].split("</tbody>")[0]
    rows = {}
    for row in body.split("<tr>")[1:]:
        cells = [c.split("</td>")[0] for c in row.split("<td>")[1:]]
        rows[cells[0]] = cells
    return rows


def test_between_subjects_each_arm_and_its_difference_from_the_control():
    control = [_facts(f"c{i}", "control", f"w{i}", w, assistant=False) for i, w in enumerate([100, 110, 120, 130])]
    assisted = [_facts(f"a{i}", "assisted", f"v{i}", w) for i, w in enumerate([150, 160, 170, 180])]
    answers = {**{f"c{i}": {"ownership": "6"} for i in range(4)}, **{f"a{i}": {"ownership": "4"} for i in range(4)}}
    section = arms.build(_data(control + assisted, answers))
    html = "".join(section.parts)
    per_arm = _rows(html, "")
    assert per_arm["control"][1] == "4" and per_arm["control"][3].startswith("115.00 [")
    assert per_arm["assisted"][3].startswith("165.00 [")
    [row] = _rows(html, "Difference from the control arm").values()
    assert row[0] == "assisted - control" and row[1] == "independent"
    expected = bootstrap_difference([150, 160, 170, 180], [100, 110, 120, 130])
    assert row[3] == f"50.00 [{expected.low:.2f}, {expected.high:.2f}]"
    assert row[-1].startswith("-2.00")  # the survey's scale question, per arm too


def test_within_subjects_the_difference_is_each_writers_own():
    # Four writers, each in both arms; writers differ a lot, the arm adds exactly 10 words.
    sessions = []
    for i, base in enumerate([50, 200, 400, 800]):
        sessions.append(_facts(f"c{i}", "control", f"w{i}", base, assistant=False))
        sessions.append(_facts(f"a{i}", "assisted", f"w{i}", base + 10))
    html = "".join(arms.build(_data(sessions)).parts)
    [row] = _rows(html, "Difference from the control arm").values()
    assert row[1] == "paired"
    assert row[3] == "10.00 [10.00, 10.00]"  # writers' own levels cancel out


def test_a_writer_who_came_back_to_a_between_subjects_study_does_not_become_the_whole_difference():
    # Eight writers, one arm each, and one of them (an MTurk worker taking a second HIT) wrote
    # in both arms: the difference is still of the two groups, not of that writer alone.
    control = [_facts(f"c{i}", "control", f"w{i}", w, assistant=False) for i, w in enumerate([100, 110, 120, 130])]
    assisted = [_facts(f"a{i}", "assisted", f"v{i}", w) for i, w in enumerate([150, 160, 170, 180])]
    assisted.append(_facts("again", "assisted", "w0", 60))
    html = "".join(arms.build(_data(control + assisted)).parts)
    [row] = _rows(html, "Difference from the control arm").values()
    expected = bootstrap_difference([150, 160, 170, 180, 60], [100, 110, 120, 130])
    assert row[1] == "independent"
    assert row[3] == f"{expected.mean:.2f} [{expected.low:.2f}, {expected.high:.2f}]"


def test_within_subjects_a_writers_sessions_in_an_arm_are_averaged_not_the_last_kept():
    sessions = []
    for i, base in enumerate([50, 200, 400]):
        sessions.append(_facts(f"c{i}", "control", f"w{i}", base, assistant=False))
        sessions.append(_facts(f"a{i}", "assisted", f"w{i}", base + 10))
        sessions.append(_facts(f"b{i}", "assisted", f"w{i}", base + 30))  # a second prompt
    html = "".join(arms.build(_data(sessions)).parts)
    [row] = _rows(html, "Difference from the control arm").values()
    assert row[1] == "paired" and row[3] == "20.00 [20.00, 20.00]"
    assert "(their sessions in an arm averaged first), so it can differ from the difference of the arm means" in html


def test_one_arm_has_nothing_to_compare():
    assert arms.build(_data([_facts("c0", "control", "w0", 100, assistant=False)])) is None


def test_without_a_control_arm_there_are_means_and_no_differences():
    sessions = [_facts(f"a{i}", "tab", f"w{i}", 100) for i in range(3)] + [_facts(f"b{i}", "chat", f"v{i}", 90) for i in range(3)]
    html = "".join(arms.build(_data(sessions)).parts)
    assert "no control arm" in html and "Difference from the control arm" not in html


def test_the_same_comparison_has_one_interval_in_arms_compared_and_in_the_planned_comparisons():
    # A within-subjects study, writers listed in one order among the sessions and in another
    # among the shared writers: "Arms compared" and a planned comparison of the same two arms
    # printed intervals that differed by the resampling's noise (a seed of each and the values
    # resampled in the order they came), which a reviewer cannot tell from a mistake.
    from study.plan import comparisons

    gains = {"w3": 12, "w1": -4, "w4": 9, "w0": 1, "w2": 20, "w5": -7}
    sessions = []
    for i, (writer, gain) in enumerate(gains.items()):
        sessions.append(_facts(f"c{i}", "control", writer, 100 + 30 * i, assistant=False))
        sessions.append(_facts(f"a{i}", "assisted", writer, 100 + 30 * i + gain))
    html = "".join(arms.build(_data(sessions)).parts)
    [row] = _rows(html, "Difference from the control arm").values()
    values = {s.session_id: s.stats["final_words"] for s in sessions}
    planned = comparisons.estimate(values, {s.session_id: s.condition for s in sessions},
                                   {s.session_id: s.writer for s in sessions}, "assisted", "control")  # fmt: skip
    assert planned.participants == 6 and row[1] == "paired"
    assert row[3] == f"{planned.difference:.2f} [{planned.low:.2f}, {planned.high:.2f}]"


def test_an_interval_depends_on_the_values_not_on_the_order_they_are_listed_in():
    values = [3.0, 9.0, 4.0, 12.0, 5.0, 1.0, 8.0]
    forward, backward = bootstrap_mean(values), bootstrap_mean(values[::-1])
    assert (forward.low, forward.high) == (backward.low, backward.high)
    treated, control = [150, 170, 160, 190, 120], [100, 135, 110, 130]
    one, other = bootstrap_difference(treated, control), bootstrap_difference(treated[::-1], control[::-1])
    assert (one.low, one.high) == (other.low, other.high)


def test_intervals_over_few_sessions_say_they_are_too_narrow():
    # A percentile-bootstrap "95%" interval of the mean of 5 normal values holds it 83% of the
    # time: a pilot's intervals read as a study's would overstate what it found.
    def arms_of(per_arm: int) -> str:
        sessions = [_facts(f"c{i}", "control", f"w{i}", 100 + 7 * i, assistant=False) for i in range(per_arm)]
        sessions += [_facts(f"a{i}", "assisted", f"v{i}", 130 + 5 * i) for i in range(per_arm)]
        return "".join(arms.build(_data(sessions)).parts)

    assert "Few sessions: the smallest group with an interval here has 5. Over so few, a percentile-bootstrap " \
           "interval is too narrow" in arms_of(5)
    assert "Few sessions" not in arms_of(20)


def test_the_design_decides_paired_or_independent_and_an_unknown_one_is_said_to_be_inferred():
    # Three writers in both arms, four who stopped after one: most of the writers are in one arm.
    sessions = []
    for i, base in enumerate([50, 200, 400]):
        sessions.append(_facts(f"c{i}", "control", f"w{i}", base, assistant=False))
        sessions.append(_facts(f"a{i}", "assisted", f"w{i}", base + 10))
    sessions += [_facts("a3", "assisted", "w3", 900), _facts("a4", "assisted", "w4", 30),
                 _facts("c5", "control", "w5", 700, assistant=False), _facts("c6", "control", "w6", 5, assistant=False)]
    within = _data(sessions)
    within.design = "within"
    html = "".join(arms.build(within).parts)
    [row] = _rows(html, "Difference from the control arm").values()
    assert row[1] == "paired (4 in one arm only left out)" and row[3] == "10.00 [10.00, 10.00]"
    assert "inferred" not in html

    unknown = "".join(arms.build(_data(sessions)).parts)  # an export: no study.toml, no within.json
    [row] = _rows(unknown, "Difference from the control arm").values()
    assert row[1] == "independent"  # 3 of 7 writers in both
    assert "not known from this folder (no study.toml, no within.json), so it was inferred" in unknown

    # Between subjects, writers who came back to the other arm are not paired, however many.
    came_back = _data([s for s in sessions if s.writer in {"w0", "w1", "w2"}])
    came_back.design = "between"
    [row] = _rows("".join(arms.build(came_back).parts), "Difference from the control arm").values()
    expected = bootstrap_difference([60, 210, 410], [50, 200, 400])
    assert row[1] == "independent" and row[3] == f"10.00 [{expected.low:.2f}, {expected.high:.2f}]"
