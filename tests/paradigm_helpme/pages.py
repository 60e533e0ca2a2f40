"""The helpme paradigm's writing page: a textarea, "Help me", "Finish"."""

from __future__ import annotations

import time

from flask import Blueprint, render_template, url_for

from study.server.context import study
from study.server.stages import at_stage

blueprint = Blueprint("helpme", __name__, template_folder="templates", static_folder="static",
                      static_url_path="/helpme-static")  # fmt: skip


@blueprint.get("/s/<session_id>/helpme", endpoint="writing")
@at_stage("writing")
def writing_page(session_id, session):
    prompt = study().prompt(session["prompt_code"])
    condition = study().condition(session["condition"])
    boot = {
        "prompt": prompt.text.rstrip("\n") + "\n",
        "controls": condition.controls(),
        "minSeconds": study().min_seconds,
        "elapsedSeconds": time.time() - session["writing_started_at"],
        # The core's event log and finish button: this paradigm logs CoAuthor's records.
        "eventsUrl": url_for("events_api.post_events", session_id=session_id),
        "finishUrl": url_for("participant.finish_writing", session_id=session_id),
        "helpUrl": url_for("helpme_api.help", session_id=session_id),
    }
    # Its own table of study.toml ([helpme], tests.paradigm_helpme.config), read as the core
    # reads every paradigm's.
    button = study().helpme.button
    return render_template("helpme.html", study=study(), session=session, prompt=prompt, boot=boot, button=button)
