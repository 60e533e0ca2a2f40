"""The arms as the released sessions ran them: a release's card and arms.json describe these.

study.toml says how each condition is set on the day of the build, and a study may change a
setting during its run under the condition's name (a model swapped after a pilot, a
temperature raised, an arm added). What ran is stored with the sessions:

- each model call's `parameters`: the configured model, mode and decoding settings it was sent
  with (and a chat assistant's reply, its system prompt: study.paradigms.chat.assistant), and
  the model the endpoint named in its reply (study.store.provenance);
- the paradigm each session was given (sessions.paradigm, study.export.as_run);
- the decoding settings the server wrote into every record of the session's log
  (study.server.events_api.fill_controls), for a session that made no model call.

Each session's settings are read as study.export.settings_as_run reads them for `study
export`'s metadata.csv, from the same read of the model calls (study.release.source), so the
card, arms.json and metadata.csv agree. An arm is listed once per paradigm and settings its
released sessions ran with, with how many sessions did, in the order of their first session. A value nothing stored records is "not
recorded" (an empty tuple here, null in arms.json), never study.toml's of today: a reader must
not be told a setting ran that did not. An arm no released session ran is listed as study.toml
has it, with 0 sessions: it is part of the study's design, and nothing claims it ran. Whether an
arm is closed to new participants (`assign = false`) is study.toml's at the build: that is the
arm's state as of the release, which the reader comparing arm sizes needs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from study import config as study_config
from study import control_arm, paradigms
from study.export import as_run, settings_as_run
from study.export.settings_as_run import SETTINGS
from study.store import make_engine, reading
from study.store import sessions as session_store

LABELS = {"paradigm": "paradigm", "model": "model", "mode": "mode", "n": "n", "max_tokens": "max tokens",
          "temperature": "temperature", "top_p": "top p", "presence_penalty": "presence penalty",
          "frequency_penalty": "frequency penalty", "unit": "unit"}  # fmt: skip
NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class Arm:
    name: str
    genre: str
    paradigm: str
    # (setting, the distinct values its sessions ran with); () where nothing recorded it.
    settings: tuple[tuple[str, tuple], ...]
    answered: tuple[str, ...] = ()  # the models the endpoint named in its replies
    sessions: int = 0
    # The system prompts its sessions' calls were sent with (a chat assistant's replies record
    # theirs); () where no call recorded one (a Tab arm's calls do not).
    system_prompts: tuple[str, ...] = ()
    # Closed to new participants (`assign = false`) in study.toml when the release is built: it
    # took nobody who began after that, so a reader must not read its smaller count as chance.
    closed: bool = False

    def values(self, key: str) -> tuple:
        return self.paradigm if key == "paradigm" else dict(self.settings)[key]

    @property
    def control(self) -> bool:
        return control_arm.is_control(self)


def planned(study: study_config.Study, condition: study_config.Condition) -> Arm:
    """The arm as study.toml has it today (with what its paradigm says its replies use)."""
    if control_arm.is_control(condition):
        settings = tuple((key, ()) for key in SETTINGS)
    else:
        found = {key: getattr(condition, key) for key in SETTINGS} | paradigms.arm_as_run(study, condition)
        # None: a setting the paradigm's replies have not (a chat assistant's reply is not cut to a unit).
        settings = tuple((key, () if found[key] is None else (settings_as_run.number(found[key]),)) for key in SETTINGS)
    own = paradigms.arm_as_run(study, condition)
    paradigm = own.get("paradigm", condition.paradigm)
    prompt = own.get("system_prompt", condition.system_prompt)  # L0's panel sends its own
    return Arm(condition.name, condition.genre, paradigm, settings, system_prompts=(prompt,),
               closed=not condition.assign)


def collect(study: study_config.Study, sessions: list[dict], calls: dict[str, list[tuple[dict, str | None]]],
            logs: dict[str, dict]) -> list[Arm]:  # fmt: skip
    """The arms `sessions` (in the order they began) ran, in study.toml's order; `calls` and
    `logs` as `load` reads them."""
    groups: dict[tuple, list] = {}
    for session in sessions:
        if not session.get("condition"):
            continue
        sent = calls.get(session["session_id"], [])
        ran = as_run.condition_as_run(study, session)
        own = paradigms.arm_as_run(study, ran)  # a chat assistant's replies: not the Tab settings
        tab_list = not own and study.proactive.tab_list(ran.paradigm)
        settings = settings_as_run.session_settings([call for call, _ in sent], logs.get(session["session_id"]),
                                                    bool(own), tab_list)  # fmt: skip
        prompts = tuple(sorted({call["system_prompt"] for call, _ in sent if isinstance(call.get("system_prompt"), str)}))
        group = groups.setdefault((ran.name, own.get("paradigm", ran.paradigm), settings, prompts), [0, set()])
        group[0] += 1
        group[1].update(model for _, model in sent if model)
    arms = []
    for condition in study.conditions:
        ran = [(key, group) for key, group in groups.items() if key[0] == condition.name]
        if not ran:
            arms.append(planned(study, condition))
        arms += [Arm(name, condition.genre, paradigm, settings, tuple(sorted(answered)), count, prompts,
                     closed=not condition.assign)
                 for (name, paradigm, settings, prompts), (count, answered) in ran]  # fmt: skip
    return arms


def load(study: study_config.Study, released: Collection[str],
         calls: dict[str, list[tuple[dict, str | None]]]) -> list[Arm]:
    """The arms the `released` sessions (the study's session ids) ran, from the study database
    and its model calls as read for the export (`calls`, study.store.provenance.calls_of)."""
    engine = make_engine(study.database_url)
    try:
        with reading(engine) as connection:
            sessions = [s for s in session_store.all_sessions(connection) if s["session_id"] in released]
            logs = {s["session_id"]: settings_as_run.stored_log_settings(connection, s["session_id"]) for s in sessions}
    finally:
        engine.dispose()
    return collect(study, sessions, calls, logs)


def text(values: tuple) -> str:
    """A setting as the card writes it: "not recorded" when nothing recorded it."""
    return "; ".join(str(v) for v in values) if values else NOT_RECORDED


def to_json(arm: Arm) -> dict:
    """An arm as arms.json lists it: a setting its sessions ran with two values of is a list."""
    settings = {key: _one_or_list(v) for key, v in arm.settings}
    return {"name": arm.name, "paradigm": arm.paradigm, "genre": arm.genre, **settings,
            "system_prompt": _one_or_list(arm.system_prompts), "answered_models": list(arm.answered),
            "sessions": arm.sessions, "closed": arm.closed}  # fmt: skip


def _one_or_list(values: tuple):
    return None if not values else values[0] if len(values) == 1 else list(values)


def differences(study: study_config.Study, arms: list[Arm]) -> list[str]:
    """Where study.toml today says otherwise than the released sessions ran, one sentence each.
    The card gives these beside the table of what ran rather than today's values in it: a reader
    re-running the study from study.toml (or the preregistration's copy of it) must learn that
    it no longer says what these sessions had."""
    notes, unused = [], []
    # A chat study's card counts conversations (its instances), a writing study's sessions.
    unit = "conversation" if study.chat is not None else "session"
    for condition in study.conditions:
        ran = [arm for arm in arms if arm.name == condition.name and arm.sessions]
        if not ran:
            unused.append(f"`{condition.name}`")
            continue
        today = planned(study, condition)
        keys = ("paradigm",) + (() if today.control else SETTINGS)
        for key in keys:
            now = today.values(key)
            had = Counter()
            for arm in ran:
                had[arm.values(key)] += arm.sessions
            recorded = {values for values in had if values}
            if not recorded or recorded == {now}:
                continue
            parts = [f"{n} ran with {text(values) if key != 'paradigm' else values}" if values else f"{n} did not record it"
                     for values, n in had.items()]  # fmt: skip
            shown = now if key == "paradigm" else text(now) if now else "none"
            total = sum(had.values())
            notes.append(f"study.toml now sets {LABELS[key]} {shown} for `{condition.name}`; of its {total} "
                         f"released {unit}{'s' if total != 1 else ''}, {', '.join(parts)}.")  # fmt: skip
        notes += _prompt_differs(study, condition, ran, unit)
    if unused:
        names = unused[0] if len(unused) == 1 else f"{', '.join(unused[:-1])} and {unused[-1]}"
        notes.append(f"No released {unit} ran with {names}, which study.toml has as "
                     f"condition{'s' if len(unused) != 1 else ''}.")  # fmt: skip
    return notes


def _prompt_differs(study: study_config.Study, condition: study_config.Condition, ran: list[Arm],
                    unit: str) -> list[str]:
    """The note when sessions' calls recorded a system prompt other than study.toml's now. The
    prompts themselves (a few KB each) are left to arms.json: the card only points there. Today's
    is the condition's own, or for a Tab arm in chat mode without one what the study sends
    (SuggestionSettings.system_prompt_for, as study.paradigms.tab.engine's calls do), or the
    one its paradigm sends in its place (`arm_as_run`'s `system_prompt`: MindCopilot's L0 panel)."""
    own = paradigms.arm_as_run(study, condition).get("system_prompt")  # L0's panel: its own
    today = {own} if own is not None else {condition.system_prompt, study.suggestions.system_prompt_for(condition)}
    other = sum(arm.sessions for arm in ran if arm.system_prompts and not set(arm.system_prompts) <= today)
    if not other:
        return []
    total = sum(arm.sessions for arm in ran)
    return [f"study.toml now sets another system prompt for `{condition.name}` than {other} of its {total} "
            f"released {unit}{'s' if total != 1 else ''} ran with; `arms.json` gives each that ran."]  # fmt: skip


@dataclass(frozen=True)
class ArmsAsRun:
    """What a release says of its arms: as they ran, and where study.toml now differs."""

    arms: list[Arm]
    notes: list[str]


def study_arms(study_path: Path, released: Collection[str],
               calls: dict[str, list[tuple[dict, str | None]]]) -> ArmsAsRun:
    """The arms of the study in `study_path` as its `released` sessions (the study's session
    ids) ran them, and where its study.toml now says otherwise; `calls` as `load` takes them."""
    study = study_config.load(study_path)
    arms = load(study, released, calls)
    return ArmsAsRun(arms, differences(study, arms))
