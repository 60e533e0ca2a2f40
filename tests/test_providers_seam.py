"""The recruitment-provider seam (study.providers, issue 19): the core names no provider.

Only the providers' own folders (study/mturk, study/prolific), the registry (study.providers)
and the command line's group registration (study.cli) import study.mturk or study.prolific;
every other module asks the registry. The exceptions below are named with their reason, so a
new one is a decision, not an accident. Imports inside functions count too."""

from __future__ import annotations

import ast
from pathlib import Path

import study

PACKAGE = Path(study.__file__).parent
PROVIDERS = ("mturk", "prolific")

# Modules that may import one provider's package, and why.
ALLOWED = {
    "study.providers": "the registry names each provider's adapter",
    "study.cli": "registers the `study mturk` and `study prolific` groups, and MTurk's judging "
    "commands into `study judging`",
    "study.judging.settings": "judges are paid on MTurk: [judging] reward is parsed as MTurk's USD",
    "study.judging.web": "a judging task is held as long as MTurk's assignment lasts "
    "([mturk] assignment_seconds)",
}


def provider_imports(root: Path) -> list[str]:
    """Every import of a provider's package by a module outside the providers' folders, as
    "module imports target"."""
    top = root.name
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if len(parts) > 1 and parts[1] in PROVIDERS:
            continue  # a provider's own folder
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [source] + [f"{source}.{alias.name}" for alias in node.names]
            else:
                continue
            hits = {t for t in targets for p in PROVIDERS
                    if t == f"{top}.{p}" or t.startswith(f"{top}.{p}.")}  # fmt: skip
            found.extend(f"{name} imports {target}" for target in sorted(hits))
    return found


def test_the_core_imports_no_provider_but_through_the_registry():
    offending = [line for line in provider_imports(PACKAGE) if line.split()[0] not in ALLOWED]
    assert offending == [], (
        "ask study.providers instead (provider_for(name), registered(), participant_paths()), "
        "or give the interface the operation the core needs:\n  " + "\n  ".join(offending)
    )


def test_the_command_line_imports_only_the_providers_command_groups():
    imported = {line.split()[-1] for line in provider_imports(PACKAGE) if line.startswith("study.cli ")}
    assert imported <= {"study.mturk.cli", "study.mturk.cli.mturk", "study.mturk.cli.judging",
                        "study.prolific.cli", "study.prolific.cli.prolific"}, imported  # fmt: skip


def test_the_check_sees_a_provider_import_even_inside_a_function(tmp_path):
    # The walker itself, on a package shaped like study: a deferred and a relative import of a
    # provider are caught; the provider's own folder importing itself is not.
    root = tmp_path / "study"
    for folder in (root, root / "mturk", root / "release"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
    (root / "mturk" / "ledger.py").write_text("from study.mturk import money\n")
    (root / "release" / "build.py").write_text("def f():\n    from study.mturk import ledger\n")
    (root / "release" / "source.py").write_text("from ..prolific import entry\n")
    (root / "release" / "card.py").write_text("import study.providers\n")
    assert provider_imports(root) == [
        "study.release.build imports study.mturk",
        "study.release.build imports study.mturk.ledger",
        "study.release.source imports study.prolific",
        "study.release.source imports study.prolific.entry",
    ]
