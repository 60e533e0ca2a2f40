"""What the core's editor page needs for ghost text and L0's assistant panel
(study.paradigms.base.Paradigm.editor), and its part of that page, served by `blueprint`:
static/editor-ghost.js and editor-proactive*.js (L1-L3), editor-assistant.js and .css with
templates/proactive/assistant_panel.html (L0)."""

from __future__ import annotations

from flask import Blueprint, url_for

from study.paradigms.proactive import PROACTIVE, coauthor_log, is_proactive_study
from study.server import contract, model_calls
from study.paradigms.proactive.memory import interaction_memory

blueprint = Blueprint("proactive", __name__, template_folder="templates", static_folder="static",
                      static_url_path="/proactive-static")  # fmt: skip


def boot(study, condition, session_id: str) -> dict:
    found: dict = {}
    panel = study.proactive.assistant_panel(condition.paradigm)
    if panel:
        # MindCopilot's L0: the assistant panel, no Tab list (static/editor-assistant.js).
        found["assistantPanel"] = {
            "url": url_for("proactive_api.ask_assistant", session_id=session_id),
            "insertButton": study.proactive.insert_button,
            # The longest question the panel's API takes (its text box holds no more).
            "maxRequest": contract.inlined("api/assistant-request.schema.json")["properties"]["request"]["maxLength"],
        }
    if panel or is_proactive_study(study.conditions, study.proactive):
        # MindCopilot: every paradigm's records carry `proactive` (an assistant panel's too)
        # and L0 logs window switches too (Table 5); a plain CoAuthor study keeps CoAuthor
        # 2021's vocabulary. The records' paradigm is filled in by the event API
        # (study.paradigms.proactive.arrival): the page never names the writer's condition.
        found["extension"] = coauthor_log.KEY
    if condition.paradigm in PROACTIVE:
        # One ghost text at a time, whatever n says.
        found["controls"] = {**condition.page_controls(), "currentN": "1"}
        found["proactive"] = {
            # Behaviour, not names (Table 3): L2 and L3 send the interaction history, L3 adapts
            # its idle threshold to the writing stage.
            "stateful": condition.paradigm != "L1",
            "staged": condition.paradigm == "L3",
            "url": url_for("proactive_api.suggest", session_id=session_id),
            "waitMs": model_calls.page_wait_ms(study),
            **study.proactive.browser(),
        }
    return found


def state(records: list[dict]) -> dict:
    """The interaction memory L2 and L3 requests carry (history, outcomes, accepted spans),
    rebuilt from an L1-L3 session's stored records for a browser that lost its saved copy."""
    if (records[0].get("proactive") or {}).get("paradigm") in PROACTIVE:
        return {"proactive": interaction_memory(records)}
    return {}
