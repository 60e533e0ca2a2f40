"""The README as a new user follows it: every `study` command it shows exists, with the options
and arguments it shows, and every study.toml example it shows loads beside `study init`'s file."""

from __future__ import annotations

import ast
import inspect
import json
import re
import textwrap
import tomllib
from pathlib import Path

import click
import pytest

from study import config
from study.cli import main, write_study_files

ROOT = Path(__file__).resolve().parents[1]
USER_DOCS = [ROOT / "README.md", ROOT / "docs" / "architecture.md"]
FENCED = re.compile(r"```(\w*)\n(.*?)```", re.S)


def shown_commands(text: str) -> list[tuple[str, int]]:
    """(command, line) for each `study ...` in an inline code span or a shell block's line."""
    prose = FENCED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    found = [(" ".join(m.group(1).split()), prose[: m.start()].count("\n") + 1)
             for m in re.finditer(r"`([^`]*)`", prose) if m.group(1).startswith("study ")]  # fmt: skip
    for block in FENCED.finditer(text):
        if block.group(1) not in ("", "bash", "sh"):
            continue
        first = text[: block.start()].count("\n") + 2
        lines = block.group(2).splitlines()
        number = 0
        while number < len(lines):
            line, at = lines[number], number
            while line.rstrip().endswith("\\") and number + 1 < len(lines):
                number += 1
                line = line.rstrip()[:-1] + " " + lines[number]
            code = line.split("  #")[0].split(" # ")[0]
            for part in re.split(r"&&|;", code):
                command = re.match(r"\s*(?:\S+=\S+\s+)*(study\s.*)", part)  # after VAR=value
                if command:
                    found.append((command.group(1).strip(), first + at))
            number += 1
    return found


def problems(command: str) -> list[str]:
    """What `study` would refuse in a command as the README writes it ([optional] parts
    included; DIR, NAME... are the arguments)."""
    words = command.replace("[", " ").replace("]", " ").split()
    context = click.Context(main)
    current, path, at = main, ["study"], 1
    while isinstance(current, click.Group) and at < len(words):
        sub = current.get_command(context, words[at])
        if sub is None:
            break
        current, path, at = sub, [*path, words[at]], at + 1
    name = " ".join(path)
    if isinstance(current, click.Group):
        # `study preregister DIR` records (study.plan.cli.RecordByDefault): a group may take
        # its default command's arguments.
        default_command = type(current).resolve_command is not click.Group.resolve_command
        if at < len(words) and words[at] not in ("...", "…") and not default_command:
            return [f"{name} has no command {words[at]!r}"]
        return []
    if current.context_settings.get("ignore_unknown_options"):
        return []  # `study qualify DIR ...`: the options are the provider's command's
    options = {o: p for p in current.params if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts)}
    found, given, rest, index = [], 0, words[at:], 0
    while index < len(rest):
        word = rest[index]
        flag = re.match(r"^(--?[A-Za-z][\w-]*)", word)
        if flag:
            option = options.get(flag.group(1))
            if option is None:
                found.append(f"{name} has no option {flag.group(1)}")
            elif not option.is_flag and "=" not in word:
                index += 1  # the option's value
        elif word not in ("...", "…", "\\|"):
            given += 1
        index += 1
    arguments = [p for p in current.params if isinstance(p, click.Argument)]
    # A bare mention (`study export`) names the command; shown with arguments, it shows them all.
    if given and given < sum(1 for p in arguments if p.required):
        found.append(f"{name} takes {' '.join(p.human_readable_name for p in arguments)}, the README shows {given}")
    return found


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda path: path.name)
def test_every_command_the_docs_show_exists_with_the_options_and_arguments_shown(doc):
    text = doc.read_text(encoding="utf-8")
    shown = shown_commands(text)
    assert len(shown) > (100 if doc.name == "README.md" else 0)
    wrong = [f"{doc.name} line {line}: {command}: {'; '.join(found)}"
             for command, line in shown if (found := problems(command))]  # fmt: skip
    assert wrong == []


