"""Fixtures for the Prolific emulator's tests: the emulator serving on a free port in a thread,
and a researcher's HTTP session on its API carrying the token, as a client would send it."""

from __future__ import annotations

import pytest
import requests

from study.prolific.emulator import State, serve_in_thread

STUDY_URL = ("https://task.example.org/start?PROLIFIC_PID={{%PROLIFIC_PID%}}"
             "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
CODE = "C1WRITE"


class Researcher:
    """Prolific's API over real HTTP: paths are relative to /api/v1/."""

    def __init__(self, running) -> None:
        self.running = running
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {running.state.token}"

    def __getattr__(self, method):
        if method not in ("get", "post", "patch", "delete"):
            raise AttributeError(method)
        return lambda path, **kwargs: getattr(self.session, method)(
            self.running.api + path.lstrip("/"), **kwargs)

    def study(self, **changes) -> dict:
        """A draft study (201), with `changes` over a valid one."""
        body = {
            "name": "Write a story with AI",
            "internal_name": "pilot",
            "description": "Write a short story with an AI assistant.",
            "external_study_url": STUDY_URL,
            "prolific_id_option": "url_parameters",
            "completion_codes": [{"code": CODE, "code_type": "COMPLETED",
                                  "actions": [{"action": "MANUALLY_REVIEW"}]}],
            "total_available_places": 2,
            "estimated_completion_time": 10,
            "reward": 150,
            "device_compatibility": ["desktop"],
            **changes,
        }
        answer = self.post("studies/", json=body)
        assert answer.status_code == 201, answer.text
        return answer.json()

    def published(self, **changes) -> dict:
        study = self.study(**changes)
        answer = self.post(f"studies/{study['id']}/transition/", json={"action": "PUBLISH"})
        assert answer.status_code == 200, answer.text
        return answer.json()

    def submissions(self, study_id: str) -> list[dict]:
        """Every submission of the study, following `_links.next` as a client must."""
        found, url = [], self.running.api + f"studies/{study_id}/submissions/"
        while url:
            page = self.session.get(url).json()
            found += page["results"]
            url = page["_links"]["next"]["href"]
        return found

    def balance(self) -> dict:
        workspace = self.get("users/me/").json()["current_workspace_id"]
        return self.get(f"workspaces/{workspace}/balance/").json()


class Participant:
    """Someone taking part through the emulator's participant side, with their own cookies."""

    def __init__(self, running, participant_id: str | None = None) -> None:
        self.running = running
        self.session = requests.Session()
        self.id = participant_id

    def take_part(self, study_id: str) -> requests.Response:
        answer = self.session.get(self.running.url + "/_emulator/take-part",
                                  params={"study_id": study_id, "participant_id": self.id or ""},
                                  allow_redirects=False)
        if answer.status_code == 302:
            self.id = self.session.cookies["prolific_pid"]
        return answer

    def finish(self, code: str | None = CODE) -> requests.Response:
        query = f"?cc={code}" if code is not None else ""
        return self.session.get(self.running.url + "/submissions/complete" + query)


def control(running, path: str, body: dict | None = None, method: str = "post"):
    """The emulator's test controls under /_emulator/."""
    return getattr(requests, method)(running.url + "/_emulator/" + path, json=body)


@pytest.fixture
def emulator(tmp_path):
    running = serve_in_thread(State(tmp_path / "prolific-emulator.json"))
    yield running
    running.stop()


@pytest.fixture
def researcher(emulator):
    return Researcher(emulator)


def take_part_and_finish(running, study_id: str, participant_id: str,
                         code: str | None = CODE) -> Participant:
    person = Participant(running, participant_id)
    assert person.take_part(study_id).status_code == 302
    assert person.finish(code).status_code == 200
    return person
