"""What the core's editor page needs for Tab suggestions (study.paradigms.base.Paradigm.editor),
and its part of that page: static/editor-suggestions.js (the request and the popup),
editor-tab.js (the keys and records), editor-suggestions.css and templates/tab/ (the list, the
line about the keys), served by `blueprint`."""

from __future__ import annotations

from flask import Blueprint, url_for

from study import control_arm
from study.server import model_calls

blueprint = Blueprint("tab", __name__, template_folder="templates", static_folder="static",
                      static_url_path="/tab-static")  # fmt: skip


def boot(study, condition, session_id: str) -> dict:
    # Every session with an assistant may ask on Tab (MindCopilot's L1-L3 pages keep it too);
    # a control arm's page has no suggestion control at all (study.control_arm).
    if control_arm.is_control(condition):
        return {}
    if condition.paradigm == "chat":
        # A chat arm of a writing study: its panel instead of the Tab list (study.paradigms.chat.editor).
        return {}
    if study.proactive.assistant_panel(condition.paradigm):
        # MindCopilot's L0 as the paper ran it: the assistant panel instead of the Tab list
        # (study.paradigms.proactive.editor).
        return {}
    # The page waits as long as the server gives the model ([suggestions] timeout_seconds).
    return {"suggestionsUrl": url_for("suggestions_api.suggest", session_id=session_id),
            "suggestionsWaitMs": model_calls.page_wait_ms(study)}
