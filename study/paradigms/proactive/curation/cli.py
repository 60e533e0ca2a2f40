"""`study curate proactive`, `proactive-simulate` and `ked-calibrate`: MindCopilot's metrics.

Judges (HAR, KED) are any OpenAI-compatible endpoint (`--judge-endpoint`, `--judge-model`,
the key in the variable `--judge-key-env` names), or `--deterministic-judge`, which serves the
rule-based judge of study.metrics.judges.deterministic on a local port and talks to it over
HTTP like to any other; its numbers are for trying the pipeline, not the paper's metrics.
Every judgement is cached under `--judge-cache` (default OUT/judge-cache).
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from pathlib import Path

import click

from study.metrics.judges.options import DETERMINISTIC_NOTE, judge_options, open_judge, quiet_local_servers
from study.curation.formats import FORMAT_PROACTIVE, SessionFileError, read_session, session_files

def _write_csv(path: Path, rows: list[dict]) -> None:
    if not rows:
        path.write_text("", encoding="utf-8")
        return
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _table(rows: list[dict], columns: list[str]) -> str:
    cells = [[_fmt(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def _weights(path: str | None) -> dict:
    from study.paradigms.proactive.metrics.ked import WEIGHTS

    if not path:
        return dict(WEIGHTS)
    try:
        given = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"{path}: cannot read the KED weights as JSON ({exc})") from None
    if not isinstance(given, dict):
        raise click.ClickException(f"{path}: KED weights must be a JSON object {{category: cost}}, "
                                   f"e.g. {{\"complex_entity\": 4}}")  # fmt: skip
    unknown = set(given) - set(WEIGHTS)
    if unknown:
        raise click.ClickException(f"{path}: unknown KED categories {sorted(unknown)}; use {', '.join(WEIGHTS)}")
    for category, cost in given.items():
        # A cost is added per edit (KED is a sum): a word or a negative number has no meaning.
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not 0 <= cost < math.inf:
            raise click.ClickException(f"{path}: {category} must be a non-negative number, got {cost!r}")
    return {**WEIGHTS, **{k: float(v) for k, v in given.items()}}


def _requests(paths) -> dict:
    """(session id, suggestion id) -> what the model saw, from every requests file found."""
    from study.paradigms.proactive.curation.requests import RequestsFileError, find_requests, read_requests

    found: dict = {}
    files = find_requests(paths)
    for path in files:
        try:
            found.update(read_requests(path))
        except RequestsFileError as error:
            raise click.ClickException(str(error)) from None
    if not files:
        click.echo("No suggestion_requests.json beside the sessions: suggestions.csv's `state` (the "
                   "context the model saw) is empty. Fix: measure the folder `study export STUDY "
                   "--format proactive` writes.", err=True)  # fmt: skip
    return found


def register(curate: click.Group) -> None:
    curate.add_command(proactive)
    curate.add_command(proactive_simulate)
    curate.add_command(ked_calibrate)
    curate.add_command(har_alignment)


@click.command("proactive")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Folder for the CSV tables.")
@click.option("--weights", type=click.Path(exists=True, dir_okay=False),
              help="KED weights as JSON {category: cost}.")
@click.option("--layers", type=click.Choice(["full", "L1+L2", "L1"]), default="full",
              show_default=True, help="HAR checklist layers.")
@click.option("--modify-window-ms", default=60000, show_default=True, type=click.IntRange(min=0),
              help="An accepted suggestion's final text is what it holds this long after "
              "acceptance (0: at the end).")
@judge_options
def proactive(paths, out, weights, layers, modify_window_ms, judge_endpoint, judge_model,
              judge_key_env, judge_cache, deterministic_judge):
    """MindCopilot metrics of proactive sessions (`study export --format proactive`): per
    suggestion, per session and per paradigm. Without a judge, HAR and KED are left empty.

    suggestions.csv is the per-suggestion record (§3, Eq. 2): `state` (s_t, the context the model
    saw, from the export's suggestion_requests.json), `suggestion` (a_t), `outcome` and
    `accepted_text` (u_t), `next_state` (s_t+1), with `reference` (the writer's own text after
    the suggestion, HAR's live reference) and `final_text` (KED's)."""
    from study.paradigms.proactive.curation.records import session_paradigm, suggestion_records
    from study.paradigms.proactive.metrics.acceptance import acceptance_rate
    from study.paradigms.proactive.metrics.edit_distance import char_edit_distance, word_edit_distance
    from study.paradigms.proactive.metrics.har import HarItem, har
    from study.paradigms.proactive.metrics.har_rate import har_rate
    from study.paradigms.proactive.metrics.ked import ked, ked_mean
    from study.paradigms.proactive.metrics.table5 import session_figures, table5

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = session_files(paths)
    costs = _weights(weights)
    requests = _requests(paths)
    rows, sessions = [], []
    with open_judge(judge_endpoint, judge_model, judge_key_env, judge_cache, deterministic_judge, out, False) as judge:
        for path in files:
            try:
                session = read_session(path)
            except SessionFileError as error:
                raise click.ClickException(str(error)) from None
            if session.format != FORMAT_PROACTIVE:
                click.echo(f"{path}: not a proactive session (no `proactive` key); skipped", err=True)
                continue
            records = suggestion_records(session.events, session.session_id, modify_window_ms)
            for r in records:
                accepted = r.outcome in ("accepted", "accepted_modified", "partial")
                verdict = distance = None
                if judge is not None and r.shown_at is not None and r.reference.strip():
                    verdict = har(HarItem(r.context, r.reference, r.suggestion), judge, layers).accept
                if judge is not None and accepted:
                    distance = ked(r.accepted_text, r.final_text, judge, context=r.context, weights=costs).value
                row = r.to_dict()
                row.pop("context")
                # s_t, the context the model saw, from the export's requests file.
                request = requests.get((session.session_id, r.suggestion_id), {})
                row["state"], row["strategy"] = request.get("context"), request.get("strategy")
                row.update(
                    har=verdict, ked=distance,
                    char_distance=char_edit_distance(r.accepted_text, r.final_text) if accepted else None,
                    word_distance=word_edit_distance(r.accepted_text, r.final_text) if accepted else None,
                )
                rows.append(row)
            sessions.append(session_figures(session.events, session.session_id, session_paradigm(session.events)))
    by_session = defaultdict(list)
    for row in rows:
        by_session[row["session_id"]].append(row)
    session_rows = []
    for figures in sessions:
        mine = by_session[figures.session_id]
        rate = acceptance_rate((figures.session_id, r["outcome"]) for r in mine)
        session_rows.append({
            "session_id": figures.session_id, "paradigm": figures.paradigm, "shown": rate.shown,
            "accepted": rate.accepted, "acceptance": rate.micro,
            "har": har_rate(r["har"] for r in mine if r["har"] is not None).percent,
            "ked": ked_mean(r["ked"] for r in mine), "window_switches": figures.window_switches,
            "panel_switches": figures.panel_switches, "chat_requests": figures.chat_requests,
            "editing_minutes": figures.editing_minutes, "active_minutes": figures.active_minutes,
        })
    if not session_rows:
        raise click.ClickException(
            f"no proactive session in {', '.join(paths)} (no file has the `proactive` key). Fix: "
            "export the study with `study export DIR --format proactive --out OUT` and measure OUT."
        )
    paradigm_rows = []
    # Table 5's figures (sessions, editing time, switches, shown, acceptance, modify rate) by
    # study.paradigms.proactive.metrics.table5, as `study report` shows them.
    for row in table5(sessions, ((r["session_id"], r["outcome"]) for r in rows))[:-1]:
        mine = [r for r in rows if r["paradigm"] == row["paradigm"]]
        chars = [r["char_distance"] for r in mine if r["char_distance"] is not None]
        words = [r["word_distance"] for r in mine if r["word_distance"] is not None]
        paradigm_rows.append({
            **row, "har": har_rate(r["har"] for r in mine if r["har"] is not None).percent,
            "ked": ked_mean(r["ked"] for r in mine),
            "char_distance": sum(chars) / len(chars) if chars else math.nan,
            "word_distance": sum(words) / len(words) if words else math.nan,
        })
    _write_csv(out / "suggestions.csv", rows)
    _write_csv(out / "sessions.csv", session_rows)
    _write_csv(out / "paradigms.csv", paradigm_rows)
    click.echo(_table(paradigm_rows, list(paradigm_rows[0]) if paradigm_rows else ["paradigm"]))
    click.echo(f"Wrote {len(rows)} suggestions, {len(session_rows)} sessions to {out}.", err=True)
    if deterministic_judge:
        click.echo(DETERMINISTIC_NOTE, err=True)


@click.command("proactive-simulate")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for the CSV tables.")
@click.option("--model-endpoint", default="deterministic", show_default=True,
              help="Base URL of the assistant's OpenAI-compatible endpoint, or \"deterministic\" for the local canned model.")
@click.option("--model", default="deterministic", show_default=True, help="The assistant model's name.")
@click.option("--mode", type=click.Choice(["chat", "completion"]), default="chat", show_default=True)
@click.option("--levels", default="L1,L2", show_default=True, help="Paradigms to run, comma-separated (L1, L2).")
@click.option("--max-tokens", default=40, show_default=True, type=int)
@click.option("--temperature", default=0.0, show_default=True, type=float)
@judge_options
def proactive_simulate(queries, out, model_endpoint, model, mode, levels, max_tokens, temperature,
                       judge_endpoint, judge_model, judge_key_env, judge_cache, deterministic_judge):
    """Replay continuation QUERIES (schemas/proactive-queries.schema.json) through a model in L1
    and L2 and judge them: Table 4 (HAR % / KED), Table 11 (the same per domain) and Fig. 4
    (HAR by progress, L2 - L1)."""
    from study.config import Condition, SuggestionSettings
    from study.paradigms.proactive.curation.continuation import QueryFileError, figure4, read_queries, run
    from study.paradigms.proactive.curation.continuation import table4, table11
    from study.paradigms.proactive.engine import ProactiveEngine
    from study.paradigms.proactive.settings import ProactiveSettings

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        items = read_queries(Path(queries))
    except QueryFileError as error:
        raise click.ClickException(str(error)) from None
    wanted = [level.strip() for level in levels.split(",") if level.strip()]
    if not wanted or set(wanted) - {"L1", "L2"}:
        raise click.UsageError(f"--levels takes L1 and/or L2 (the simulation's paradigms), got {levels!r}")
    stop = None
    if model_endpoint == "deterministic":
        from study.lm.backends import DeterministicBackend
        from study.lm.server import serve_in_thread

        quiet_local_servers()
        model_endpoint, stop = serve_in_thread(DeterministicBackend())
    try:
        engine = ProactiveEngine(SuggestionSettings(endpoint=model_endpoint, timeout_seconds=120), ProactiveSettings())
        condition = Condition(name="simulation", genre="simulation", model=model, mode=mode, n=1,
                              max_tokens=max_tokens, temperature=temperature)
        with open_judge(judge_endpoint, judge_model, judge_key_env, judge_cache, deterministic_judge, out, True) as judge:
            outcomes = run(items, engine, condition, judge, wanted)
    finally:
        if stop:
            stop()
    failed = [o.error for o in outcomes if o.error]
    if outcomes and len(failed) == len(outcomes):
        raise click.ClickException(
            f"every model call failed ({len(failed)} of {len(outcomes)}). Fix: check "
            f"--model-endpoint ({model_endpoint}) and --model ({model}). The first error: {failed[0]}"
        )
    per_query = [{
        "level": o.level, "article": o.query.article, "domain": o.query.domain, "category": o.query.category,
        "progress": o.query.progress, "bin": o.query.bin, "suggestion": o.suggestion, "reference": o.query.reference,
        "har": o.accept, "rule": o.rule, "ked": o.ked, "error": o.error,
    } for o in outcomes]
    rows4, fig4 = table4(outcomes), figure4(outcomes)
    _write_csv(out / "queries.csv", per_query)
    _write_csv(out / "table4.csv", rows4)
    _write_csv(out / "table11.csv", table11(outcomes))
    _write_csv(out / "figure4.csv", fig4)
    click.echo(f"{len(items)} queries, model {model}")
    click.echo(_table(rows4, ["level", "overall_har", "overall_ked", "scientific_har", "scientific_ked",
                              "creative_har", "creative_ked", "invalid_or_failed"]))
    click.echo(_table(fig4, list(fig4[0])))
    if failed:
        click.echo(f"{len(failed)} of {len(outcomes)} model calls failed, e.g. {failed[0]} "
                   "(queries.csv, column error); they count as invalid_or_failed.", err=True)  # fmt: skip
    if deterministic_judge:
        click.echo(DETERMINISTIC_NOTE, err=True)


@click.command("ked-calibrate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for instances.csv and weights.json.")
@click.option("--held-out", default=0.3, show_default=True, type=click.FloatRange(0.05, 0.9))
@judge_options
def ked_calibrate(paths, out, held_out, judge_endpoint, judge_model, judge_key_env, judge_cache, deterministic_judge):
    """Fit KED's weights to editing duration on CoAuthor sessions (MindCopilot §4.2, Table 2)."""
    from study.paradigms.proactive.curation.coauthor_instances import post_edit_instances
    from study.paradigms.proactive.metrics.correlate import correlate
    from study.paradigms.proactive.metrics.edit_distance import char_edit_distance, word_edit_distance
    from study.paradigms.proactive.metrics.ked import ked
    from study.paradigms.proactive.metrics.ked_calibrate import Instance
    from study.paradigms.proactive.metrics.ked_calibrate import ked_calibrate as fit

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows, instances = [], []
    with open_judge(judge_endpoint, judge_model, judge_key_env, judge_cache, deterministic_judge, out, True) as judge:
        for path in session_files(paths):
            try:
                session = read_session(path)
            except SessionFileError as error:  # as `study curate proactive`: the file and line
                raise click.ClickException(str(error)) from None
            for item in post_edit_instances(session.events, session.session_id):
                result = ked(item.suggestion, item.final, judge)
                if result.value is None:
                    continue
                lev = char_edit_distance(item.suggestion, item.final)
                instances.append(Instance(result.counts, item.duration_seconds, lev))
                rows.append({"session_id": item.session_id, "duration_seconds": item.duration_seconds,
                             "gap_seconds": item.gap_seconds, "ked": result.value, "levenshtein": lev,
                             "word_distance": word_edit_distance(item.suggestion, item.final),
                             "suggestion": item.suggestion, "final": item.final})
    _write_csv(out / "instances.csv", rows)
    durations = [r["duration_seconds"] for r in rows]
    click.echo(f"{len(rows)} post-editing instances")
    overall = [{"metric": name, **{k: getattr(c, k) for k in ("n", "pearson", "spearman")}}
               for name, c in (("KED (default weights)", correlate([r["ked"] for r in rows], durations)),
                               ("Levenshtein", correlate([r["levenshtein"] for r in rows], durations)),
                               ("word distance", correlate([r["word_distance"] for r in rows], durations)))]
    click.echo(_table(overall, ["metric", "n", "pearson", "spearman"]))
    try:
        calibration = fit(instances, held_out)
    except ValueError as error:
        click.echo(f"No calibration: {error}", err=True)
        return
    (out / "weights.json").write_text(json.dumps(calibration.weights, indent=2) + "\n", encoding="utf-8")
    click.echo(f"Fitted weights on {calibration.calibration_n} instances: {calibration.weights}")
    held = [{"held-out": name, **{k: getattr(c, k) for k in ("n", "pearson", "spearman")}}
            for name, c in (("KED fitted", calibration.held_out_fitted), ("KED default", calibration.held_out_default),
                            ("Levenshtein", calibration.held_out_levenshtein))]
    click.echo(_table(held, ["held-out", "n", "pearson", "spearman"]))
    if deterministic_judge:
        click.echo(DETERMINISTIC_NOTE, err=True)


@click.command("har-alignment")
@click.argument("labels", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for items.csv and alignment.csv.")
@click.option("--layers", default="L1,L1+L2,full", show_default=True,
              help="HAR checklist layers to validate, comma-separated (Table 1's HAR_L1, HAR_L1+L2, HAR_Full).")
@judge_options
def har_alignment(labels, out, layers, judge_endpoint, judge_model, judge_key_env, judge_cache, deterministic_judge):
    """Validate the HAR judge against expert labels (MindCopilot §4.1, Table 1): alignment rate
    (percent of items where the judge's verdict is the expert's) and Cohen's kappa per checklist
    layers, with the class balance kappa depends on. LABELS: JSON lines with context, reference,
    completion and expert (true: accept)."""
    from study.paradigms.proactive.curation.labels import LabelFileError, read_labels
    from study.paradigms.proactive.metrics.alignment import alignment_and_kappa
    from study.paradigms.proactive.metrics.har import LAYERS, HarItem, har

    wanted = [layer.strip() for layer in layers.split(",") if layer.strip()]
    if not wanted or set(wanted) - set(LAYERS):
        raise click.UsageError(f"--layers takes {', '.join(LAYERS)}, comma-separated; got {layers!r}")
    try:
        items = read_labels(Path(labels))
    except LabelFileError as error:
        raise click.ClickException(str(error)) from None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows, table = [], []
    with open_judge(judge_endpoint, judge_model, judge_key_env, judge_cache, deterministic_judge, out, True) as judge:
        for layer in wanted:
            verdicts = [har(HarItem(i.context, i.reference, i.completion), judge, layers=layer) for i in items]
            rows += [{"id": i.id, "layers": layer, "expert": i.expert, "judge": v.accept, "rule": v.rule}
                     for i, v in zip(items, verdicts)]  # fmt: skip
            result = alignment_and_kappa([v.accept for v in verdicts], [i.expert for i in items])
            table.append({"layers": layer, "n": result.n, "invalid": result.invalid, "alignment": result.percent,
                          "kappa": result.kappa, "expert_accepts": result.expert_accepts,
                          "judge_accepts": result.judge_accepts})  # fmt: skip
    _write_csv(out / "items.csv", rows)
    _write_csv(out / "alignment.csv", table)
    click.echo(f"{len(items)} expert-labelled items")
    click.echo(_table(table, list(table[0])))
    if deterministic_judge:
        click.echo(DETERMINISTIC_NOTE, err=True)
