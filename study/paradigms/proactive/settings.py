"""The `[proactive]` table of study.toml: how the proactive paradigms L1-L3 behave.

Only the 2 s idle threshold comes from the paper (MindCopilot App. E); every other default is
the spec's proposal ([I] in shared/specs/mindcopilot-collabllm.md A2.2-A2.4) and is here so a
researcher can change it. `schemas/study.schema.json` describes each key.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

STAGES = ("early", "middle", "late")
SECTION = "proactive"  # study.toml's table, read as `study.proactive` (study.paradigms.base: `config`)


L0_MODES = ("tab", "assistant")


@dataclass(frozen=True)
class ProactiveSettings:
    # --- L0 (user-initiated, Table 3; Fig. 1 left) ---
    # How a condition with paradigm "L0" runs: "assistant" is the paper's L0, an assistant
    # panel beside the editor (the writer asks, gets a complete response, and moves text into
    # the document themselves); "tab" is CoAuthor's Tab list, which is how L0 ran before this
    # setting existed, so a study.toml written then reads as it did. paradigm "tab" is always
    # the Tab list.
    l0: str = "tab"
    # The panel's "insert at cursor" button (spec A2.1: optional, off by default): without it
    # text reaches the document only by the writer's own copy and paste or typing.
    insert_button: bool = False
    # The longest response the panel asks for ("complete responses", Fig. 1), in tokens.
    assistant_max_tokens: int = 400
    system_prompt_l0: str = (
        "You are a writing assistant. The writer is working on the document given below and "
        "asks you for help. Answer their request completely; when they ask for text, write it "
        "so that it can be put into the document as it is."
    )
    # L1 (App. E): a suggestion is asked for after more than this many ms without a text change.
    idle_ms: int = 2000
    # L1 sees a local window (spec A2.2 reading (a)): the last this many characters.
    context_chars: int = 1500
    # L2 (App. H): the snapshot carries at most this many of the latest suggestion events
    # (<accept>, <reject>) and as many of the latest edits (<add>, <del>), counted apart.
    history_cap: int = 20
    # ... and each text it carries (a rejected suggestion, a deleted passage) cut to this many
    # characters, so the model is sent at most the document and 2 x history_cap x this (issue 24).
    history_text_chars: int = 1000
    # A suggestion is cut after its first sentence ("sentence") or kept whole up to max_tokens.
    unit: str = "sentence"
    # Word-by-word accept with Ctrl+Right (spec A2.5: optional, off by default).
    partial_accept: bool = False
    # The assistant log panel with each suggestion's rationale (Fig. 7); off by default.
    rationale_panel: bool = False
    # An edit touching an accepted span counts as a modification this long after acceptance
    # (0: for the whole session).
    modify_window_ms: int = 60000
    # --- L3 (adaptive), spec A2.4 ---
    # The writing stage is words written / target_words, cut at these two fractions.
    target_words: int = 300
    stage_cuts: tuple[float, float] = (1 / 3, 2 / 3)
    # The idle threshold per stage: longer early, "when acceptance rates are lower" (§5.2).
    stage_idle_ms: dict = field(default_factory=lambda: {"early": 4000, "middle": 3000, "late": 2000})
    # Strategy per stage (§5.2: L1 does relatively better early, L2 later).
    stage_strategy: dict = field(default_factory=lambda: {"early": "L1", "middle": "L2", "late": "L2"})
    # After this many rejections in a row the threshold grows by reject_multiplier per further
    # rejection, up to max_idle_ms; an acceptance resets it.
    reject_streak: int = 3
    reject_multiplier: float = 1.5
    max_idle_ms: int = 10000
    # Length: the next suggestion is about length_factor x the median words the writer kept of
    # the last length_window accepted suggestions, between min_tokens and the condition's
    # max_tokens; before any acceptance, the condition's max_tokens.
    length_window: int = 5
    length_factor: float = 1.5
    min_tokens: int = 8
    system_prompt_l1: str = (
        "You are a co-writing assistant. Continue the writer's text from exactly where it stops "
        "with a short continuation (at most one sentence) in the same language, style and voice. "
        "Do not repeat the text. Reply with the continuation only."
    )
    system_prompt_l2: str = (
        "You are a co-writing assistant. The writer's document is given as a snapshot that "
        "records your earlier suggestions and the writer's reactions: <accept> text the writer "
        "accepted, <reject> suggestions the writer rejected, <del> text the writer deleted, "
        "<add> text the writer added. Learn from these reactions and continue the text from "
        "exactly where it stops with a short continuation (at most one sentence) in the same "
        "language, style and voice. Reply with the continuation only."
    )

    @classmethod
    def from_mapping(cls, data: dict) -> ProactiveSettings:
        known = {f.name for f in fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        if "stage_cuts" in values:
            values["stage_cuts"] = tuple(values["stage_cuts"])
        for key in ("stage_idle_ms", "stage_strategy"):
            if key in values:
                values[key] = {**getattr(cls(), key), **values[key]}
        return cls(**values)

    def assistant_panel(self, paradigm: str) -> bool:
        """Whether a condition of `paradigm` writes with the assistant panel (the paper's L0)."""
        return paradigm == "L0" and self.l0 == "assistant"

    def tab_list(self, paradigm: str) -> bool:
        """Whether a condition of `paradigm` asks for CoAuthor's suggestion list with Tab."""
        return paradigm == "tab" or (paradigm == "L0" and self.l0 == "tab")

    def browser(self) -> dict:
        """What the editor needs to trigger, show and track suggestions (nothing secret)."""
        return {
            "idleMs": self.idle_ms,
            "partialAccept": self.partial_accept,
            "rationalePanel": self.rationale_panel,
            "modifyWindowMs": self.modify_window_ms,
            "targetWords": self.target_words,
            "stageCuts": list(self.stage_cuts),
            "stageIdleMs": dict(self.stage_idle_ms),
            "rejectStreak": self.reject_streak,
            "rejectMultiplier": self.reject_multiplier,
            "maxIdleMs": self.max_idle_ms,
        }


def load(data: dict, directory, source) -> ProactiveSettings:
    """The study's [proactive] table, its defaults when the file has none."""
    settings = ProactiveSettings.from_mapping(data.get(SECTION, {}))
    low, high = settings.stage_cuts
    if low > high:
        # Cuts out of order leave no middle stage: every writer would go from early to late
        # (two equal cuts say so on purpose).
        raise ValueError(
            f"{source}: {SECTION}.stage_cuts: {[low, high]} is out of order: the first ends the early "
            f"stage, the second the middle one. Fix: list them in order, [{high}, {low}]."
        )
    for i, condition in enumerate(data.get("conditions", [])):
        paradigm = condition.get("paradigm", "L0")
        if "unit" in condition and paradigm in ("L0", "L1", "L2", "L3") and not settings.tab_list(paradigm):
            # A condition's unit cuts Tab suggestions (study.paradigms.tab.engine); ghost text and
            # the assistant panel's responses would ignore it.
            shows, fix = (("the assistant panel's complete responses", f'remove unit, or set [{SECTION}] l0 = "tab" for the Tab list')
                          if paradigm == "L0" else
                          ("ghost text", f'remove unit (ghost text is cut by [{SECTION}] unit: "sentence" or "span")'))
            raise ValueError(
                f"{source}: conditions[{i}] ('{condition.get('name', i)}').unit: paradigm \"{paradigm}\" shows "
                f"{shows}, not the Tab list a condition's unit cuts. Fix: {fix}."
            )  # fmt: skip
    return settings
