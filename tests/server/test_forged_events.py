"""The event API refuses proactive events no honest editor could send (issue 21, item 7): a
paradigm that is not the session's, a suggestion id this server did not give this session, and
shown or inserted text the model never sent. Real server, real model endpoint over HTTP."""

from __future__ import annotations

from dataclasses import replace

from study.server import create_app
from tests.curation.conftest import record
from tests.curation.proactive_session import Script
from tests.server.flow import start, to_writing


def _app(study, model_url, paradigm):
    conditions = tuple(replace(c, paradigm=paradigm, mode="chat") for c in study.conditions)
    study = replace(study, conditions=conditions, suggestions=replace(study.suggestions, endpoint=model_url))
    return create_app(study)


def _writing(client, code="lab-1"):
    session_id = start(client, access_code=code)
    to_writing(client, session_id, prompt="news")
    return session_id


def _ask(client, session_id, doc="The news today is that"):
    response = client.post(f"/api/sessions/{session_id}/proactive", json={"doc": doc, "idle_ms": 2000})
    assert response.status_code == 200, response.json
    return response.json["suggestionId"], response.json["suggestion"]["original"]


def _post(client, session_id, script, start_at=0):
    batch = [{"seq": seq, **{k: v for k, v in e.items() if k != "eventNum"}}
             for seq, e in enumerate(script.events) if seq >= start_at]  # fmt: skip
    return client.post(f"/api/sessions/{session_id}/events", json={"events": batch})


def _count(client, session_id):
    return client.get(f"/api/sessions/{session_id}/state").json["stored"]


def test_an_honest_accept_is_stored(study, model_url):
    client = _app(study, model_url, "L2").test_client()
    session_id = _writing(client)
    sid, text = _ask(client, session_id)
    script = Script(paradigm="L2").type(" The news").suggest(sid, text, "accept")
    response = _post(client, session_id, script)
    assert response.status_code == 200, response.json
    assert response.json["stored"] == len(script.events)


def test_events_claiming_another_paradigm_are_refused(study, model_url):
    client = _app(study, model_url, "L2").test_client()
    session_id = _writing(client)
    script = Script(paradigm="L3").type(" The news")
    response = _post(client, session_id, script)
    assert response.status_code == 422
    assert response.json["error"] == (
        "event seq 0: proactive.paradigm is not this session's paradigm; send none (the server fills it in)"
    )
    assert _count(client, session_id) == 0
    bare = Script(paradigm="L2").type(" The news")
    del bare.events[1]["proactive"]
    response = _post(client, session_id, bare)
    assert response.status_code == 422 and response.json["error"].startswith("event seq 1: proactive is missing")


def test_a_suggestion_id_of_another_session_is_refused(study, model_url):
    client = _app(study, model_url, "L1").test_client()
    mine, theirs = _writing(client, "lab-1"), _writing(client, "lab-2")
    sid, text = _ask(client, theirs)
    script = Script(paradigm="L1").type(" The news").suggest(sid, text, "accept")
    response = _post(client, mine, script)
    assert response.status_code == 422
    assert response.json["error"] == (
        f"event seq 3: proactive.suggestionId {sid} is not a suggestion this server returned "
        "to this session"
    )
    assert _count(client, mine) == 0
    made_up = Script(paradigm="L1").type(" The news").suggest(9999, text, "accept")
    assert _post(client, mine, made_up).status_code == 422


def test_shown_or_inserted_text_the_model_never_sent_is_refused(study, model_url):
    client = _app(study, model_url, "L1").test_client()
    session_id = _writing(client)
    sid, text = _ask(client, session_id)
    shown = Script(paradigm="L1").type(" The news").suggest(sid, " A much better sentence.", "accept")
    response = _post(client, session_id, shown)
    assert response.status_code == 422
    assert response.json["error"].startswith("event seq 3: currentSuggestions shows ' A much better")
    # The right text shown, then more inserted than it offered.
    script = Script(paradigm="L1").type(" The news").suggest(sid, text, "esc")
    assert _post(client, session_id, script).status_code == 200
    stored = len(script.events)
    script.add(record("suggestion-select"), suggestionId=sid, partial=False)
    script.edit(script.end, insert=text + " and more", source="api", suggestionId=sid, partial=False,
                span={"index": script.end, "length": len(text) + 9})  # fmt: skip
    response = _post(client, session_id, script, start_at=stored)
    assert response.status_code == 422
    assert "is not the next part of suggestion" in response.json["error"]
    assert _count(client, session_id) == stored


def test_a_partial_accept_inserts_the_words_in_order_across_batches(study, model_url):
    client = _app(study, model_url, "L1").test_client()
    session_id = _writing(client)
    sid, text = _ask(client, session_id)
    first, second = text.split()[:2]
    script = Script(paradigm="L1").type(" The news").suggest(sid, text, "partial")
    assert _post(client, session_id, script).status_code == 200
    stored = len(script.events)
    # The same first word again is not what follows it in the suggestion.
    script.edit(script.end, insert=" " + first, source="api", suggestionId=sid, partial=True,
                span={"index": script.end, "length": len(first) + 1})  # fmt: skip
    response = _post(client, session_id, script, start_at=stored)
    assert response.status_code == 422, (text, response.json)
    script.events.pop()
    script.text = script.text[: -len(first) - 2] + "\n"
    script.edit(script.end, insert=" " + second, source="api", suggestionId=sid, partial=True,
                span={"index": script.end, "length": len(second) + 1})  # fmt: skip
    response = _post(client, session_id, script, start_at=stored)
    assert response.status_code == 200, response.json


def test_a_batch_is_checked_against_what_another_worker_stored(study, model_url):
    # Each worker process follows the rules through the sessions it stored batches for
    # (study.paradigms.proactive.arrival); a writer's batches may reach several workers.
    from study.paradigms.proactive import arrival as proactive_arrival

    client = _app(study, model_url, "L1").test_client()
    session_id = _writing(client)
    first_id, first_text = _ask(client, session_id)
    script = Script(paradigm="L1").type(" The news").suggest(first_id, first_text, "esc")
    assert _post(client, session_id, script).status_code == 200
    this_worker = proactive_arrival._followed.get(session_id)
    assert this_worker is not None

    # The next batch reaches another worker, which has followed nothing of the session.
    proactive_arrival._followed.clear()
    second_id, second_text = _ask(client, session_id, doc=script.text)
    stored = len(script.events)
    script.suggest(second_id, second_text, "esc")
    assert _post(client, session_id, script, start_at=stored).status_code == 200

    # Back here, the second suggestion opened again is its second suggestion-open.
    proactive_arrival._followed.remember(session_id, this_worker)
    stored = len(script.events)
    script.suggest(second_id, second_text, "esc")
    response = _post(client, session_id, script, start_at=stored)
    assert response.status_code == 422, response.json
    assert f"suggestion {second_id} is opened a second time" in response.json["error"]
    assert _count(client, session_id) == stored
