"""`study chat`: tools for a chat document-creation study's materials (CollabLLM, spec C6)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import click

from study import config as study_config
from study.paradigms.chat.config import DEFAULT_TYPES, ChatConfigError, DocumentType, read_bank


@click.group("chat")
def chat() -> None:
    """Prepare a chat study's materials (the intent bank)."""


def register(main: click.Group) -> None:
    """The chat paradigm's `study` commands (study.paradigms.base: `commands`)."""
    main.add_command(chat)


@chat.command("draft-intents")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--type", "type_name", required=True, help="The document type, e.g. blog_post ([[chat.document_types]] name).")
@click.option("--n", "count", default=50, show_default=True, type=click.IntRange(1, 500),
              help="How many intents (CollabLLM's bank has about 50 per type).")
@click.option("--endpoint", required=True, metavar="URL", help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1.")
@click.option("--model", required=True, help="The model name to ask the endpoint for.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="The environment variable holding the endpoint's API key (unset: none is sent).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Where to write the bank [default: DIRECTORY/intents/TYPE.toml].")
@click.option("--force", is_flag=True, help="Replace an existing file (its edits are lost).")
def draft_intents(directory: str, type_name: str, count: int, endpoint: str, model: str, api_key_env: str,
                  out: str | None, force: bool) -> None:
    """Draft an intent bank for one document type with a model, for you to edit.

    Each intent gets a title, a one-sentence description and ten pre-writing questions. The
    file is a draft: read it, fix or replace what the model got wrong, draft the other types
    into the same folder, then set [chat] intent_bank = "intents" in study.toml.
    """
    types = _document_types(Path(directory))
    if type_name not in types:
        raise click.ClickException(f"--type: '{type_name}' is not a document type of this study. "
                                   f"Fix: use one of {list(types)}.")  # fmt: skip
    path = Path(out) if out else Path(directory) / "intents" / f"{type_name}.toml"
    if path.exists() and not force:
        raise click.ClickException(f"{path} exists and may hold your edits. Fix: pass --out NEW.toml, or --force to replace it.")
    # Here, not at the top: it brings the openai SDK, which every `study` command would then load.
    from study.paradigms.chat import intent_drafts

    document_type = types[type_name]
    click.echo(f"Drafting {count} {document_type.label} intents with '{model}' at {endpoint}...")
    try:
        drafted = intent_drafts.draft(document_type, count, endpoint=endpoint, model=model,
                                      api_key=os.environ.get(api_key_env) or "no-key")  # fmt: skip
    except intent_drafts.DraftError as error:
        raise click.ClickException(str(error)) from None
    intent_drafts.write_bank(path, drafted, document_type, endpoint=endpoint, model=model)
    try:
        read_bank(path, path)  # the schema's checks, as study serve will make them
    except ChatConfigError as error:
        raise click.ClickException(f"the draft does not pass the bank's checks (kept for you to fix): {error}") from None
    click.echo(f"Wrote {len(drafted.intents)} intents to {path} (answered by {drafted.answered_model}). "
               "Edit them; then set [chat] intent_bank to their folder in study.toml.")  # fmt: skip


def _document_types(directory: Path) -> dict[str, DocumentType]:
    """The study's document types, read from study.toml alone: the bank being drafted may be the
    one that is still incomplete, and a full load would refuse it."""
    path = directory / study_config.CONFIG_NAME
    try:
        with path.open("rb") as handle:
            table = tomllib.load(handle).get("chat")
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise click.ClickException(f"cannot read {path}: {error}") from None
    if table is None:
        raise click.ClickException(f"{path} has no [chat] table: draft-intents is for chat studies "
                                   "(study init --paradigm chat).")  # fmt: skip
    listed = [(t.get("name"), t.get("label")) for t in table.get("document_types", []) if isinstance(t, dict)]
    return {name: DocumentType(name, label or name) for name, label in (listed or DEFAULT_TYPES) if name}


@chat.command("copy-intents")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--force", is_flag=True, help="Replace files already there (their edits are lost).")
def copy_intents(directory: str, force: bool) -> None:
    """Copy the shipped intent bank (50 intents per type) into DIRECTORY/intents/ to edit.

    Then set [chat] intent_bank = "intents" in study.toml; until then the shipped bank is used.
    """
    from study.paradigms.chat.config import SHIPPED_INTENTS

    target = Path(directory) / "intents"
    shipped = sorted(SHIPPED_INTENTS.glob("*.toml"))
    clashes = [target / f.name for f in shipped if (target / f.name).exists()]
    if clashes and not force:
        raise click.ClickException(f"{clashes[0]} exists and may hold your edits. Fix: move it away, or pass --force.")
    target.mkdir(parents=True, exist_ok=True)
    for source in shipped:
        (target / source.name).write_bytes(source.read_bytes())
    click.echo(f"Copied {len(shipped)} bank files to {target}. Set [chat] intent_bank = \"intents\" in study.toml to use them.")
