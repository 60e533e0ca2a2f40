"""A paradigm added by a folder alone (issue 18, item 4): a plain textarea with a "Help me"
button that asks the study's model to go on from the text, which the writer uses or declines.

Nothing outside this folder knows it: `tests/test_paradigm_by_addition.py` registers it, and
the toolkit then configures, serves, logs, simulates, exports and reports it through its
declaration below (study.paradigms.base.Paradigm), as it does the built-in ones.

- `config`: its own table of study.toml, `[helpme]` (the button's label);
- `pages`: its writing page (the "writing" stage of its sessions), templates/ and static/;
- `api`: POST /api/sessions/<id>/help, whose body schemas/ declares;
- `simulate`: `study simulate`'s writer on that page; `export`: `study export --format helpme`;
- `report`: its section of `study report`.
"""

from pathlib import Path

from study.paradigms.base import Paradigm, StudyTemplate

HERE = Path(__file__).parent
NAME = "helpme"

PARADIGM = Paradigm(
    name=NAME,
    summary='the writer writes in a plain textarea and may press "Help me" for a continuation',
    config="tests.paradigm_helpme.config",
    pages=("tests.paradigm_helpme.pages",),
    apis=("tests.paradigm_helpme.api",),
    stage_endpoints={"writing": "helpme.writing"},
    conditions=(NAME,),
    schemas=str(HERE / "schemas"),
    templates={NAME: StudyTemplate('a plain textarea with a "Help me" button', levels=(NAME,))},
    exports={NAME: "tests.paradigm_helpme.export"},
    report="tests.paradigm_helpme.report",
    simulate="tests.paradigm_helpme.simulate",
)
