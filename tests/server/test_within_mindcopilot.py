"""MindCopilot's user study as the paper ran it (§5.3, App. F; spec A4), made by `study init
--design mindcopilot` (study.designs): within subjects, each writer writes once under each of
L0 (an assistant panel they ask), L1, L2 and L3 (ghost text), in a Latin-square order
counterbalanced across writers (study.server.within), and answers the Q1-Q10 questionnaire
after each session; `study report` gives it per paradigm, Table 13's rows."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from study import config
from study.cli import main
from study.server import create_app
from study.server.within import latin_square
from study.store import make_engine, reading
from study.store import sessions as session_store
from tests.conftest import CONTACT
from tests.report.test_mindcopilot_questionnaire import ITEMS
from tests.server.flow import start, to_survey, to_writing

PARADIGMS = ("L0", "L1", "L2", "L3")
COAUTHOR = {"native_speaker": "Yes", "ownership": "6", "satisfaction": "5", "reuse": "7"}


def _init(tmp_path):
    """The folder as `study init --design mindcopilot` writes it, with no minimum writing time
    and a contact on the consent page."""
    folder = tmp_path / "mindcopilot"
    result = CliRunner().invoke(main, ["init", str(folder), "--design", "mindcopilot"])
    assert result.exit_code == 0, result.output
    toml = folder / config.CONFIG_NAME
    text = toml.read_text(encoding="utf-8").replace("min_seconds = 600", "min_seconds = 0")
    toml.write_text(text, encoding="utf-8")
    consent = folder / "consent.html"
    for old, new in CONTACT.items():
        consent.write_text(consent.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    return folder


def _boot(page: str) -> dict:
    return json.loads(page.split('<script id="boot" type="application/json">')[1].split("</script>")[0])


def _answers(paradigm: str, writer: int) -> dict[str, str]:
    """Q1-Q10 as writer `writer` rates `paradigm`: L0 2 + writer % 2, L1 one more, ..."""
    return {item: str(2 + PARADIGMS.index(paradigm) + writer % 2) for item in ITEMS}


def _write_and_rate(client, session_id: str, answers: dict[str, str]) -> str:
    """From writing to the completion page (in a MindCopilot study every record carries the
    extension); returns the page asking the questionnaire, after CoAuthor's survey."""
    to_survey(client, session_id, proactive=True)
    assert client.post(f"/s/{session_id}/survey", data=COAUTHOR).status_code == 302
    questionnaire = client.get(f"/s/{session_id}/survey").get_data(as_text=True)
    response = client.post(f"/s/{session_id}/survey", data=answers)
    assert response.location == f"/s/{session_id}/complete", response.data
    return questionnaire


def _four_writers(folder):
    study = config.load(folder)
    app = create_app(study, suggestion_engine=object())
    client = app.test_client()
    taken, editors, asked = {}, {}, {}
    for writer in range(len(PARADIGMS)):
        code = f"w{writer}"
        taken[code] = []
        for part in range(len(PARADIGMS)):
            session_id = start(client, access_code=code, **({"another": "1"} if part else {}))
            to_writing(client, session_id, prompt=None)  # a prompt of their own for each paradigm
            editors[session_id] = _boot(client.get(f"/s/{session_id}/writing").get_data(as_text=True))
            with reading(app.extensions["study.engine"]) as connection:
                condition = session_store.get(connection, session_id)["condition"]
            paradigm = study.condition(condition).paradigm
            taken[code].append((session_id, paradigm))
            asked[session_id] = _write_and_rate(client, session_id, _answers(paradigm, writer))
    app.extensions["study.engine"].dispose()
    return study, taken, editors, asked


def test_init_writes_the_papers_four_paradigms_within_subjects_with_the_questionnaire_after_each(tmp_path):
    study = config.load(_init(tmp_path))
    assert study.name == "mindcopilot" and study.assignment == "within"
    # One genre, so four sessions a writer, one per paradigm, on one backend (§5.3).
    assert [(c.genre, c.paradigm) for c in study.conditions] == [("argumentative", p) for p in PARADIGMS]
    assert {c.model for c in study.conditions} == {"gpt-5.1"}
    assert study.proactive.l0 == "assistant"  # the paper's L0, not CoAuthor's Tab list
    (questionnaire,) = [s for s in study.surveys if s.name == "mindcopilot"]
    assert questionnaire.placement == "after_session"
    assert [item.id for item in questionnaire.items][:10] == list(ITEMS)


def test_four_writers_take_the_four_paradigms_in_a_latin_square_each_rating_every_session(tmp_path):
    study, taken, editors, asked = _four_writers(_init(tmp_path))
    orders = [[paradigm for _, paradigm in sessions] for sessions in taken.values()]

    # Every writer wrote under every paradigm once; every paradigm came first, second, ... once
    # across the four writers: the order is counterbalanced, as the square the study uses.
    assert all(sorted(order) == list(PARADIGMS) for order in orders)
    for position in range(len(PARADIGMS)):
        assert sorted(order[position] for order in orders) == list(PARADIGMS)
    assert orders == [[PARADIGMS[i] for i in row] for row in latin_square(len(PARADIGMS))]

    for sessions in taken.values():
        for session_id, paradigm in sessions:
            boot = editors[session_id]
            # L0 is the assistant panel the writer asks, with no ghost text and no Tab list;
            # L1-L3 are one ghost text at a time, whose behaviour (not its name) the page is told.
            if paradigm == "L0":
                assert "assistantPanel" in boot and "proactive" not in boot and "suggestionsUrl" not in boot
            else:
                assert "assistantPanel" not in boot and boot["controls"]["currentN"] == "1"
                assert boot["proactive"]["stateful"] == (paradigm != "L1")
                assert boot["proactive"]["staged"] == (paradigm == "L3")
            assert paradigm not in json.dumps({**boot, "prompt": ""})
            # After every session, whichever its paradigm, the ten items of App. F.
            assert all(f'name="{item}"' in asked[session_id] for item in ITEMS), paradigm


def test_the_report_gives_the_questionnaire_per_paradigm_as_table_13s_rows(tmp_path):
    folder = _init(tmp_path)
    _four_writers(folder)
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    heading = "Post-task questionnaire per paradigm (Table 13, Fig. 6)"
    table = html[html.index(heading):].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in table.split("</tr>") if "<td>" in row]
    # Each paradigm rated by the four writers: 2 + its index + (0, 1, 0, 1), a mean of index + 2.5.
    assert rows == [[p, *[f"{2.5 + i:.2f} (4)"] * 10] for i, p in enumerate(PARADIGMS)]