def _merged(base: dict, example: dict) -> dict:
    """study.toml with an example added as a researcher pastes it: its tables' keys set, its
    [[arrays]] appended."""
    merged = dict(base)
    for key, value in example.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        elif isinstance(value, list) and isinstance(merged.get(key), list) and value and isinstance(value[0], dict):
            merged[key] = [*merged[key], *value]
        else:
            merged[key] = value
    return merged


TOML_EXAMPLES = [(m.group(2), ROOT.joinpath("README.md").read_text(encoding="utf-8")[: m.start()].count("\n") + 1)
                 for m in FENCED.finditer(ROOT.joinpath("README.md").read_text(encoding="utf-8")) if m.group(1) == "toml"]  # fmt: skip


@pytest.mark.parametrize("example, line", TOML_EXAMPLES, ids=[f"line {line}" for _, line in TOML_EXAMPLES])
def test_every_study_toml_example_of_the_readme_loads_in_a_new_study(tmp_path, example, line):
    folder = tmp_path / "study"
    write_study_files(folder, paradigm="chat" if "[chat" in example else "writing")
    # The files the examples name, which the researcher writes.
    (folder / "gold.jsonl").write_text('{"text": "A sentence.", "score": 3}\n', encoding="utf-8")
    (folder / "instructions-qualification.html").write_text("<p>Write once.</p>", encoding="utf-8")
    data = _merged(tomllib.loads((folder / "study.toml").read_text(encoding="utf-8")), tomllib.loads(example))
    config.from_mapping(data, folder)


# The README's configuration table lists these tables of study.toml key by key; the others
# ([[conditions]], [judging], [plan], ...) have one row each naming their keys, or a section.
KEY_BY_KEY = ("study", "session", "design", "suggestions", "texts")


def _configuration_table() -> set[str]:
    """'[table] key' for every key a row of the README's configuration table names: its first
    cell, e.g. "`[study] pay`, `duration_minutes`" names two."""
    text = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    named = set()
    for row in re.findall(r"^\| (.*?) \|", section, re.M):
        table = None
        for code in re.findall(r"`([^`]*)`", row):
            if found := re.fullmatch(r"\[(\w+)\] (\w+)", code):
                table = found.group(1)
                named.add(code)
            elif table and re.fullmatch(r"\w+", code):
                named.add(f"[{table}] {code}")
    return named


def _table_of(node: ast.expr) -> str | None:
    """"suggestions" for `data["suggestions"]` or `data.get("suggestions", {})`."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "data":
        return node.slice.value if isinstance(node.slice, ast.Constant) else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "data"):  # fmt: skip
        return node.args[0].value
    return None


def _keys_config_reads() -> set[str]:
    """'[table] key' for every key of study.toml's tables that study.config.from_mapping reads:
    `study.get("contact", "")` once `study = data["study"]`, `sugg["system_prompt"]`,
    `data.get("design", {}).get("assignment", ...)`."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(config.from_mapping)))
    tables = {node.targets[0].id: table for node in ast.walk(tree)
              if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
              and (table := _table_of(node.value))}  # fmt: skip
    keys = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            owner, key = node.func.value, node.args[0]
        elif isinstance(node, ast.Subscript):
            owner, key = node.value, node.slice
        else:
            continue
        table = tables.get(owner.id) if isinstance(owner, ast.Name) else _table_of(owner)
        if table and isinstance(key, ast.Constant):
            keys.add(f"[{table}] {key.value}")
    return keys


def test_every_key_study_config_reads_has_a_row_in_the_readmes_configuration_table():
    read = _keys_config_reads()
    assert {"[study] contact", "[design] assignment", "[suggestions] system_prompt"} <= read  # the walk works
    assert sorted(read - _configuration_table()) == []


def test_every_key_the_schema_allows_in_a_key_by_key_table_has_a_row_in_the_readme():
    # schemas/study.schema.json is what study.toml may hold; the README's table is where a
    # researcher looks a key up, so a key the schema gains (read in study.server.limits, say)
    # needs its row.
    schema = json.loads(ROOT.joinpath("schemas", "study.schema.json").read_text(encoding="utf-8"))
    allowed = {f"[{table}] {key}" for table in KEY_BY_KEY for key in schema["properties"][table]["properties"]}
    assert sorted(allowed - _configuration_table()) == []
