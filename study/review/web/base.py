"""The reviewers' workspace blueprint, which every view module registers its routes on."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint

URL_PREFIX = "/review"

blueprint = Blueprint("review", __name__)


@blueprint.app_template_filter("review_time")
def review_time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
