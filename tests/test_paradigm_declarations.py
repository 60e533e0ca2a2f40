"""Every paradigm's declaration (study.paradigms.base.Paradigm) names modules that hold what the
core will ask of them: a typo or a missing function fails here, not in the middle of a
participant's session or a release build. The test paradigm of tests/paradigm_helpme/ is held
to the same contract as the built-in ones."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import study
from study import paradigms
from study.paradigms.base import Paradigm
from study.paths import templates_dir
from tests.paradigm_helpme import PARADIGM as HELPME

# Declaration field -> what each module it names must hold (base.py says what each is for).
REQUIRED = {
    "config": ("SECTION", "load"),
    "events": ("fill", "with_rules"),
    "path_hooks": ("noun", "exchanges", "notice", "status", "written_chars"),
    "editor": ("boot",),
    "curate": ("register",),
    "commands": ("register",),
    "report": ("load", "build"),
    "simulate": ("participant",),
    "release": ("conversations",),
}
# Optional members of a `coauthor_log` module that go together.
TOGETHER = (("FORMAT", "KEY", "SOURCES", "checks"), ("extends", "to_record"))


def declared() -> list[Paradigm]:
    return [*paradigms.registered(), HELPME]


def missing(paradigm: Paradigm) -> list[str]:
    found = []
    for name in paradigm.pages + paradigm.apis:
        if not hasattr(importlib.import_module(name), "blueprint"):
            found.append(f"{name}: no blueprint")
    for field_name, members in REQUIRED.items():
        if getattr(paradigm, field_name):
            module = importlib.import_module(getattr(paradigm, field_name))
            found += [f"{module.__name__}: no {m} ({field_name})" for m in members if not hasattr(module, m)]
    for fmt, name in paradigm.exports.items():
        if not hasattr(importlib.import_module(name), "export"):
            found.append(f"{name}: no export (format {fmt})")
    if paradigm.coauthor_log:
        module = importlib.import_module(paradigm.coauthor_log)
        for group in TOGETHER:
            present = [m for m in group if hasattr(module, m)]
            if present and len(present) != len(group):
                absent = sorted(set(group) - set(present))
                found.append(f"{module.__name__}: {', '.join(present)} without {', '.join(absent)}")
    return found


@pytest.mark.parametrize("paradigm", declared(), ids=lambda p: p.name)
def test_each_declared_module_holds_what_the_core_asks(paradigm):
    assert missing(paradigm) == []


@pytest.mark.parametrize("paradigm", declared(), ids=lambda p: p.name)
def test_its_stages_are_on_a_path_and_its_endpoints_are_its_pages(paradigm):
    stages = set(paradigm.path) if paradigm.path else {"writing"}
    assert set(paradigm.stage_endpoints) <= stages
    if paradigm.path_hooks:
        assert paradigm.path, "path_hooks are asked about a session on the paradigm's own path"


def test_condition_values_belong_to_one_paradigm_each():
    values = [value for paradigm in declared() for value in paradigm.conditions]
    assert len(values) == len(set(values))


def test_the_contract_check_sees_a_typo():
    typo = Paradigm(name="typo", summary="", report="study.paradigms.chat.export",
                    editor="study.paradigms.tab.editor")  # fmt: skip
    assert missing(typo) == [
        "study.paradigms.chat.export: no load (report)", "study.paradigms.chat.export: no build (report)"
    ]


# -- its files: a paradigm's scripts and templates are in its folder, the core's are not -----

CORE_STATIC = Path(study.__file__).parent / "static"


def own_blueprint(paradigm: Paradigm):
    """The blueprint named as the paradigm, which serves its static/ and templates/."""
    return next((b for b in paradigm.page_blueprints() if b.name == paradigm.name), None)


def own_folders(paradigm: Paradigm) -> tuple[Path | None, Path | None]:
    """Its static/ and templates/ folders, where it has them."""
    blueprint = own_blueprint(paradigm)
    if blueprint is None:
        return None, None
    static = Path(blueprint.static_folder) if blueprint.static_folder else None
    templates = Path(blueprint.root_path, blueprint.template_folder) if blueprint.template_folder else None
    return static, templates


def files(folder: Path | None) -> list[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file()) if folder else []


@pytest.mark.parametrize("paradigm", declared(), ids=lambda p: p.name)
def test_its_editor_scripts_and_styles_are_in_its_own_static_folder(paradigm):
    assets = paradigm.scripts + paradigm.stylesheets
    if not assets:
        return
    assert paradigm.editor, "its scripts are loaded for the sessions its editor boot answers"
    blueprint = own_blueprint(paradigm)
    assert blueprint is not None, f"no blueprint named {paradigm.name!r} among its pages serves its scripts"
    assert blueprint.static_url_path == f"/{paradigm.name}-static"
    assert [name for name in assets if not (Path(blueprint.static_folder) / name).is_file()] == []


@pytest.mark.parametrize("paradigm", declared(), ids=lambda p: p.name)
def test_the_core_folders_hold_none_of_its_files_and_its_scripts_are_loaded_by_declaration(paradigm):
    static, templates = own_folders(paradigm)
    core_static, core_templates = CORE_STATIC, templates_dir()
    ours = {path.name for path in files(static)} | set(paradigm.scripts + paradigm.stylesheets)
    assert [str(p) for p in files(core_static) + files(core_templates) if p.name in ours] == []
    assert [str(p) for p in files(templates) if (core_templates / p).exists()] == []
    pages = [p for p in files(core_templates) if p.suffix == ".html"]
    named = [f"templates/{page}: {name}" for page in pages for name in sorted(ours)
             if name in (core_templates / page).read_text(encoding="utf-8")]  # fmt: skip
    assert named == [], "the core's pages load a paradigm's scripts through its declaration only"


# -- the core's editor page names no paradigm: each part is a plugin (study/static/editor-parts.js)

EDITOR_PAGE = {
    **{f"study/static/{path.name}": path for path in sorted(CORE_STATIC.glob("editor*"))},
    "templates/writing.html": templates_dir() / "writing.html",
}
# Paradigm names that are ordinary words of the page too: the Tab key and the browser's tabs
# (editor.js claims Tab in every arm), CSS's `display: none`.
ORDINARY_WORDS = {"tab", "none"}
# Words of the parts that were once the core's: ghost text, the Tab list's popup, the chat arm.
PART_WORDS = ("proactive", "ghost", "Popup", "chat", "suggestionsUrl")


def on_editor_page(paradigm: Paradigm) -> set[str]:
    """What would name the paradigm on the core's editor page: its name, its files and
    templates, its parts' boot keys, and what its scripts put on window.StudyEditor."""
    static, templates = own_folders(paradigm)
    names = {paradigm.name} - ORDINARY_WORDS
    names |= set(paradigm.scripts + paradigm.stylesheets) | {p.name for p in files(templates)}
    for part in paradigm.editor_parts:
        names |= {value for value in (part.key, part.panel, part.keys, part.page_class) if value}
    for script in paradigm.scripts:
        names |= set(re.findall(r"StudyEditor\.(\w+) =", (static / script).read_text(encoding="utf-8")))
    return names


