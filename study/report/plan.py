"""The report's plan loader (study.report.data.EXTRA_LOADERS): the preregistration record, each
planned comparison's estimate, and (for a study folder) every deviation from the record.

Runs after the judging loader, since an outcome measured by "judging" reads its per-session
means."""

from __future__ import annotations

from dataclasses import dataclass, field

from study import config as study_config
from study.plan import comparisons as comparison_module
from study.plan import deviations as deviation_module
from study.plan import exclude
from study.plan import record as record_module
from study.report.data import STUDY, ReportData


@dataclass
class PlanFacts:
    signed: dict | None  # the record; None: none was made
    problem: str = ""  # why the record cannot be trusted (a failed signature), or ""
    estimates: list[tuple[dict, dict, comparison_module.Difference]] = field(default_factory=list)
    deviations: list[deviation_module.Deviation] | None = None  # None: not known (a release)
    simulated_left_out: int = 0  # sessions of `study simulate` left out of the estimates
    # Each [[plan.exclude]] rule's name and the sessions it left out (study.plan.exclude).
    ruled_out: list[tuple[str, set[str]]] = field(default_factory=list)


def measure_values(data: ReportData, measure: str) -> dict[str, float]:
    """Per-session values of an outcome's measure: a stats column, or the judging mean."""
    if measure == "judging":
        judging = data.extras.get("judging")
        return dict(judging.per_session) if judging else {}
    return {s.session_id: s.stats.get(measure) for s in data.sessions if s.stats.get(measure) is not None}


def load(data: ReportData) -> None:
    path = data.path / record_module.RECORD_NAME
    study = study_config.load(data.path) if data.kind == STUDY else None
    if not path.is_file():
        if study is not None:
            data.extras["plan"] = PlanFacts(None)
        return
    facts = PlanFacts(None)
    try:
        facts.signed = record_module.load(path)
        # In the study folder, by the study's own key too, as `study preregister verify` checks.
        key_path = data.path / record_module.KEY_NAME
        expected = record_module.public_text(record_module.key(data.path)) if key_path.is_file() else None
        record_module.verify(facts.signed, expected_key=expected)
    except record_module.PlanError as error:
        facts.problem = str(error)
    if facts.signed is None:
        data.extras["plan"] = facts
        return
    left_out: set[str] = set()
    if study is not None:
        from study.store import create_tables, make_engine, reading

        engine = make_engine(study.database_url)
        create_tables(engine)
        # Flagged judges are left out only with [judging] exclude_failed_gold; kept, they are in
        # the estimates and the judging section says so. The judging loader, which runs first,
        # has counted them (`study preregister verify` asks study.judging.results.flagged_left_out).
        judging = data.extras.get("judging")
        flagged = judging.flagged if judging is not None and judging.flagged_excluded else 0
        with reading(engine) as connection:
            excluded = deviation_module.exclusions(connection, facts.signed, flagged)
            left_out = deviation_module.left_out(connection, facts.signed)
        engine.dispose()
        facts.deviations = deviation_module.compare(facts.signed, study, excluded)
    plan = facts.signed["plan"]
    outcomes = {o["name"]: o for o in plan["outcomes"]}
    # The sessions the deviations list as excluded (begun before the record, rejected at review)
    # are not in the estimates either.
    condition = {s: c for s, c in data.condition_of().items() if s not in left_out}
    # The comparisons are over the people who took part: a pilot's simulated writers (study
    # simulate, allowed before the record) are left out once there are any; a pilot report
    # with none yet keeps them, under the report's banner, to try the analysis.
    pilots = {s.session_id for s in data.sessions if s.simulated} | set(data.unlogged_simulated)
    if any(session_id not in pilots for session_id in condition):
        facts.simulated_left_out = len(pilots)
        condition = {s: c for s, c in condition.items() if s not in pilots}
    writer_of = {s.session_id: s.writer for s in data.sessions}
    # The rules the record fixed, not today's study.toml's (a change of them is a deviation).
    if rules := plan.get("exclude", []):
        values = {r["measure"]: measure_values(data, r["measure"]) for r in rules if "measure" in r}
        facts.ruled_out = exclude.left_out(rules, values, data.answers, writer_of, sorted(condition))
        gone = set().union(*(out for _, out in facts.ruled_out))
        condition = {s: c for s, c in condition.items() if s not in gone}
    # The design the record fixed decides paired or independent, not the study.toml of today
    # (a change of it is a deviation) nor how many stopped part-way.
    design = record_module.assignment(facts.signed)
    for comparison in plan["comparisons"]:
        outcome = outcomes.get(comparison["outcome"], {"name": comparison["outcome"], "measure": ""})
        values = measure_values(data, outcome["measure"])
        facts.estimates.append((comparison, outcome, comparison_module.estimate(
            values, condition, writer_of, comparison["treatment"], comparison["control"], design=design)))  # fmt: skip
    data.extras["plan"] = facts
