"""Every table and plot of `study report` shows all its rows or says what it left out (issue
25, item 6): the balance table lists conditions and prompts nobody has written yet, and the
per-writer plot names how many writers it does not draw and where they are."""

from __future__ import annotations

from click.testing import CliRunner

from study import config
from study.cli import main
from study.report.sections import variation
from study.store import reading
from study.store import sessions as session_store
from tests.conftest import COAUTHOR
from tests.report.conftest import METADATA, Tables


def _html(source, tmp_path) -> str:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_the_balance_table_lists_the_conditions_and_prompts_with_no_session(report_study, tmp_path):
    study = config.load(report_study)
    tables = Tables(_html(report_study, tmp_path))
    allocation = tables.rows("allocation")
    assert allocation["prompt"] == [c.name for c in study.conditions] + ["all"]
    assert set(allocation) == {"prompt", "all prompts", *(p.code for p in study.prompts)}
    written = {name for name, row in allocation.items() if name != "prompt" and row[-1] != "0"}
    empty = [c.name for c, total in zip(study.conditions, allocation["all prompts"]) if total == "0"]
    assert empty  # the fixture's sessions are all creative: the argumentative arms got none
    assert f"No session yet for {len(empty)} condition(s): {', '.join(empty)}." in tables.texts["allocation"]
    unwritten = [p.code for p in study.prompts if p.code not in written - {"all prompts"}]
    assert f"No session yet for {len(unwritten)} prompt(s): {', '.join(unwritten)}." in tables.texts["allocation"]


def test_the_per_writer_plot_says_how_many_writers_it_leaves_out(tmp_path, monkeypatch):
    writers = len({row["worker_id"] for row in METADATA.values()})
    monkeypatch.setattr(variation, "MOST_WRITERS", 5)  # the release has fewer writers than 30
    tables = Tables(_html(COAUTHOR, tmp_path))
    text = tables.texts["variation"]
    assert (f"it shows the 5 writers with most sessions of {writers}; the other {writers - 5} "
            "are in the per-writer table below") in text  # fmt: skip
    per_writer = next(t for t in tables.sections["variation"] if t[0][0] == "writer" and t[0][1] == "sessions")
    assert len(per_writer) - 1 == writers  # every writer is in the table


def test_a_plot_that_shows_every_writer_says_so(tmp_path):
    writers = len({row["worker_id"] for row in METADATA.values()})
    assert f"Equality and mutuality per writer. All {writers} writers." in Tables(_html(COAUTHOR, tmp_path)).texts["variation"]


def test_the_balance_table_says_which_sessions_it_counts_when_status_counts_more(report_study, tmp_path):
    # A pilot's writer still writing: `study status` counts their session under its condition
    # (as the balanced rule does), the table counts exported, finished sessions. The report
    # must say so, naming the condition, or the researcher reads two disagreeing counts.
    from study.server import create_app
    from tests.server.flow import start, to_writing

    app = create_app(config.load(report_study), suggestion_engine=object())
    writer = start(app.test_client(), access_code="still-writing")
    to_writing(app.test_client(), writer, prompt="mana")
    with reading(app.extensions["study.engine"]) as connection:
        condition = session_store.get(connection, writer)["condition"]
    app.extensions["study.engine"].dispose()
    tables = Tables(_html(report_study, tmp_path))
    table_counts = dict(zip(tables.rows("allocation")["prompt"], tables.rows("allocation")["all prompts"]))
    status = CliRunner().invoke(main, ["status", str(report_study)])
    status_counts = dict(part.split(" ")[:2] for part in
                         status.output.split("Conditions: ")[1].splitlines()[0].split(", "))  # fmt: skip
    assert int(status_counts[condition]) == int(table_counts[condition]) + 1
    assert ("The table counts sessions whose writing is finished, as `study export` writes them. "
            f"Sessions begun and not finished are not in it: 1 ({condition} 1).") in tables.texts["allocation"]
