"""The interaction paradigms and their registry: the one place the core learns which exist.

- `none/`: no assistant, a study's control arm (Jakesch et al. CHI 2023; Dhillon et al. CHI 2024);
- `tab/`: CoAuthor's suggestions (Lee et al. CHI 2022), asked for with Tab (MindCopilot's L0);
- `proactive/`: MindCopilot's ghost text (L1-L3), offered when the writer pauses;
- `chat/`: CollabLLM's chat assistant beside a document the participant writes.

Each folder's `__init__.py` declares its `Paradigm` (study.paradigms.base), listed here; a
paradigm defined elsewhere (a test's, a lab's own) is added with `register()` before the server
starts, and is then served like the built-in ones.

The seam: what the core asks here, and the declaration field that answers it.

- which values a condition's `paradigm` may take in study.toml (`conditions`; study.config);
- which paradigm serves a session (`of_session`), and which pages its stages have
  (`stage_endpoints`; study.server.stages); the pages and APIs to mount (`pages`, `apis`) and
  the request schemas they declare (`schemas`; study.server.contract);
- what the core's editor page needs from it, and what a reloading editor gets back of its
  memory (`editor`; study.server.writing_stage, study.server.events_api);
- its own participant's path, if any, and what the core asks of a session on it (`path`,
  `path_hooks`; study.server.stages, study.server.surveys, study.server.participant, `study status`);
- its `study curate` commands (`curate`; study.curation.cli) and its own `study` commands
  (`commands`; study.cli);
- what `study init --paradigm` and `study demo --paradigm` write (`templates`; study.new_study, study.demo);
- what each adds to a writing study's CoAuthor log and its export (`coauthor_log`;
  study.export.coauthor, study.export.validate, `study export`), and the rules the event API
  applies to the records it adds (`events`; study.server.events_api);
- what `study export --format` writes (`exports`), its `study report` section (`report`;
  study.report) and `study simulate`'s participant (`simulate`; study.simulate.run) and its
  writer at the paradigm's part of the editor page (`simulate_part`; study.simulate.participant).

tests/test_paradigm_by_addition.py adds one this way, by a folder of the tests alone.
"""

from __future__ import annotations

import importlib

from study.paradigms import chat, none, proactive, tab
from study.paradigms.base import Paradigm, StudyTemplate

_REGISTERED: dict[str, Paradigm] = {
    p.name: p for p in (none.PARADIGM, tab.PARADIGM, proactive.PARADIGM, chat.PARADIGM)
}


# The paradigms' log hook modules (`log_hooks`), found once per registry: every event batch asks
# them whether its arm has a Tab list (study.server.events_api.fill_controls), and importing each
# by name again (four lookups and a list) cost 8 us a batch on a slow host.
_log_hooks: tuple | None = None


def register(paradigm: Paradigm) -> Paradigm:
    """Add a paradigm (or replace one of the same name); returns it, for use at module level."""
    global _log_hooks
    _REGISTERED[paradigm.name] = paradigm
    _log_hooks = None
    return paradigm


def unregister(name: str) -> None:
    global _log_hooks
    _REGISTERED.pop(name, None)
    _log_hooks = None


def registered() -> list[Paradigm]:
    """Every paradigm, the built-in ones first, in the order registered."""
    return list(_REGISTERED.values())


def named(name: str) -> Paradigm:
    try:
        return _REGISTERED[name]
    except KeyError:
        known = ", ".join(_REGISTERED) or "none"
        raise KeyError(f"no paradigm named {name!r} (registered: {known})") from None


def stage_endpoints() -> dict[str, dict[str, str]]:
    """Each paradigm's own stages, paradigm name -> stage -> Flask endpoint (study.server.stages)."""
    return {paradigm.name: dict(paradigm.stage_endpoints) for paradigm in registered()}


def path(study) -> tuple[str, ...] | None:
    """The participant's path of a study whose paradigm has one of its own (a chat study), in
    order; None for the core's (study.store.sessions.STAGES)."""
    paradigm = of_session(study, None)
    return paradigm.path if paradigm is not None and paradigm.path else None


def path_hooks(study):
    """The `path_hooks` module of the paradigm whose own path the study takes (a chat study's),
    or None for the core's path."""
    paradigm = _REGISTERED.get(study.paradigm)
    return importlib.import_module(paradigm.path_hooks) if paradigm is not None and paradigm.path_hooks else None


def condition_paradigms() -> tuple[str, ...]:
    """The values a condition's `paradigm` may take in study.toml: every paradigm's."""
    return tuple(value for paradigm in registered() for value in paradigm.conditions)


