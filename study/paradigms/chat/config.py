"""`[chat]` of study.toml: a chat document-creation study (CollabLLM §6, App. E; spec C6).

Checked against `schemas/chat.schema.json` (the intent bank file too), then the checks a schema
cannot express: every intent's type is a configured document type, every type has intents,
the conditions are chat assistants. Errors name the file, the key and the fix.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jsonschema

from study.paradigms.chat import arm as chat_arm
from study.paths import schemas_dir
from study.survey.definition import describe_error

SECTION = "chat"  # study.toml's table, read as `study.chat` (study.paradigms.base: `config`)
# The shipped intent bank, one file per document type ([chat] intent_bank = "" reads it).
SHIPPED_INTENTS = Path(__file__).parent / "intents"

# CollabLLM's three document types (§6: "blog post, creative writing, or personal statement").
DEFAULT_TYPES = (
    ("blog_post", "Blog Post"),
    ("creative_writing", "Creative Writing"),
    ("personal_statement", "Personal Statement"),
)


class ChatConfigError(ValueError):
    pass


@dataclass(frozen=True)
class DocumentType:
    name: str
    label: str


@dataclass(frozen=True)
class Intent:
    type: str
    index: int
    title: str
    description: str
    questions: tuple[str, ...]

    @property
    def key(self) -> str:
        """How a session records its intent: "creative_writing/39"."""
        return f"{self.type}/{self.index}"


@dataclass(frozen=True)
class SimulatorSettings:
    """`[chat.simulator]`: how `study simulate`'s chat users behave (CollabLLM's user simulator,
    spec B4.2). They see the whole conversation, hold a goal document and may end the chat."""

    # The turn limit. CollabLLM's simulated evaluation stops at 8 (max_new_turns); a live
    # study needs min_exchanges first, so a pilot's users get room beyond it [I].
    max_exchanges: int = 16
    # App. C.1's completion signal; a message containing it ends the conversation.
    termination_marker: str = "[[TERMINATE CHAT]]"
    # A folder next to study.toml with one goal document per intent, TYPE-INDEX.txt (e.g.
    # creative_writing-39.txt); an intent without one gets a goal drafted by the users' model.
    goal_documents: Path | None = None
    # How much of the conversation (characters, from its end) the prompt carries; CollabLLM's
    # simulator reads all of it, a small model's context may not hold that much.
    history_chars: int = 24000
    # B4.2: the simulator samples at temperature 1.0.
    temperature: float = 1.0

    def goal_file(self, intent_key: str) -> Path | None:
        if self.goal_documents is None:
            return None
        path = self.goal_documents / (intent_key.replace("/", "-") + ".txt")
        return path if path.is_file() else None


@dataclass(frozen=True)
class ChatSettings:
    document_types: tuple[DocumentType, ...]
    intents: tuple[Intent, ...]
    # App. E: "at least 8 meaningful exchanges"; the periodic rating is an in_session survey.
    min_exchanges: int = 8
    intents_shown: int = 12
    intent_selection: str = "choose"
    # App. E: at least 6 pre-writing answers, each longer than 8 words.
    prewriting_min_answers: int = 6
    prewriting_min_words: int = 9
    target_words: tuple[int, int] = (200, 500)
    max_message_chars: int = 4000
    # The conversation sent for a reply: its latest messages within this many characters.
    history_chars: int = 60_000
    max_tokens: int = 512
    # The most characters of the conversation a reply reads (study.paradigms.chat.assistant.window):
    # the system prompt, the document pane and the latest turns that fit; 0 reads it all.
    context_chars: int = 24000
    # A rating that falls due after the exchange the participant finishes at (after exchange 9:
    # every 3) is skipped by default (spec B3 [I]: the final survey covers it); True asks it first.
    rating_before_finish: bool = False
    # "merged": the page merges the assistant's replies into a running document the participant
    # sees read-only (CollabLLM App. E, "do not take text merging into account"); "edited": the
    # pane is the participant's own, with a button to insert a reply (static/chat.js).
    document_pane: str = "merged"
    notice: str = ""
    # Read on every chat page (spec C6.1: an operator notice "that can be edited live").
    notice_file: Path | None = None
    simulator: SimulatorSettings = SimulatorSettings()

    def current_notice(self) -> str:
        """The notice file's text when there is one (read now), else `notice`."""
        if self.notice_file is not None:
            try:
                return self.notice_file.read_text(encoding="utf-8").strip()
            except OSError:
                return self.notice  # being rewritten, or removed: fall back, never fail the page
        return self.notice

    def document_type(self, name: str) -> DocumentType:
        return next(t for t in self.document_types if t.name == name)

    def intents_of(self, type_name: str) -> list[Intent]:
        return [i for i in self.intents if i.type == type_name]

    def intent(self, key: str) -> Intent:
        return next(i for i in self.intents if i.key == key)


