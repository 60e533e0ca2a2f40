"""Proactive ghost text (MindCopilot, Fang et al. IJCAI 2026, L1-L3): when the writer pauses,
the model's continuation appears in grey; Tab accepts it, a word at a time or whole, typing on
rejects it.

Served by study.server.proactive_api (POST /api/sessions/<id>/proactive); the engine is
study.suggest.proactive, the export study.export.proactive.
"""

from study.paradigms.base import Paradigm

PARADIGM = Paradigm(
    name="proactive",
    summary="ghost text appears when the writer pauses; Tab accepts it (MindCopilot L1-L3)",
    apis=("study.server.proactive_api",),
)