def condition_defaults(value: str) -> dict:
    """The settings the paradigm serving condition value `value` gives a condition it makes
    (study.designs.paradigm_toml); {} when it gives none."""
    return next((dict(p.condition_defaults[value]) for p in registered() if value in p.condition_defaults), {})


def export_formats() -> dict[str, Paradigm]:
    """`study export --format` formats the paradigms write, format -> its paradigm."""
    return {fmt: paradigm for paradigm in registered() for fmt in paradigm.exports}


def of_session(study, condition_name: str | None) -> Paradigm | None:
    """The paradigm serving a session: its study's (a chat study's path), else its condition's;
    None before the session has a condition."""
    if study.paradigm in _REGISTERED:
        return _REGISTERED[study.paradigm]
    if not condition_name:
        return None
    value = next((c.paradigm for c in study.conditions if c.name == condition_name), None)
    return next((paradigm for paradigm in registered() if value in paradigm.conditions), None)



def study_templates() -> dict[str, StudyTemplate]:
    """`study init --paradigm` choices, choice -> what it writes, from every paradigm."""
    found: dict[str, StudyTemplate] = {}
    for paradigm in registered():
        found.update(paradigm.templates)
    return found


def serving(study) -> list[Paradigm]:
    """The paradigms a study's sessions use: the one its path is named after (a chat study's),
    else those serving its conditions' `paradigm` values."""
    if study.paradigm in _REGISTERED:
        return [_REGISTERED[study.paradigm]]
    used = {condition.paradigm for condition in study.conditions}
    return [paradigm for paradigm in registered() if used & set(paradigm.conditions)]


def simulated_parts() -> list:
    """Every paradigm's `simulate_part` module (study.paradigms.base): how `study simulate`'s
    writer asks at its part of the editor page, in the registry's order."""
    return [module for module in (paradigm.simulated_part() for paradigm in registered()) if module]


def simulation(study):
    """The `simulate` module of the paradigm whose participant pilots `study` (study.simulate.run),
    or None for the writing path's. A paradigm with a path of its own (the chat study's) pilots
    only a study on that path: its arms in a writing study (a chat arm) are on the writing path."""
    return next((paradigm.simulation() for paradigm in serving(study)
                 if paradigm.simulate and (not paradigm.path or study.paradigm == paradigm.name)), None)  # fmt: skip


def log_hooks() -> tuple:
    """Every paradigm's `coauthor_log` module (study.paradigms.base), in the registry's order."""
    global _log_hooks
    if _log_hooks is None:
        _log_hooks = tuple(module for module in (paradigm.log_hooks() for paradigm in registered()) if module)
    return _log_hooks


def extension_events() -> frozenset[str]:
    """The event names the paradigms add to the editor's log: the strict CoAuthor file has none."""
    return frozenset().union(*(getattr(module, "EVENTS", ()) for module in log_hooks()))


def counts_suggestions(condition) -> bool:
    """Whether a session of `condition` could ask for suggestions on Tab, as far as the
    paradigms say (a chat arm's could not); the control arm is the core's (study.control_arm)."""
    return all(module.counts_suggestions(condition) for module in log_hooks() if hasattr(module, "counts_suggestions"))


def arm_card(study, condition) -> str | None:
    """What a writer of `condition` had, as a paradigm tells a release's dataset card; None
    where none does (the Tab list, the core's CoAuthor editor; the control arm is the core's)."""
    hooks = (module for module in log_hooks() if hasattr(module, "arm_card"))
    return next((text for text in (module.arm_card(study, condition) for module in hooks) if text), None)


def log_format(name: str):
    """The `coauthor_log` module of the paradigm whose extended format is `name` (e.g.
    "coauthor-proactive"), or None for the core's formats."""
    return next((module for module in log_hooks() if getattr(module, "FORMAT", None) == name), None)


def release_hooks(study) -> list:
    """The `release` modules of the paradigms a study's sessions use (study.release.source)."""
    return [module for module in (p.release_hooks() for p in serving(study)) if module]


def arm_as_run(study, condition) -> dict:
    """The settings a paradigm's replies of `condition` really ran with, where they are not the
    condition's own (a chat assistant: one reply of its own max_tokens, not a Tab list of `n`),
    for a release's arms.json and card; {} where the condition's are."""
    hooks = (module for module in release_hooks(study) if hasattr(module, "arm_as_run"))
    return next((found for found in (module.arm_as_run(study, condition) for module in hooks) if found), {})
