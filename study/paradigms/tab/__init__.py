"""Suggestions on Tab (CoAuthor, Lee et al. CHI 2022; MindCopilot's L0): the writer asks, the
model offers up to n continuations, the writer picks one or dismisses them.

Served by study.server.suggestions_api (POST /api/sessions/<id>/suggestions); the engine is
study.suggest.engine, the export the CoAuthor format (study.export.coauthor).
"""

from study.paradigms.base import Paradigm

PARADIGM = Paradigm(
    name="tab",
    summary="the writer presses Tab for suggestions and picks one or dismisses them (CoAuthor; L0)",
    apis=("study.server.suggestions_api",),
)
