"""`study simulate`'s writer in a MindCopilot study (L1-L3 ghost text, and L0 beside them).

The writer types as on the writing path (study.simulate.participant); where a Tab writer would
press Tab, this one pauses. The pause asks POST /api/sessions/<id>/proactive as the editor's idle
timer does (static/editor-proactive-trigger.js), with the interaction memory L2 and L3 send, and
the ghost text that comes back is answered per persona (or as the writers' model says):

- accept: Tab takes it all;
- partial: Ctrl+Right takes its first word, then the writer types on (closed as "typed");
- modify: Tab takes it all, then the writer deletes its last word (suggestion-modify);
- reject: Esc.

Every record carries `proactive`, logged in the editor's order, so the session passes the event
API's provenance rules (study.paradigms.proactive.curation.provenance) and exports in the
extended format. An L0 session of the same study presses Tab ([proactive] l0 = "tab") or asks
the assistant panel (study.paradigms.proactive.assistant_simulate), its records carrying
`proactive` too (the server fills in the paradigm, study.paradigms.proactive.arrival).
"""

from __future__ import annotations

import time

from study.simulate.editor import EditorLog, clean_suggestions
from study.simulate.participant import Participant
from study.simulate.writer import FILLERS, parse_json

REACTIONS = ("accept", "partial", "modify", "reject")
GHOST = (
    "You paused, and the assistant shows this continuation in grey after your text:\n<<<{text}>>>\n"
    'What do you do? Answer with JSON: {{"react": "accept"}} (Tab: take it all), '
    '{{"react": "partial"}} (take only its first word), {{"react": "modify"}} (take it, then '
    'change its ending) or {{"react": "reject"}} (Esc: dismiss it).'
)


def participant(http, writer, access_code, *, study, mark, choose_prompt, record):
    """The declaration's `simulate` hook (study.paradigms.base.Paradigm)."""
    return ProactiveParticipant(http, writer, access_code, mark=mark, choose_prompt=choose_prompt)


def react(writer, suggestion: str) -> str:
    """What the writer does with a ghost text: the model's answer, else the persona's habits."""
    answer = parse_json(writer.ask_model(GHOST.format(text=suggestion), max_tokens=20))
    if answer is not None and answer.get("react") in REACTIONS:
        writer.decided(True)
        return answer["react"]
    writer.decided(False)
    persona, rng = writer.persona, writer.rng
    if rng.random() >= persona.accept_rate:
        return "reject"
    taken = rng.random()
    if taken < persona.partial_rate:
        return "partial"
    if taken < persona.partial_rate + persona.modify_rate:
        return "modify"
    return "accept"


class GhostLog(EditorLog):
    """The writing page's log with the `proactive` extension on every record."""

    def record(self, name: str, source: str, proactive: dict | None = None, **details) -> dict:
        entry = super().record(name, source, **details)
        entry["proactive"] = dict(proactive or {})
        return entry

    def insert(self, text: str, extension: dict) -> None:
        """Accepted ghost text, appended at the end: a text-insert (api) naming its suggestion."""
        delta = self._append_delta(text)
        self.text += text
        self.record("text-insert", "api", extension, textDelta=delta)

    def delete_end(self, count: int) -> str:
        """The writer deletes the last `count` characters at once (a selection, then Delete)."""
        gone = self.text[-count:]
        delta = {"ops": [{"retain": len(self.text) - count}, {"delete": count}]}
        self.text = self.text[:-count]
        self.record("text-delete", "user", textDelta=delta)
        return gone