def named_in(text: str, names) -> list[str]:
    """The names `text` holds as words (case-insensitive; "-", "_", "/" and "." separate words)."""
    return sorted(name for name in set(names)
                  if re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text, re.IGNORECASE))


@pytest.mark.parametrize("page", list(EDITOR_PAGE))
def test_the_core_editor_page_names_no_paradigm(page):
    text = EDITOR_PAGE[page].read_text(encoding="utf-8")
    names = set(PART_WORDS).union(*(on_editor_page(paradigm) for paradigm in declared()))
    if page != "templates/writing.html":  # whose control arm's line says there is no AI assistant
        names.add("assistant")
    assert named_in(text, names) == [], f"{page} names a paradigm's part; it belongs in the paradigm's folder"


def test_the_check_sees_a_part_named_on_the_page():
    tab, proactive, chat = (paradigms.named(name) for name in ("tab", "proactive", "chat"))
    assert {"Popup", "suggestionsUrl"} <= set(named_in(
        "if (boot.suggestionsUrl) popup = new StudyEditor.Popup(list)", on_editor_page(tab)))
    assert "proactive/assistant_panel.html" in named_in(
        '{% include "proactive/assistant_panel.html" %}', on_editor_page(proactive))
    assert named_in("if (proactive) proactive.onText(delta)", on_editor_page(proactive)) != []
    assert named_in(".editor-page:has(.chat-arm)", on_editor_page(chat)) == ["chat"]
    assert named_in("the browser's other tab; display: none", on_editor_page(tab)) == []
