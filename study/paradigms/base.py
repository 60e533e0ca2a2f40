"""The `Paradigm` interface: one way a participant writes with the AI.

A paradigm is a folder under study/paradigms/ (tab: CoAuthor's suggestions on Tab; proactive:
MindCopilot's ghost text, L1-L3; chat: CollabLLM's assistant) whose `__init__.py` declares one
`Paradigm` and registers it (study.paradigms). The core (the participant's path, consent,
surveys, completion, storage, MTurk, review, release) asks the registry what a study's
paradigms serve instead of naming them; everything specific to a paradigm (its pages and API,
its engine, its export and checks, its simulated participant) lives in its folder.

Modelled on Mephisto's Blueprint, without its indirection: a declaration is plain data naming
modules, so a reader goes from a paradigm to the file that serves a URL in one step.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class StudyTemplate:
    """What `study init --paradigm CHOICE` (and `study demo --paradigm CHOICE`) writes."""

    # One line for `--help`.
    help: str
    # A folder whose files replace templates/init/'s of the same name (the chat study's
    # study.toml and instructions, in its paradigm's folder), as a path; a relative one is under
    # templates/; empty: templates/init/ as it is.
    overlay: str = ""
    # Condition paradigms (a condition's `paradigm`, e.g. "L1".."L3"): study.toml's conditions
    # become one per paradigm and genre, from each genre's first (study.designs.paradigm_toml).
    levels: tuple[str, ...] = ()
    # Whether `study init --design` may make its study a published design's arms: False for a
    # study on a paradigm's own path (a chat study), whose conditions are not writing arms.
    designs: bool = True
    # What `study demo` changes in its study.toml for the small local model (old -> new text).
    demo: dict[str, str] = field(default_factory=dict)
    # What `study init` (and `study demo`) change in study.toml for this choice (old -> new
    # text), e.g. MindCopilot's post-task questionnaire turned on from its commented example.
    study_toml: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class EditorPart:
    """A paradigm's markup on the core's editor page (templates/writing.html), there when its
    `editor` boot answers with `key` (e.g. "assistantPanel"). Templates are names under the
    paradigm's templates/ (its own sub-folder, e.g. "proactive/assistant_panel.html")."""

    # The boot key that puts this part on the page.
    key: str
    # Markup beside the textarea (in .editor-wrap): a list, a panel.
    panel: str = ""
    # The footer's line about the keys (an element with id "keys"); a page with none says its
    # writer has no assistant.
    keys: str = ""
    # The id of an element of `panel` the textarea controls (its aria-controls).
    controls: str = ""
    # A class on the page's <main> (e.g. the wider page of a panel beside the editor).
    page_class: str = ""
    # Whether the page shows the spinner (the part's page.busy, study/static/editor-parts.js).
    spinner: bool = False


