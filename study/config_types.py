"""study.toml as typed objects: the `Study` a loaded file becomes (study.config.load), its
conditions (which model answers, how it decodes, which paradigm), prompts and suggestion
settings. Every part of the toolkit reads a study through these; study.config builds them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType

from study import control_arm
from study.survey import questions as survey_questions

GENRE_NOUNS = {"creative": "story", "argumentative": "essay"}


# The CoAuthor record's decoding settings that the participant's page is not given
# (Condition.page_controls): the server fills them in.
HIDDEN_CONTROLS = ("currentMaxToken", "currentTemperature", "currentTopP", "currentPresencePenalty",
                   "currentFrequencyPenalty")  # fmt: skip
# The six controls of the records of a session that had no Tab list, a control arm's
# (Condition.controls) or one whose paradigm offers none (a chat arm's:
# study.paradigms.counts_suggestions): empty, as schemas/coauthor-defs.schema.json allows, not the
# condition's n and decoding defaults, which would read as if it had offered Tab lists.
NO_TAB_CONTROLS = MappingProxyType({key: "" for key in ("currentN", *HIDDEN_CONTROLS)})


@dataclass(frozen=True)
class Condition:
    """One study condition: which model answers, and how it decodes (CoAuthor App. A.2)."""

    name: str
    genre: str = ""
    model: str = ""  # empty only in a control arm (paradigm "none", study.control_arm)
    mode: str = "completion"
    n: int = 5
    max_tokens: int = 30
    temperature: float = 1.0
    top_p: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    # How much of each model output a Tab suggestion keeps (study.suggest.postprocess.UNITS):
    # "sentence", CoAuthor's (App. A.3), or "paragraph" (Dhillon et al. CHI 2024's next-paragraph arm).
    unit: str = "sentence"
    # Chat studies (study.paradigms.chat): the assistant's system message, e.g. CollabLLM's App. C.3 prompt.
    system_prompt: str = ""
    # "tab": CoAuthor's list on Tab. MindCopilot's interaction paradigm (Table 3): "L0"
    # user-initiated (the Tab list, or the assistant panel with [proactive] l0 = "assistant"),
    # "L1" idle-triggered ghost text, "L2" stateful, "L3" adaptive (README, Proactive co-writing).
    # "none": the control arm, no assistant (study.control_arm).
    paradigm: str = "L0"
    # False closes the arm to new participants (a pilot showed it broken) while the sessions
    # given it, and within subjects the participants owed it, go on: study.server.assignment,
    # study.server.within.
    assign: bool = True

    def controls(self) -> dict[str, str]:
        """The six `current*` control values of the CoAuthor record, as the strings it stores;
        empty in a control arm, which has no generation settings (the schema allows "")."""
        values = {
            "currentN": _number_text(self.n),
            "currentMaxToken": _number_text(self.max_tokens),
            "currentTemperature": _number_text(self.temperature),
            "currentTopP": _number_text(self.top_p),
            "currentPresencePenalty": _number_text(self.presence_penalty),
            "currentFrequencyPenalty": _number_text(self.frequency_penalty),
        }
        return {key: "" for key in values} if control_arm.is_control(self) else values

    def page_controls(self) -> dict[str, str]:
        """The controls the writing page gets: `currentN` (how many suggestions it shows, which
        the writer sees anyway) and the decoding settings empty, so the page cannot tell arms
        apart that differ only in them (issue 25). The event API fills them into every stored
        record (study.server.events_api.fill_controls)."""
        return {**self.controls(), **{key: "" for key in HIDDEN_CONTROLS}}

    @cached_property
    def decoding_record(self) -> Mapping[str, str]:
        """The decoding settings every stored record gets (the page's were empty), made once:
        the event API fills them into each batch."""
        controls = self.controls()
        return {key: controls[key] for key in HIDDEN_CONTROLS}  # read only: shared by every batch


@dataclass(frozen=True)
class Prompt:
    code: str
    genre: str
    text: str
    title: str = ""

    @property
    def noun(self) -> str:
        return GENRE_NOUNS.get(self.genre, "text")

    @property
    def heading(self) -> str:
        """A one-line label for the prompt list: the title, else the first line."""
        return self.title or self.text.strip().splitlines()[0]


# What a Tab arm in chat mode asks the model for when neither it nor [suggestions] sets a system
# prompt, by its `unit`: a chat model told "the next sentence" writes one, and the next-paragraph
# arm would show a sentence where Dhillon et al. (CHI 2024) showed a paragraph.
UNIT_SYSTEM_PROMPTS = {
    unit: f"You are a writing assistant. Continue the user's text with the next {unit}. "
    "Reply with the continuation only."
    for unit in ("sentence", "paragraph")
}


@dataclass(frozen=True)
class SuggestionSettings:
    endpoint: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    timeout_seconds: float = 15.0
    max_requests_per_minute: int = 30
    blocklist: tuple[str, ...] = ()
    # "" (the default): each Tab arm in chat mode asks for its own unit (UNIT_SYSTEM_PROMPTS).
    system_prompt: str = ""

    def system_prompt_for(self, condition: Condition) -> str:
        """The system message a Tab arm in chat mode sends: its own (an opinionated arm, Jakesch
        et al.), else [suggestions] system_prompt, else the one asking for the arm's unit."""
        return condition.system_prompt or self.system_prompt or UNIT_SYSTEM_PROMPTS[condition.unit]

    def base_url(self) -> str | None:
        return self.endpoint or os.environ.get("OPENAI_BASE_URL") or None

    def api_key(self) -> str:
        # Local endpoints need no key, but the openai SDK insists on a non-empty one.
        return os.environ.get(self.api_key_env) or "no-key"


@dataclass(frozen=True)
class Study:
    """A loaded, checked study configuration."""

    directory: Path
    name: str
    title: str
    database_url: str
    pay: str
    duration_minutes: int
    min_seconds: int
    max_per_prompt: int
    prompt_selection: str
    suggestions: SuggestionSettings
    conditions: tuple[Condition, ...]
    prompts: tuple[Prompt, ...]
    # The questions of every survey asked on the participant's path (not in-session), in order:
    # the columns of the survey table a release carries (study.release.source).
    survey: tuple[survey_questions.Item, ...]
    consent_template: str
    instructions_template: str
    raw: dict = field(repr=False, compare=False, default_factory=dict)
    # Made by `study init` and kept in study.toml: MTurk finds this study's HITs by it (two
    # studies made from the same template share a name, never an id).
    id: str = ""
    # The study's contact as the consent page names them ([study] contact): the one e-mail
    # address or phone number a release publishes on purpose (study.release.contact).
    contact: str = ""
    # Every survey, `[[survey]]` first (as "post_session"), then `[[surveys]]` (study.survey).
    surveys: tuple[survey_questions.Survey, ...] = ()
    # [texts] instructions_confirmations: required checkboxes on the instructions page.
    instructions_confirmations: tuple[str, ...] = ()
    # The built-in paradigms' own tables, as every paradigm's is in `sections` (their `config`
    # hook reads them): [chat] (study.paradigms.chat.config; None for a writing study) and
    # [proactive] (study.paradigms.proactive.settings). Fields, so a test may replace one.
    chat: object = None
    proactive: object = None
    # [session] outside_paste: "allow", "flag" or "refuse" text pasted from outside the editor
    # (study.curation.origin says what counts as outside).
    outside_paste: str = "allow"
    # [design] assignment: "between" (balanced, study.server.assignment) or "within" subjects
    # (study.server.within: one session per arm, Latin-square order).
    assignment: str = "between"
    # Every paradigm's own table of study.toml, by the table's name (study.paradigms.base:
    # `config`); `study.<name>` reads the same for any paradigm's.
    sections: dict = field(default_factory=dict, repr=False, compare=False)
    # The paradigm whose own path the study takes ("chat": its conditions are chat assistants,
    # CollabLLM), else "writing" (study.paradigms.path).
    paradigm: str = "writing"

    def __getattr__(self, name: str):
        # Only for names that are not fields: a paradigm's table added in its own folder.
        sections = self.__dict__.get("sections") or {}
        if name in sections:
            return sections[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def prompt(self, code: str) -> Prompt:
        for prompt in self.prompts:
            if prompt.code == code:
                return prompt
        raise KeyError(code)

    def condition(self, name: str) -> Condition:
        for condition in self.conditions:
            if condition.name == name:
                return condition
        raise KeyError(name)

    def conditions_for(self, genre: str) -> list[Condition]:
        return [c for c in self.conditions if c.genre == genre]

    def open_conditions_for(self, genre: str) -> list[Condition]:
        """The conditions of the genre a new session may be given: those not closed with
        `assign = false`."""
        return [c for c in self.conditions_for(genre) if c.assign]


def _number_text(value: float | int) -> str:
    """CoAuthor stores control values as strings: "5", "0.9", "1" (not "1.0")."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)
