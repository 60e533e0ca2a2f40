"""The chat document-creation study (CollabLLM §6, App. E): the participant picks an intent,
notes their thoughts, then writes the document while chatting with an assistant.

- `config`: the `[chat]` table of study.toml and the intent bank;
- `assign`: which document type and assistant (condition) a session gets;
- `assistant`: the assistant's reply (study.model_client);
- `pages`: the path's own stages (intent, prewriting, chat); `api`: what the chat page calls;
- `path_hooks`: what the core asks of a session on that path (survey noun, exchanges, notice, status);
- `export`: the chat session export; `release`: what a release publishes of its conversations; `curation`: `study curate chat`'s measures;
- `report`, `report_data`: its section of `study report` and the figures it draws;
- `simulate`, `simulated_user`: `study simulate`'s chat participant and CollabLLM's user simulator.
- `arm`, `arm_api`, `arm_export`, `arm_report`, `arm_simulate`: chat as an arm of a writing
  study (`paradigm = "chat"` in a condition): the panel beside the editor, its API, its
  conversations in `study export`, its pasted replies read as the assistant's in `study
  report`, and `study simulate`'s writers asking it.
"""

from pathlib import Path

from study.paradigms.base import EditorPart, Paradigm, StudyTemplate

HERE = Path(__file__).parent

# `study demo --paradigm chat`'s small local model: short replies, a short context.
CHAT_DEMO = {"max_tokens = 512": "max_tokens = 64", "context_chars = 24000": "context_chars = 2000"}

PARADIGM = Paradigm(
    name="chat",
    summary="the participant writes a document while chatting with an assistant (CollabLLM)",
    pages=("study.paradigms.chat.pages",),
    # arm_api: the panel of a chat arm beside a writing study's editor (study.paradigms.chat.arm).
    apis=("study.paradigms.chat.api", "study.paradigms.chat.arm_api"),
    # CollabLLM App. E steps 1-3: the intent, the notes, then the chat.
    path=("consent", "instructions", "presurvey", "intent", "prewriting", "chat", "survey", "complete"),
    path_hooks="study.paradigms.chat.path_hooks",
    editor="study.paradigms.chat.editor",
    # The chat arm's panel beside a writing study's editor (served by pages' blueprint).
    scripts=("editor-chat.js",),
    stylesheets=("editor-chat.css",),
    editor_parts=(EditorPart("chat", panel="chat/arm_panel.html", keys="chat/arm_keys.html"),),
    # A chat arm beside a writing study's editor (study.paradigms.chat.arm); a chat study's
    # own conditions are served through its path (study.paradigms.of_session).
    conditions=("chat",),
    stage_endpoints={"intent": "chat.intent", "prewriting": "chat.prewriting", "chat": "chat.chat_page"},
    templates={"chat": StudyTemplate("CollabLLM's chat document-creation study: 3 document types, "
                                     "3 anonymous assistants", overlay=str(HERE / "init"), designs=False,
                                     demo=CHAT_DEMO)},
    exports={"chat": "study.paradigms.chat.export"},
    curate="study.paradigms.chat.curation_cli",
    commands="study.paradigms.chat.cli",
    simulate="study.paradigms.chat.simulate",
    # A simulated writer in a chat arm asks the panel where a Tab writer presses Tab.
    simulate_part="study.paradigms.chat.arm_simulate",
    report="study.paradigms.chat.report",
    coauthor_log="study.paradigms.chat.arm_export",
    release="study.paradigms.chat.release",
    config="study.paradigms.chat.config",
)