@dataclass(frozen=True)
class Paradigm:
    # The paradigm's name in code, the registry and the docs: "tab", "proactive", "chat".
    name: str
    # One line for people: what a participant does in it.
    summary: str
    # A module holding the paradigm's own table of study.toml: `SECTION` (the table's name, read
    # as `study.<SECTION>`), `load(data, directory, source)` (what that reads, its defaults when
    # the file has no such table; a ValueError is a problem for the researcher, worded as such),
    # optionally `SCHEMA` (the table's JSON Schema, where schemas/study.schema.json has none: a
    # paradigm added in its own folder) and `problems(data, source) -> list[str]` (what else it
    # checks of the file, e.g. its conditions); "" for none (study.config, study.config_checks).
    # Optionally `named_files(study) -> {key: content}`: what each file the table names (by its
    # study.toml key, e.g. "chat.intent_bank") holds as participants get it or the model is
    # asked it, as JSON values, for the preregistration record, which then names what changed
    # in it after the record ({} when the study reads none; study.plan.files).
    config: str = ""
    # Modules (dotted names) each holding a Flask `blueprint` of participant pages, or of a
    # paradigm's part of the core's editor page (its `scripts`, `stylesheets` and templates).
    # `study serve` mounts them with the participant pages' security policy.
    pages: tuple[str, ...] = ()
    # Modules each holding a Flask `blueprint` of the editor's JSON API (/api/...).
    apis: tuple[str, ...] = ()
    # A module holding `boot(study, condition, session_id) -> dict`: what the core's editor page
    # (study.server.writing_stage, its `scripts`) needs from this paradigm for a
    # session of `condition` ({} when nothing), and optionally `state(records) -> dict`: what an
    # editor that lost its own copy gets back of this paradigm's memory from the stored records
    # (study.server.events_api /state). "" for none.
    editor: str = ""
    # What this paradigm adds to the core's editor page (templates/writing.html) for a session
    # its `editor` boot answers: files of its folder's static/, loaded in this order after the
    # core's records, outbox and plugin interface (editor-events.js, editor-outbox.js,
    # editor-parts.js) and before editor.js, which starts the parts they register
    # (StudyEditor.register; editor-parts.js says what a part gets and may return).
    # The paradigm's blueprint named as the paradigm serves them (`Blueprint(name, ...,
    # static_folder="static", static_url_path="/<name>-static")`, one of its `pages`), and its
    # templates/ too: a sub-folder named as the paradigm (templates/<name>/...), since Flask
    # finds every blueprint's templates under one set of names.
    scripts: tuple[str, ...] = ()
    stylesheets: tuple[str, ...] = ()
    # Its markup on that page (its list, its panel, its line about the keys), each part there
    # when the boot data has the part's key.
    editor_parts: tuple[EditorPart, ...] = ()
    # A module holding the rules for the records this paradigm adds to the editor's event log
    # (its extension of the CoAuthor record), which the event API (study.server.events_api)
    # applies to every session's batches, so no session may claim this paradigm's records:
    # `fill(engine, session_id, condition, body)`, what the server writes into a batch before
    # it is checked (what the page is never told), and `with_rules(check, session_id,
    # paradigm, batch) -> BatchCheck`, the batch check with its rules added (a
    # study.store.events.Refused is the 422's sentence; the check's optional `committed()` is
    # called once the batch is stored, and only then), and optionally `stored_problems(
    # connection, session, paradigm, records)`, the same rules on a stored session (study
    # curate validate STUDY_FOLDER): (index, code, field, message, fix) each; "" for none.
    events: str = ""
    # A module holding what this paradigm adds to a writing study's CoAuthor log and its export
    # (study.export, study.curation.checker), each optional:
    # - `EVENTS`: the event names it adds (the strict CoAuthor file leaves them out);
    # - `counts_suggestions(condition)`: False where its writers had no Tab list (the metadata's
    #   suggestion counts are then not applicable);
    # - `files_beside(study, connection, sessions) -> {name: bytes}`: files beside the logs;
    # - `FORMAT`, `KEY`, `SOURCES`, `checks(checker)`: its extended format's name, the key its
    #   records add, its events' sources and the checks fed each record;
    # - `extends(study)`, `to_record(record, event_num, paradigm)`: whether a study's logs are
    #   in that format (`study curate validate STUDY_FOLDER`), and a record in it;
    # - `export_beside(study, out, *, include_unfinished)`: a second export of its sessions
    #   beside the others' (the line `study export` prints, or None);
    # - `assistant_texts(connection, session_id) -> list[str]`: what its arm showed the writer
    #   from the assistant, which counts as the assistant's when pasted (study.review.evidence).
    # - `arm_card(study, condition) -> str | None`: what a writer of `condition` had, and
    #   what of it a release leaves out, for a release's dataset card (study.release.card);
    #   None for a condition it does not serve.
    # "" for none.
    coauthor_log: str = ""
    # A study-wide path of its own (a chat study's: intent and prewriting before the chat), its
    # stages in order; () for the core's (study.store.sessions.STAGES).
    path: tuple[str, ...] = ()
    # A module holding what the core asks about a session on that path: `noun(connection,
    # study, session)` (what a survey question's {noun} becomes), `exchanges(connection,
    # session_id)` (what in-session surveys are placed by), `notice(study)` (the operator's
    # notice on the path's pages), `status(connection, study) -> list[str]` (`study
    # status`'s lines) and `written_chars(connection, session_id)` (what review's rule 5 counts
    # as the worker's writing, study.review.evidence); "" for none.
    path_hooks: str = ""
    # The path stages whose page this paradigm serves, as stage -> Flask endpoint; any other
    # stage is the core path's own page (study.server.participant).
    stage_endpoints: dict[str, str] = field(default_factory=dict)
    # The values of a condition's `paradigm` (study.toml) whose sessions this paradigm serves.
    conditions: tuple[str, ...] = ()
    # Settings a condition of each of its values gets when `study init --paradigm` makes one
    # from a genre's first (study.designs.paradigm_toml): value -> Condition fields, e.g. ghost
    # text's one suggestion at a time, {"L1": {"n": 1}, ...}.
    condition_defaults: dict[str, dict] = field(default_factory=dict)
    # A folder of JSON Schemas the paradigm's API declares (study.server.contract), each with an
    # `$id` under https://study.local/schemas/; "" when they are in schemas/ (the built-in ones').
    schemas: str = ""
    # `study init --paradigm` choices this paradigm answers: choice -> what it writes.
    templates: dict[str, StudyTemplate] = field(default_factory=dict)
    # `study export --format FORMAT` formats this paradigm writes: format -> a module holding
    # `export(study, out, *, include_unfinished) -> str` (the line `study export` prints; a
    # ValueError is a refusal for people, e.g. the wrong kind of study).
    exports: dict[str, str] = field(default_factory=dict)
    # A module holding `register(curate)`, which adds this paradigm's `study curate` commands
    # to the group; "" for none.
    curate: str = ""
    # A module holding `register(main)`, which adds this paradigm's own commands to `study`
    # (study.cli; e.g. `study chat`); "" for none.
    commands: str = ""
    # A module holding `load(data)`, which puts this paradigm's per-session figures in
    # `data.extras` (study.report.sections.plugins), and `build(data) -> Section | None`, its
    # section of `study report`; optionally `EXPORT_FILE` and `EXPORT_WHAT`, the file by which
    # a folder its `study export --format` wrote is recognised (and words for it), with
    # `export_conditions(file) -> {session_id: condition}` when that file is a table beside
    # CoAuthor-style logs (study.report.data); "" for none.
    report: str = ""
    # `study simulate`'s participant in a study this paradigm serves: a module holding
    # `participant(http, writer, access_code, *, study, mark, choose_prompt, record)` and, where
    # the writing path's (study.simulate.participant, study.simulate.writer) do not fit,
    # `writer(persona, intent, noun, *, client, model, seed, study)`, `NOUN` (what is written
    # when no prompt says), `INTENT` (the intent recorded when the path chooses it) and
    # `describe(number, persona, result, participant, writer) -> str` (the run's line); "" for
    # the writing path's.
    simulate: str = ""
    # `study simulate`'s writer at this paradigm's part of the core's editor page where that
    # part is not the Tab list (a chat arm's panel, L0's assistant panel), whichever participant
    # walks the writing path: a module holding `KEY`, the boot key that puts the part on the
    # page (as an EditorPart's), `ASSISTANT`, the assistant as the writer is told of it (what it
    # is, what asking does: study.simulate.writer.TAB), and `ask(http, writer, log, part) -> str
    # | None`, one time the writer asks the AI there, in place of pressing Tab (`part`: the boot
    # data's; `log`: the page's study.simulate.editor.EditorLog, whose text is the text so far),
    # logging on `log` what the page logs of it, the text taken into the document included
    # (EditorLog.paste): None when no answer came, else the text taken ("" for none); "" for none.
    simulate_part: str = ""
    # A module holding `conversations(study, connection, sessions) -> list[dict]`: what
    # `study release build` publishes of these finished sessions beside (or, on a path of its
    # own, instead of) the editor logs, one record per session keyed by the study's session id,
    # in `conversations.jsonl` (study.release.conversations, schemas/chat-release.schema.json);
    # optionally `arm_as_run(study, condition) -> dict`: the arm's settings where they are not
    # the condition's (paradigm, mode, n, max_tokens, and system_prompt where its calls send
    # another than the condition's), for arms.json and the card ({} otherwise);
    # "" for a paradigm whose sessions are all in their logs.
    release: str = ""

    def settings(self):
        """The `config` module, or None for a paradigm with no table of its own."""
        return importlib.import_module(self.config) if self.config else None

    def named_files(self, study) -> dict:
        """The `config` module's `named_files(study)`, or {} for a paradigm that names no file."""
        hook = getattr(self.settings(), "named_files", None)
        return hook(study) if hook is not None else {}

    def page_blueprints(self) -> list:
        return [importlib.import_module(name).blueprint for name in self.pages]

    def api_blueprints(self) -> list:
        return [importlib.import_module(name).blueprint for name in self.apis]

    def event_rules(self):
        """The `events` module, or None for a paradigm that adds nothing to the event log."""
        return importlib.import_module(self.events) if self.events else None

    def log_hooks(self):
        """The `coauthor_log` module, or None."""
        return importlib.import_module(self.coauthor_log) if self.coauthor_log else None

    def editor_boot(self):
        return importlib.import_module(self.editor).boot

    def editor_state(self):
        """The editor module's `state`, or None for a paradigm that keeps no memory of its own."""
        return getattr(importlib.import_module(self.editor), "state", None) if self.editor else None

    def exporter(self, fmt: str):
        return importlib.import_module(self.exports[fmt]).export

    def curation_commands(self):
        return importlib.import_module(self.curate)

    def command_module(self):
        return importlib.import_module(self.commands) if self.commands else None

    def report_module(self):
        return importlib.import_module(self.report) if self.report else None

    def release_hooks(self):
        """The `release` module, or None."""
        return importlib.import_module(self.release) if self.release else None

    def simulation(self):
        """The `simulate` module, or None for the writing path's."""
        return importlib.import_module(self.simulate) if self.simulate else None

    def simulated_part(self):
        """The `simulate_part` module, or None."""
        return importlib.import_module(self.simulate_part) if self.simulate_part else None
