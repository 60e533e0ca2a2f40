"""Walking a chat session through the Flask test client."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from study import config
from study.cli import write_study_files
from tests.conftest import CONTACT

# The landing page's two required boxes ([texts] instructions_confirmations).
CONFIRMED = {"confirm1": "yes", "confirm2": "yes"}
ANSWER = "I want a warm and honest tone with short paragraphs and one vivid example."  # 14 words


def start_chat(client, access_code: str = "chat-1") -> str:
    response = client.get("/task", query_string={"access_code": access_code})
    session_id = response.location.split("/")[2]
    assert client.post(f"/s/{session_id}/consent", data={"consent": "yes"}).status_code == 302
    response = client.post(f"/s/{session_id}/instructions", data=CONFIRMED)
    assert response.location == f"/s/{session_id}/intent", response.location
    return session_id


def choose_intent(client, session_id: str) -> str:
    page = client.get(f"/s/{session_id}/intent").data.decode()
    key = re.search(r'name="intent" value="([^"]+)"', page).group(1)
    assert client.post(f"/s/{session_id}/intent", data={"intent": key}).location == f"/s/{session_id}/prewriting"
    return key


def prewrite(client, session_id: str, answers: int = 6) -> None:
    form = {f"q{n}": ANSWER for n in range(1, answers + 1)}
    response = client.post(f"/s/{session_id}/prewriting", data=form)
    assert response.location == f"/s/{session_id}/chat", response.data.decode()[-500:]


def say(client, session_id: str, text: str = "Please help me with the opening paragraph.", client_id: str | None = None):
    return client.post(
        f"/api/sessions/{session_id}/chat/messages",
        json={"client_id": client_id or uuid.uuid4().hex, "content": text},
    )


def rate(client, session_id: str, occasion: int, value: int = 7):
    return client.post(
        f"/api/sessions/{session_id}/surveys/periodic/{occasion}", json={"answers": {"periodic_rating": value}}
    )


def chat_arm_study(folder: Path, endpoint_url: str) -> config.Study:
    """RealHumanEval's design with its chat arm only, written to `folder`: every writer gets the
    panel beside the editor, answered by the model at `endpoint_url`."""
    write_study_files(folder, design="realhumaneval", replacements={
        "min_seconds = 600": "min_seconds = 0", 'endpoint = ""': f'endpoint = "{endpoint_url}"', **CONTACT,
    })  # fmt: skip
    toml = folder / "study.toml"
    text = toml.read_text()
    toml.write_text(text[: text.index("[[conditions]]")] + text[text.index('[[conditions]]\nname = "chat"') :])
    return config.load(folder)
