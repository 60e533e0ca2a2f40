"""What the core's editor page needs for Tab suggestions (study.paradigms.base.Paradigm.editor)."""

from __future__ import annotations

from flask import url_for

from study.paradigms.none import arm as control_arm


def boot(study, condition, session_id: str) -> dict:
    # Every session with an assistant may ask on Tab (MindCopilot's L1-L3 pages keep it too);
    # a control arm's page has no suggestion control at all (study.paradigms.none.arm).
    if control_arm.is_control(condition):
        return {}
    return {"suggestionsUrl": url_for("suggestions_api.suggest", session_id=session_id)}