def load(data: dict, directory: Path, source: Path) -> ChatSettings | None:
    return load_chat(data, directory, source)


def named_files(study) -> dict:
    """The intent bank as participants are offered it, for the preregistration record
    (study.paradigms.base: `config`): its file's, its folder's or the shipped one (which a new
    version of the toolkit may reword); {} for a study without [chat] or with its intents
    written in study.toml, which the record holds already."""
    settings, table = study.sections.get(SECTION), study.raw.get(SECTION) or {}
    if settings is None or "intents" in table:
        return {}
    # Each intent by its key ("creative_writing/39"), so a reworded one is named by it.
    return {"chat.intent_bank": [{"key": i.key, "title": i.title, "description": i.description,
                                  "questions": list(i.questions)} for i in settings.intents]}  # fmt: skip


def problems(data: dict, source: Path) -> list[str]:
    """What is wrong with a study.toml's conditions as far as chat goes: in a chat study every
    condition is an assistant, so neither a control arm nor a chat arm belongs there."""
    if SECTION not in data:
        return []
    found = [
        f"{source}: conditions[{i}]: paradigm = \"none\" (no assistant) is for writing studies; "
        "a chat study's conditions are assistants. Fix: remove the condition or the [chat] table."
        for i, condition in enumerate(data["conditions"]) if condition.get("paradigm") == "none"
    ]
    return found + chat_arm.config_problems(data["conditions"], source, chat_study=True)


def load_chat(data: dict, directory: Path, source: Path) -> ChatSettings | None:
    """The chat settings of a parsed study.toml, or None when it has no [chat] table."""
    table = data.get("chat")
    if table is None:
        return None
    problems = [describe_error(e, str(source), "chat") for e in _errors(table)]
    if problems:
        raise ChatConfigError("\n".join(problems))
    intents_data, origin = table.get("intents"), str(source)
    if intents_data is None:
        name = table.get("intent_bank") or ""
        path = directory / name if name else SHIPPED_INTENTS
        intents_data, where, origin = read_bank(path, source)
    else:
        where = [f"{origin}: intents[{i}]" for i in range(len(intents_data))]
    types = tuple(
        DocumentType(t["name"], t["label"]) for t in table.get("document_types", [])
    ) or tuple(DocumentType(*pair) for pair in DEFAULT_TYPES)
    intents = tuple(
        Intent(i["type"], i["index"], i["title"], i["description"], tuple(i["questions"]))
        for i in intents_data
    )
    problems = _check(types, intents, data.get("conditions", []), where, origin, source)
    if problems:
        raise ChatConfigError("\n".join(problems))
    keys = {
        key: table[key]
        for key in ("min_exchanges", "intents_shown", "intent_selection", "prewriting_min_answers",
                    "prewriting_min_words", "max_message_chars", "history_chars", "max_tokens", "context_chars", "notice",
                    "rating_before_finish", "document_pane")
        if key in table
    }  # fmt: skip
    if "target_words" in table:
        keys["target_words"] = tuple(table["target_words"])
    if table.get("notice_file"):
        keys["notice_file"] = directory / table["notice_file"]
    if "simulator" in table:
        keys["simulator"] = _simulator(table["simulator"], directory, source, keys.get("min_exchanges", 8))
    return ChatSettings(document_types=types, intents=intents, **keys)


