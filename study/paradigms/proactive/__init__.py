"""Proactive co-writing (MindCopilot, Fang et al. IJCAI 2026): the paradigms L0-L3 as conditions.
When the writer pauses, the model's continuation appears in grey (L1-L3); Tab accepts it. L0,
user-initiated, is an assistant panel the writer asks ([proactive] l0 = "assistant").

- `settings`: the `[proactive]` table of study.toml (idle threshold, context window, L3 rule).
- `context`: what the model sees: the L1 local window and the L2 marked-up document snapshot.
- `policy`: the L3 adaptive rule (writing stage, strategy, idle threshold, suggestion length).
- `memory`: the editor's interaction memory (history, outcomes, accepted spans) rebuilt from
  a session's stored events, for a browser that reloads without its saved copy.
- `engine`: one proactive query: prompt, model call, post-processing, the per-suggestion record.
- `assistant`: L0's assistant panel, one request answered against the document;
  `assistant_simulate`: `study simulate`'s writers asking it.
- `api`: POST /api/sessions/<id>/proactive and /assistant; `export`: the sessions and requests;
- `arrival`: what the event API writes into (blinding) and checks of (provenance) its records;
- `coauthor_log`: its events in the CoAuthor log, the extended format, its export beside others;
- `curation/`: `study curate proactive` (checks, provenance, records, continuation);
- `metrics/`: MindCopilot's metrics, one per file; `report` (and `report_data`, the figures
  it draws): its part of `study report`.
"""

from pathlib import Path

from study.paradigms.base import EditorPart, Paradigm, StudyTemplate

HERE = Path(__file__).parent

PARADIGMS = ("L0", "L1", "L2", "L3")
PROACTIVE = ("L1", "L2", "L3")
# A new MindCopilot study asks the paper's post-task questionnaire after every session (App. F:
# "after each writing task"), turned on from templates/init/study.toml's commented example.
QUESTIONNAIRE = {
    '# collabllm-periodic, collabllm-final. For example:\n# [[surveys]]\n# name = "mindcopilot"\n'
    '# preset = "mindcopilot-q1-q10"\n# placement = "after_session"\n':
    '# collabllm-periodic, collabllm-final.\n# MindCopilot\'s post-task questionnaire (App. F, Tab. 12), '
    'after every session:\n[[surveys]]\nname = "mindcopilot"\npreset = "mindcopilot-q1-q10"\n'
    'placement = "after_session"\n',
}


def is_proactive_study(conditions, settings=None) -> bool:
    """A MindCopilot study: some condition is L1-L3, or L0 run as the assistant panel
    (`settings`: the study's ProactiveSettings). Its other sessions log window switches and
    carry `proactive` too (Table 5 compares all four); a plain CoAuthor study's do not."""
    if settings is not None and any(settings.assistant_panel(c.paradigm) for c in conditions):
        return True
    return any(condition.paradigm in PROACTIVE for condition in conditions)


PARADIGM = Paradigm(
    name="proactive",
    summary="ghost text appears when the writer pauses; Tab accepts it (MindCopilot L1-L3)",
    pages=("study.paradigms.proactive.editor",),
    apis=("study.paradigms.proactive.api",),
    editor="study.paradigms.proactive.editor",
    scripts=("editor-ghost.js", "editor-proactive-memory.js", "editor-proactive-trigger.js",
             "editor-proactive-status.js", "editor-proactive.js", "editor-assistant.js"),
    stylesheets=("editor-ghost.css", "editor-assistant.css"),
    # L0's assistant panel (templates/proactive/); L1-L3's status bar and log are drawn by
    # editor-proactive-status.js.
    editor_parts=(EditorPart("assistantPanel", panel="proactive/assistant_panel.html",
                             keys="proactive/assistant_keys.html", page_class="with-assistant",
                             spinner=True),),
    events="study.paradigms.proactive.arrival",
    conditions=PROACTIVE,
    # One suggestion at a time (currentN = 1): a ghost text, not a list.
    condition_defaults={level: {"n": 1} for level in PROACTIVE},
    templates={
        # init/: instructions for ghost text (templates/init/'s describe CoAuthor's Tab list).
        "proactive": StudyTemplate("MindCopilot's L1, L2 and L3 in rotation (ghost text after a pause)",
                                   overlay=str(HERE / "init"), levels=PROACTIVE, study_toml=QUESTIONNAIRE),
        **{level: StudyTemplate(f"MindCopilot's {level} only", overlay=str(HERE / "init"), levels=(level,),
                                study_toml=QUESTIONNAIRE)
           for level in PROACTIVE},
    },
    exports={"proactive": "study.paradigms.proactive.export"},
    curate="study.paradigms.proactive.curation.cli",
    simulate="study.paradigms.proactive.simulate",
    # A simulated L0 writer asks the assistant panel where a Tab writer presses Tab.
    simulate_part="study.paradigms.proactive.assistant_simulate",
    report="study.paradigms.proactive.report",
    # L0's assistant panel, as a release's card and arms.json describe its arm.
    release="study.paradigms.proactive.release",
    coauthor_log="study.paradigms.proactive.coauthor_log",
    config="study.paradigms.proactive.settings",
)
