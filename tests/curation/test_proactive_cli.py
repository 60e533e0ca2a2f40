"""`study curate proactive`, `proactive-simulate` and `ked-calibrate` from the command line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from study.cli import main as study_cli
from study.paths import templates_dir
from tests.curation.conftest import write_lines
from tests.curation.proactive_session import Script
from tests.curation.test_proactive_validate import scripted

COAUTHOR = Path("/work/shared/data/coauthor/sessions")


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _sessions(folder: Path) -> Path:
    folder.mkdir()
    write_lines(folder / "a1.jsonl", scripted().events)
    l3 = Script(paradigm="L3")
    l3.type(" The lab")
    l3.suggest(1, " kept the cells at 273 K.", stage="early")
    end = l3.end
    l3.edit(end - 5, insert="9", delete=1)  # 273 -> 293, inside the accepted span
    l3.modify(1, end - len(" kept the cells at 273 K."), len(" kept the cells at 293 K."))
    l3.suggest(2, " Then it rained.", "esc", stage="early")
    l3.type(" Results followed.")
    write_lines(folder / "b2.jsonl", l3.events)
    return folder


def test_metrics_per_suggestion_session_and_paradigm(tmp_path):
    sessions = _sessions(tmp_path / "logs")
    out = tmp_path / "out"
    result = CliRunner().invoke(study_cli, ["curate", "proactive", str(sessions), "--out", str(out), "--deterministic-judge"])
    assert result.exit_code == 0, result.output
    suggestions = _rows(out / "suggestions.csv")
    assert [(r["session_id"], r["outcome"]) for r in suggestions] == [
        ("a1", "accepted_modified"), ("a1", "rejected"), ("a1", "partial"), ("a1", "stale"),
        ("b2", "accepted_modified"), ("b2", "rejected")]
    unit = suggestions[4]
    assert unit["final_text"] == " kept the cells at 293 K." and unit["ked"] == "4.0"  # a complex entity
    assert unit["char_distance"] == "1" and unit["stage"] == "early"
    paradigms = {r["paradigm"]: r for r in _rows(out / "paradigms.csv")}
    assert float(paradigms["L1"]["acceptance_micro"]) == 200 / 3  # stale is not shown
    assert float(paradigms["L3"]["acceptance_macro"]) == 50.0
    assert _rows(out / "sessions.csv")[0]["window_switches"] == "1"
    assert "deterministic judge" in result.output  # the report says its numbers are not the paper's


def test_logs_without_proactive_sessions_are_a_clear_error(tmp_path):
    """CoAuthor logs (e.g. `study export` without --format proactive) have nothing to measure."""
    import shutil

    from tests.curation.conftest import SESSIONS

    shared = SESSIONS
    logs = tmp_path / "coauthor"
    logs.mkdir()
    for path in sorted(shared.glob("*.jsonl"))[:2]:
        shutil.copy(path, logs / path.name)
    result = CliRunner().invoke(study_cli, ["curate", "proactive", str(logs), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)  # no traceback
    assert "no proactive session" in result.output and "--format proactive" in result.output

def test_without_a_judge_the_offline_metrics_are_still_computed(tmp_path):
    sessions = _sessions(tmp_path / "logs")
    out = tmp_path / "out"
    result = CliRunner().invoke(study_cli, ["curate", "proactive", str(sessions), "--out", str(out)])
    assert result.exit_code == 0, result.output
    first = _rows(out / "suggestions.csv")[0]
    assert first["har"] == "" and first["ked"] == "" and first["word_distance"] == "1"


def test_the_simulation_runs_l1_and_l2_on_the_demo_queries(tmp_path):
    queries = templates_dir() / "proactive" / "queries-demo.jsonl"
    out = tmp_path / "sim"
    result = CliRunner().invoke(study_cli, ["curate", "proactive-simulate", str(queries), "--out", str(out), "--deterministic-judge"])
    assert result.exit_code == 0, result.output
    table = {r["level"]: r for r in _rows(out / "table4.csv")}
    assert set(table) == {"L1", "L2"}
    assert table["L1"]["overall_n"] == "12" and table["L1"]["scientific_n"] == "6"
    assert [r["bin"] for r in _rows(out / "figure4.csv")] == ["20", "40", "60", "80", "100"]
    per_query = _rows(out / "queries.csv")
    assert len(per_query) == 24 and all(r["suggestion"] for r in per_query)


def test_an_unreachable_model_endpoint_is_an_error_not_a_table_of_dashes(tmp_path):
    """Every continuation failing is a setup problem (wrong --model-endpoint), not a result."""
    queries = templates_dir() / "proactive" / "queries-demo.jsonl"
    out = tmp_path / "sim"
    result = CliRunner().invoke(study_cli, ["curate", "proactive-simulate", str(queries), "--out", str(out),
                                            "--model-endpoint", "http://127.0.0.1:1/v1", "--deterministic-judge"])  # fmt: skip
    assert result.exit_code == 1
    assert "every model call failed (24 of 24)" in result.output and "--model-endpoint" in result.output
    assert not (out / "table4.csv").exists()

def test_the_l2_simulation_sends_the_simulated_history(tmp_path):
    from study.paradigms.proactive.curation.continuation import Query, simulated_history
    from study.paradigms.proactive.context import snapshot

    first = Query("a", "D1", "scientific", "One. Two.", " Three.", 0.3)
    second = Query("a", "D1", "scientific", "One. Two. Three. Four.", " Five.", 0.6)
    items = simulated_history([(first, " Trees.", False)], second)
    assert snapshot(second.context, items) == "One. Two.<reject> Trees.</reject><add> Three. Four.</add>"


def test_a_bad_query_line_is_named(tmp_path):
    path = tmp_path / "q.jsonl"
    good = {"article": "a", "domain": "D1", "category": "scientific", "context": "x", "reference": "y", "progress": 0.5}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "category": "poetry"}) + "\n")
    result = CliRunner().invoke(study_cli, ["curate", "proactive-simulate", str(path), "--out", str(tmp_path / "o"), "--deterministic-judge"])
    assert result.exit_code != 0 and "line 2: category" in result.output


def test_ked_is_calibrated_against_coauthor_editing_durations(tmp_path):
    out = tmp_path / "cal"
    result = CliRunner().invoke(study_cli, ["curate", "ked-calibrate", str(COAUTHOR), "--out", str(out), "--deterministic-judge"])
    assert result.exit_code == 0, result.output
    assert "74 post-editing instances" in result.output
    weights = json.loads((out / "weights.json").read_text())
    assert all(w >= 0 for w in weights.values())
    assert len(_rows(out / "instances.csv")) == 74


def test_ked_calibrate_names_a_broken_session_file_without_a_traceback(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "cut.jsonl").write_text('{"eventName": "system-initialize"\n', encoding="utf-8")
    result = CliRunner().invoke(study_cli, ["curate", "ked-calibrate", str(logs), "--out", str(tmp_path / "cal"),
                                            "--deterministic-judge"])  # fmt: skip
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)  # no traceback
    assert "cut.jsonl line 1" in result.output


def test_a_ked_weights_file_with_a_non_number_is_named_without_a_traceback(tmp_path):
    sessions = _sessions(tmp_path / "logs")
    weights = tmp_path / "weights.json"
    weights.write_text('{"complex_entity": "heavy"}', encoding="utf-8")
    result = CliRunner().invoke(study_cli, ["curate", "proactive", str(sessions), "--out", str(tmp_path / "out"),
                                            "--weights", str(weights)])  # fmt: skip
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)  # no traceback
    assert "weights.json" in result.output and "complex_entity" in result.output
    weights.write_text('["complex_entity"]', encoding="utf-8")
    result = CliRunner().invoke(study_cli, ["curate", "proactive", str(sessions), "--out", str(tmp_path / "out"),
                                            "--weights", str(weights)])  # fmt: skip
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "weights.json" in result.output


def test_the_simulation_gives_table_11_per_domain_and_table_4_pools_its_counts(tmp_path):
    """MindCopilot Table 11: HAR and KED per domain; Table 4's Overall, Scientific and Creative
    are the domains' queries pooled, not the mean of their rates (spec A3.1 [D], C10). The demo
    queries with some references made to start as the model's suggestion (which the judge then
    accepts, rule 12) and one creative query left out: the domains' rates and sizes differ."""
    demo = [json.loads(line) for line in (templates_dir() / "proactive" / "queries-demo.jsonl").read_text().splitlines()]
    first = tmp_path / "first"
    result = CliRunner().invoke(study_cli, ["curate", "proactive-simulate", str(templates_dir() / "proactive" / "queries-demo.jsonl"),
                                            "--out", str(first), "--levels", "L1", "--deterministic-judge"])  # fmt: skip
    assert result.exit_code == 0, result.output
    suggestions = [q["suggestion"] for q in _rows(first / "queries.csv")]
    # D4: 1 of 3 accepted, D5: 2 of 3, D11: 0 of 3, D13: 2 of 2.
    for index in (0, 3, 4, 9, 10):
        demo[index]["reference"] = suggestions[index] + " And so the day went on."
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in demo[:11]), encoding="utf-8")
    out = tmp_path / "sim"
    result = CliRunner().invoke(study_cli, ["curate", "proactive-simulate", str(queries), "--out", str(out),
                                            "--levels", "L1", "--deterministic-judge"])  # fmt: skip
    assert result.exit_code == 0, result.output

    table11 = {r["domain"]: r for r in _rows(out / "table11.csv")}
    assert list(table11) == ["D4 Popular Science", "D5 Principle Analysis", "D11 Short Fiction", "D13 Travel"]
    assert [(r["accepted"], r["n"], r["har"]) for r in table11.values()] == [
        ("1", "3", "33.33"), ("2", "3", "66.67"), ("0", "3", "0.0"), ("2", "2", "100.0")]
    per_query = _rows(out / "queries.csv")
    for domain, row in table11.items():
        keds = [float(q["ked"]) for q in per_query if q["domain"] == domain and q["har"] == "True"]
        assert row["ked"] == (str(round(sum(keds) / len(keds), 2)) if keds else "nan"), domain  # accepted only
    assert float(table11["D4 Popular Science"]["ked"]) > 0
    (row,) = _rows(out / "table4.csv")
    # Pooled: 5 of 11, 3 of 6, 2 of 5; the mean of the domains' rates would be 50, 50 and 50.
    assert (row["overall_har"], row["scientific_har"], row["creative_har"]) == ("45.45", "50.0", "40.0")