class ProactiveParticipant(Participant):
    def editor_log(self, boot: dict) -> EditorLog:
        if not boot.get("extension") and "proactive" not in boot:
            return super().editor_log(boot)  # a plain CoAuthor study's vocabulary
        self.settings = boot.get("proactive")
        self.history: list[dict] = []  # what L2 and L3 send (schemas/api/proactive-request)
        self.outcomes: list[str] = []
        self.spans: list[dict] = []  # accepted ghost texts: {start, end}, for kept_words
        self.stage = None
        self.prompt_words = len(boot["prompt"].split())  # not the writer's: L3's stage leaves them out
        return GhostLog(boot["prompt"], boot["controls"])

    def _ask(self, log: EditorLog, url: str, most: int) -> None:
        if getattr(self, "settings", None) is None:
            return super()._ask(log, url, most)  # L0: Tab, as on the writing path
        return self._pause(log)

    def _type(self, log: EditorLog, text: str) -> None:
        start = len(log.text)
        super()._type(log, text)
        if getattr(self, "settings", None) is not None and len(log.text) > start:
            self.history.append({"kind": "add", "index": start, "length": len(log.text) - start})

    # -- one pause ----------------------------------------------------------------------------

    def _threshold(self, text: str) -> tuple[int, str | None]:
        """The idle threshold and writing stage, as editor-proactive-trigger.js computes them (L3's
        rule 3, study.paradigms.proactive.policy)."""
        s = self.settings
        if not s["staged"]:
            return s["idleMs"], None
        progress = max(0, len(text.split()) - self.prompt_words) / max(1, s["targetWords"])
        cuts = s["stageCuts"]
        stage = "early" if progress < cuts[0] else "middle" if progress < cuts[1] else "late"
        run = 0
        for outcome in reversed(self.outcomes):
            if outcome.startswith("accepted"):
                break
            run += outcome == "rejected"
        extra = max(0, run - s["rejectStreak"] + 1)
        idle = s["stageIdleMs"][stage] * s["rejectMultiplier"] ** extra
        return round(min(s["maxIdleMs"], idle)), stage

    def _pause(self, log: GhostLog) -> None:
        if log.text == getattr(self, "asked_about", None) or not log.text.strip():
            # The editor asks once per version of a text with something in it: a writer waiting
            # on an unchanged text gets no new ghost text, and writes on.
            self._type(log, self.writer.rng.choice(FILLERS))
            return
        self.asked_about = log.text
        idle_ms, stage = self._threshold(log.text)
        if stage and stage != self.stage:
            log.record("stage-change", "api", {"stage": stage})
        self.stage = stage
        log.record("suggestion-get", "api", {"trigger": "idle", "idleMs": idle_ms, "stage": stage})
        self.queries += 1
        body = {
            "doc": log.text, "idle_ms": idle_ms,
            "history": self.history if self.settings["stateful"] else [],
            "outcomes": list(self.outcomes),
            "kept_words": [len(log.text[s["start"]:s["end"]].split()) for s in self.spans],
        }  # fmt: skip
        response = self.http.post(self.settings["url"], json=body)
        answer = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        if response.status_code != 200 or not answer.get("suggestion"):
            log.record("suggestion-fail", "api", {"reason": str(answer.get("error") or response.status_code)[:300]})
            self.count_failure(response)
            if response.status_code == 429:
                time.sleep(1)  # the server's per-minute limit: a person would wait too
            return
        item = clean_suggestions([answer["suggestion"]])[0]
        sid = answer["suggestionId"]
        log.record("suggestion-open", "api", {"suggestionId": sid, "stage": answer.get("stage"),
                                              "maxTokens": answer.get("maxTokens")},
                   currentSuggestions=[item])  # fmt: skip
        self._answer(log, sid, item["original"], react(self.writer, item["original"]))

    def _answer(self, log: GhostLog, sid: int, text: str, reaction: str) -> None:
        words = text.split()
        if reaction == "partial" and len(words) > 1:
            piece = text[: len(text) - len(text.lstrip())] + words[0]
            log.record("suggestion-select", "user", {"suggestionId": sid, "partial": True})
            self._take(log, sid, piece, partial=True)
            # The writer types on: the rest of the ghost text goes (editor-proactive.js: "typed").
            log.record("suggestion-close", "user", {"suggestionId": sid, "closeReason": "typed"})
            self.outcomes.append("accepted")
        elif reaction in ("accept", "modify", "partial") and text:
            log.record("suggestion-select", "user", {"suggestionId": sid, "partial": False})
            log.record("suggestion-close", "api", {"suggestionId": sid, "closeReason": "accept"})
            start = self._take(log, sid, text, partial=False)
            self.outcomes.append("accepted")
            if reaction == "modify" and len(words) > 1:
                self._modify(log, sid, start, len(text) - text.rstrip().rfind(" "))
        else:
            log.record("suggestion-close", "user", {"suggestionId": sid, "closeReason": "esc"})
            self.outcomes.append("rejected")
            self.history.append({"kind": "reject", "index": len(log.text), "text": text})

    def _take(self, log: GhostLog, sid: int, piece: str, *, partial: bool) -> int:
        start = len(log.text)
        log.insert(piece, {"suggestionId": sid, "partial": partial,
                           "span": {"index": start, "length": len(piece)}})  # fmt: skip
        self.spans.append({"start": start, "end": start + len(piece)})
        self.history.append({"kind": "accept", "index": start, "length": len(piece)})
        self.accepted += 1
        return start

    def _modify(self, log: GhostLog, sid: int, start: int, count: int) -> None:
        """The writer deletes the taken text's last word: an edit inside an accepted span."""
        index = len(log.text) - count
        gone = log.delete_end(count)
        span, item = self.spans[-1], self.history[-1]
        span["end"] = len(log.text)
        item["length"] = span["end"] - start
        self.history.append({"kind": "del", "index": index, "text": gone})
        self.outcomes[-1] = "accepted_modified"
        log.record("suggestion-modify", "api", {"suggestionId": sid, "span": {"index": start, "length": span["end"] - start},
                                                "text": log.text[start : span["end"]]})  # fmt: skip
