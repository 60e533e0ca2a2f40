"""`study init`: a new study folder, from templates/init/ with a paradigm's own files
(study.paradigms.base.StudyTemplate) or a published design's arms (study.designs) in place of
theirs. `study demo` and the tests make their folders the same way (write_study_files).
"""

from __future__ import annotations

from pathlib import Path

import click

from study import config as study_config
from study import paradigms as registry
from study.cli_options import Registered
from study.designs import DESIGNS, design_page, design_toml, paradigm_toml
from study.paths import templates_dir


@click.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--paradigm", type=Registered((), registry.study_templates), default="writing",
              show_default=True, help="; ".join(f"{choice}: {template.help}" for choice, template
                                                in registry.study_templates().items()) + ".")
@click.option("--design", type=click.Choice(list(DESIGNS)), default=None,
              help="A writing study with these arms (study.designs): jakesch: control vs two "
              "opinionated assistants; dhillon: within subjects, no AI / next sentence / next "
              "paragraph; realhumaneval: autocomplete vs chat vs no model; mindcopilot: within "
              "subjects, L0 (assistant panel) / L1 / L2 / L3 (ghost text), Q1-Q10 after each.")
def init(directory: str, paradigm: str, design: str | None) -> None:
    """Create DIRECTORY/study.toml: a ready CoAuthor study (20 prompts, 4 conditions), or with
    --paradigm chat a CollabLLM chat study (3 document types, 3 anonymous assistants), or with
    --paradigm proactive (L1, L2, L3) a MindCopilot study, one condition per paradigm and genre,
    or with --design one of four published designs' arms (try it at once: study demo --dir
    DIRECTORY)."""
    target = Path(directory)
    if (target / study_config.CONFIG_NAME).exists():
        raise click.ClickException(
            f"{target / study_config.CONFIG_NAME} already exists; choose another folder "
            "or delete it first."
        )
    design_alone(paradigm, design)
    write_study_files(target, paradigm=paradigm, design=design)
    click.echo(f"Created {target / study_config.CONFIG_NAME}. Try it at once: study demo --dir {target}")
    # `study serve` refuses the placeholder (study.config_texts.unfinished_consent): say so here, where
    # the researcher reads what to do next.
    click.echo(f"Before participants: put the protocol director's name and how to reach them in "
               f"{target / 'consent.html'} (in place of its [REPLACE ...] line), point [suggestions] "
               f"in study.toml at your model, then serve it with: study serve {target}")


def design_alone(paradigm: str, design: str | None) -> None:
    """--design writes the design's arms in place of study.toml's conditions: a paradigm's own
    path (a chat study) has no writing arms, and a paradigm's conditions (MindCopilot's L1-L3)
    would be replaced, so either asked for beside it is refused rather than dropped."""
    template = registry.study_templates()[paradigm]
    if design and (not template.designs or template.levels):
        raise click.ClickException(f"--design makes a writing study (its arms may include chat); leave out --paradigm {paradigm}.")


def write_study_files(
    target: Path, *, replacements: dict[str, str] | None = None, paradigm: str = "writing",
    paradigms: tuple[str, ...] | None = None, design: str | None = None,
) -> None:
    """The files of a new study: templates/init/, with the files of the `paradigm` choice's
    template (study.paradigms.base.StudyTemplate) in place of theirs, e.g. a chat study's
    study.toml and instructions (README, "Chat study"). With condition paradigms (the
    template's `levels`, or `paradigms`: MindCopilot's L1-L3), study.toml's conditions are one
    per paradigm and genre, so every command run on the folder later (status, export, report,
    release) sees them. A `design` starts from its own template's files (study.designs.Design:
    MindCopilot's the proactive study's) and writes its arms in place of their conditions."""
    template = registry.study_templates()[DESIGNS[design].template if design else paradigm]
    levels = paradigms or (() if design else template.levels)
    from study.store.permissions import private_folder

    # 0700: the folder receives the database (worker ids, every keystroke) and the exports.
    private_folder(target)
    sources = {p.name: p for p in (templates_dir() / "init").iterdir()}
    if template.overlay:
        # An absolute path (a paradigm's own folder) stays itself under `/`.
        sources.update({p.name: p for p in (templates_dir() / template.overlay).iterdir()})
    for source in sorted(sources.values(), key=lambda p: p.name):
        destination = target / source.name
        if destination.exists():
            continue
        text = source.read_text(encoding="utf-8")
        if source.name == study_config.CONFIG_NAME:  # every study gets its own id
            text = text.replace('id = ""', f'id = "{study_config.new_study_id()}"', 1)
            for old, new in template.study_toml.items():  # the paradigm's choices (e.g. a survey)
                text = text.replace(old, new)
        for old, new in (replacements or {}).items():
            text = text.replace(old, new)
        if levels and source.name == study_config.CONFIG_NAME:
            text = paradigm_toml(text, levels)
        if design and source.name == study_config.CONFIG_NAME:
            text = design_toml(text, DESIGNS[design])
        elif design:
            text = design_page(source.name, text, DESIGNS[design])
        destination.write_text(text, encoding="utf-8")
