"""The study's own icon (study/static/favicon.svg): linked from every page, and answered at
/favicon.ico, where a browser looks for one when a page links none (a JSON answer, an old
bookmark), so no demo page's console shows a 404 (issue 25)."""

from __future__ import annotations

from flask import Flask, send_from_directory

from study.paths import static_dir
from study.server import contract


def add_favicon(app: Flask) -> None:
    @app.get("/favicon.ico")
    @contract.declare("The study's icon", responses={200: None})
    def favicon():
        return send_from_directory(static_dir(), "favicon.svg", mimetype="image/svg+xml", max_age=86400)