def _kappa(pairs: list[tuple[bool, bool]]) -> float:
    """Cohen's kappa of two yes/no raters, from its 2 x 2 definition."""
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    yes_a, yes_b = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    expected = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
    return (observed - expected) / (1 - expected)


def test_har_alignment_gives_table_1s_alignment_and_kappa_per_layer_with_the_class_balance(tmp_path):
    """MindCopilot Table 1: the judge's verdicts against expert labels, as the percent of items
    they agree on and Cohen's kappa, per checklist layers (HAR_L1, HAR_L1+L2, HAR_Full)."""
    context = "The experiment ran at room temperature for three hours and"
    labelled = [  # (completion, reference, the expert's verdict)
        (" for three hours and the samples dried.", " the samples were dried.", False),  # rule 1 fires
        (" the samples were dried overnight.", " the samples were dried overnight.", True),  # rule 12
        (" giraffes enjoy tall acacia leaves.", " the samples were dried.", False),  # off topic: rule 14
        (" zebras graze on the open savanna.", " the samples were dried.", True),
        (" the samples were dried in the oven.", " the samples were dried in the oven.", False),
        (" for three hours and then it stopped.", " the cells were counted.", False),
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": f"x{n}", "context": context, "reference": reference,
                                          "completion": completion, "expert": expert}) + "\n"
                              for n, (completion, reference, expert) in enumerate(labelled)), encoding="utf-8")  # fmt: skip
    out = tmp_path / "alignment"
    result = CliRunner().invoke(study_cli, ["curate", "har-alignment", str(labels), "--out", str(out), "--deterministic-judge"])
    assert result.exit_code == 0, result.output

    items = _rows(out / "items.csv")
    verdicts = {layer: [i["judge"] == "True" for i in items if i["layers"] == layer] for layer in ("L1", "L1+L2", "full")}
    assert verdicts["full"] == [False, True, False, False, True, False]
    assert verdicts["L1"] == [False, True, True, True, True, False]  # rules 1-5 only: off topic passes
    experts = [expert for *_, expert in labelled]
    table = {r["layers"]: r for r in _rows(out / "alignment.csv")}
    assert list(table) == ["L1", "L1+L2", "full"]
    for layer, judged in verdicts.items():
        pairs = list(zip(judged, experts))
        row = table[layer]
        assert (row["n"], row["invalid"]) == ("6", "0")
        assert float(row["alignment"]) == pytest.approx(100 * sum(a == b for a, b in pairs) / 6)
        assert float(row["kappa"]) == pytest.approx(_kappa(pairs))
        assert float(row["expert_accepts"]) == pytest.approx(100 * 2 / 6)  # the class balance beside kappa
        assert float(row["judge_accepts"]) == pytest.approx(100 * sum(judged) / 6)
    # The same alignment (4 of 6) with other kappas: kappa depends on how often each says accept.
    assert table["full"]["alignment"] == table["L1"]["alignment"] and float(table["full"]["alignment"]) == pytest.approx(400 / 6)
    assert (float(table["full"]["kappa"]), float(table["L1"]["kappa"])) == pytest.approx((0.25, 0.4))


def test_har_alignment_names_the_line_and_field_of_a_bad_label(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"context": "a", "reference": "b", "completion": "c", "expert": true}\n'
                      '{"context": "a", "reference": "b", "completion": "c", "expert": "yes"}\n', encoding="utf-8")  # fmt: skip
    result = CliRunner().invoke(study_cli, ["curate", "har-alignment", str(labels), "--out", str(tmp_path / "o"), "--deterministic-judge"])
    assert result.exit_code == 1
    assert f"{labels} line 2: expert: 'yes' is not of type 'boolean'. Fix: see schemas/har-labels.schema.json" in result.output
    assert not (tmp_path / "o" / "alignment.csv").exists()