def read_bank(path: Path, source: Path) -> tuple[list[dict], list[str], str]:
    """The [[intents]] of a bank file, or of every *.toml in a bank folder (one file per type,
    as the shipped bank and `study chat draft-intents` write them), each file checked alone so
    an error names the file it is in."""
    files = sorted(path.glob("*.toml")) if path.is_dir() else [path]
    if not files:
        raise ChatConfigError(
            f"{source}: chat.intent_bank: the folder '{path}' holds no .toml file. "
            "Fix: add one file of [[intents]] per document type (study chat draft-intents writes one)."
        )
    intents, where = [], []
    for file in files:
        try:
            with file.open("rb") as handle:
                bank = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ChatConfigError(
                f"{source}: chat.intent_bank: cannot read '{file}' ({exc}). "
                "Fix: create the file with [[intents]] tables, or set intent_bank = \"\"."
            ) from None
        found = bank.get("intents", [])
        problems = [describe_error(e, str(file), "intents") for e in _errors({"intents": found})]
        if problems:
            raise ChatConfigError("\n".join(problems))
        intents.extend(found)
        where.extend(f"{file}: intents[{i}]" for i in range(len(found)))
    return intents, where, str(path)


def _simulator(table: dict, directory: Path, source: Path, min_exchanges: int) -> SimulatorSettings:
    values = {k: table[k] for k in ("max_exchanges", "termination_marker", "history_chars", "temperature") if k in table}
    if table.get("goal_documents"):
        values["goal_documents"] = directory / table["goal_documents"]
        if not values["goal_documents"].is_dir():
            raise ChatConfigError(
                f"{source}: chat.simulator.goal_documents: '{values['goal_documents']}' is not a folder. "
                "Fix: create it with one TYPE-INDEX.txt per intent (e.g. creative_writing-39.txt), or set \"\"."
            )
    settings = SimulatorSettings(**values)
    if settings.max_exchanges < min_exchanges:
        raise ChatConfigError(
            f"{source}: chat.simulator.max_exchanges: {settings.max_exchanges} is below chat.min_exchanges "
            f"({min_exchanges}), so no simulated user could finish. Fix: set it to at least {min_exchanges}."
        )
    return settings


def _check(types, intents, conditions, where: list[str], origin: str, source: Path) -> list[str]:
    problems = []
    names = [t.name for t in types]
    if len(set(names)) != len(names):
        problems.append(f"{source}: chat.document_types: a name is used twice. Fix: give each type its own name.")
    seen = set()
    for position, intent in enumerate(intents):
        if intent.type not in names:
            problems.append(
                f"{where[position]}.type: '{intent.type}' is not a document type. "
                f"Fix: use one of {names} or add it to [[chat.document_types]]."
            )
        if intent.key in seen:
            problems.append(
                f"{where[position]}.index: {intent.index} is used twice for '{intent.type}'. "
                "Fix: number each type's intents uniquely."
            )
        seen.add(intent.key)
    for name in names:
        if not any(i.type == name for i in intents):
            problems.append(
                f"{origin}: no intent has type '{name}'. Fix: add [[intents]] with type = \"{name}\"."
            )
    for i, condition in enumerate(conditions):
        if condition.get("mode", "chat") != "chat":
            problems.append(
                f"{source}: conditions[{i}].mode: a chat study's assistants answer in chat mode. "
                "Fix: remove mode or set mode = \"chat\"."
            )
    return problems


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((schemas_dir() / "chat.schema.json").read_text()))


def _errors(instance) -> list:
    return sorted(_validator().iter_errors(instance), key=lambda e: list(e.absolute_path))
