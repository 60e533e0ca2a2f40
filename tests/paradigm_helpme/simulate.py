"""`study simulate`'s writer on the helpme page: types as on the writing path, and where a Tab
writer would press Tab, presses "Help me" and uses the continuation or declines it."""

from __future__ import annotations

from study.simulate.editor import EditorLog, clean_suggestions
from study.simulate.pages import read_page
from study.simulate.participant import Participant


def participant(http, writer, access_code, *, study, mark, choose_prompt, record):
    return HelpMeParticipant(http, writer, access_code, mark=mark, choose_prompt=choose_prompt)


class HelpMeParticipant(Participant):
    def _step(self, stage: str, location: str, text: str, events: int) -> tuple[str, int]:
        if stage != "helpme":
            return super()._step(stage, location, text, events)
        boot = read_page(text).boot()
        # The page's boot has what the writing path's loop needs, its "ask" being Help me.
        return self._write(_BootPage({**boot, "suggestionsUrl": boot["helpUrl"]}))

    def _ask(self, log: EditorLog, url: str, most: int) -> None:
        log.ask()
        self.queries += 1
        response = self.http.post(url, json={"doc": log.text})
        if response.status_code != 200:
            log.failed()
            self.failed_queries += 1
            return
        items = clean_suggestions([{"original": response.json()["help"]}])
        log.shown(items)
        if self.writer.choose(items) is None:
            log.dismiss()
            return
        log.accept(items[0])
        self.accepted += 1


class _BootPage:
    """A page whose boot data is already read."""

    def __init__(self, boot: dict) -> None:
        self._boot = boot

    def boot(self) -> dict:
        return self._boot
