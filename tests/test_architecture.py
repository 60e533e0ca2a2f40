"""The package's shape (STYLE.md, issue 18): no module imports another's `_private` names, no
modules import each other in a circle, counting imports inside functions too (a deferred
import hides a circle from Python, not from a reader), the core imports no paradigm by name
(it asks the registry), and the foundations import none of the layers built on them."""

from __future__ import annotations

import ast
from pathlib import Path

import study

PACKAGE = Path(study.__file__).parent


def module_names(root: Path) -> dict[str, Path]:
    names = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        names[name] = path
    return names


def imports(root: Path) -> tuple[dict[str, set[str]], list[str]]:
    """Each module's imports of the package's own modules, and every private name imported
    across modules, as "importer: from module import _name"."""
    modules = module_names(root)
    top = root.name
    edges: dict[str, set[str]] = {name: set() for name in modules}
    private = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                edges[name].update(a.name for a in node.names if a.name in modules)
                continue
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source != top and not source.startswith(top + "."):
                continue
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    edges[name].add(f"{source}.{alias.name}")
                elif source in modules:
                    edges[name].add(source)
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append(f"{name}: from {source} import {alias.name}")
    for name in edges:
        edges[name].discard(name)
    return edges, private


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_another_modules_private_names():
    _, private = imports(PACKAGE)
    assert private == [], (
        "make the name public in the module that owns it (or move it to a module both may "
        "import):\n  " + "\n  ".join(private)
    )


def test_no_modules_import_each_other_in_a_circle():
    edges, _ = imports(PACKAGE)
    assert circles(edges) == [], "modules importing each other (move what both need below them)"


# What the core may import of study/paradigms/: the registry and the interface (docs/architecture.md).
SEAM = {"study.paradigms", "study.paradigms.base"}
# The foundations every part stands on, and the layers built on them (docs/architecture.md);
# a foundation's command module (`cli`) is an entry point, above every layer.
FOUNDATIONS = ("study.paths", "study.config", "study.control_arm", "study.model_client", "study.store",
               "study.survey", "study.curation")  # fmt: skip
BUILT_ON_THEM = ("study.server", "study.report", "study.release", "study.mturk", "study.review",
                 "study.judging", "study.simulate", "study.plan", "study.export", "study.paradigms.",
                 "study.cli", "study.new_study", "study.serve", "study.demo")  # fmt: skip


def paradigm_imports(edges: dict[str, set[str]]) -> list[str]:
    """Every import of a paradigm's own module by a module outside study/paradigms/."""
    return sorted(
        f"{importer}: imports {imported}"
        for importer, targets in edges.items() if not importer.startswith("study.paradigms")
        for imported in targets if imported.startswith("study.paradigms.") and imported not in SEAM
    )  # fmt: skip


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for importer, targets in edges.items():
        if not importer.startswith(FOUNDATIONS) or importer.rsplit(".", 1)[-1] == "cli":
            continue
        found += [f"{importer}: imports {imported}" for imported in sorted(targets) if imported.startswith(BUILT_ON_THEM)]
    return found


def test_the_core_imports_no_paradigm_by_name():
    # A new paradigm is a folder registered with study.paradigms.register(); were the core to
    # import a built-in one's modules, the built-in ones would be special (issue 18, item 1).
    edges, _ = imports(PACKAGE)
    assert paradigm_imports(edges) == [], (
        "ask the registry (study.paradigms) instead, through a hook of study.paradigms.base."
        "Paradigm:\n  " + "\n  ".join(paradigm_imports(edges))
    )


def test_the_foundations_import_no_layer_built_on_them():
    edges, _ = imports(PACKAGE)
    assert upward_imports(edges) == [], "move what both need down:\n  " + "\n  ".join(upward_imports(edges))


def test_the_seam_check_sees_a_paradigm_imported_by_name():
    edges = {"study.report.data": {"study.paradigms", "study.paradigms.base"},
             "study.export.coauthor": {"study.paradigms.chat.arm"},
             "study.paradigms.chat.arm": {"study.config"}}  # fmt: skip
    assert paradigm_imports(edges) == ["study.export.coauthor: imports study.paradigms.chat.arm"]
    assert upward_imports({"study.store.events": {"study.server.context"}, "study.curation.cli": {"study.export"}}) == [
        "study.store.events: imports study.server.context"
    ]


def test_the_checks_see_a_circle_and_a_private_name(tmp_path):
    # The walker itself: a package with one deferred circle and one private import across
    # modules must be caught, or the two tests above prove nothing.
    root = tmp_path / "pkg"
    (root / "inner").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "inner" / "__init__.py").write_text("")
    (root / "a.py").write_text("from pkg.inner import b\n\n\ndef f():\n    from . import c\n")
    (root / "inner" / "b.py").write_text("from pkg.c import _helper\n")
    (root / "c.py").write_text("def _helper():\n    from pkg.inner.b import x\n")
    edges, private = imports(root)
    assert private == ["pkg.inner.b: from pkg.c import _helper"]
    assert circles(edges) == [["pkg.c", "pkg.inner.b"]]
