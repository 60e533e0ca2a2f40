"""Suggestions on Tab (CoAuthor, Lee et al. CHI 2022; MindCopilot's L0): the writer asks, the
model offers up to n continuations, the writer picks one or dismisses them.

- `engine`: one query: the model call (study.model_client) and post-processing
  (study.suggest.postprocess, App. A.3), never raising;
- `api`: POST /api/sessions/<id>/suggestions, which the editor calls on Tab.
Its sessions are exported in the CoAuthor format (study.export.coauthor), the writing core's.
"""

from study.paradigms.base import EditorPart, Paradigm, StudyTemplate

PARADIGM = Paradigm(
    name="tab",
    summary="the writer presses Tab for suggestions and picks one or dismisses them (CoAuthor; L0)",
    pages=("study.paradigms.tab.editor",),
    apis=("study.paradigms.tab.api",),
    editor="study.paradigms.tab.editor",
    scripts=("editor-suggestions.js", "editor-tab.js"),
    stylesheets=("editor-suggestions.css",),
    editor_parts=(EditorPart("suggestionsUrl", panel="tab/suggestion_list.html", keys="tab/keys.html",
                             controls="suggestions", spinner=True),),
    conditions=("tab", "L0"),
    templates={"writing": StudyTemplate("CoAuthor's editor: 20 prompts, 4 conditions, Tab suggestions")},
)
