"""The layout keeps data flowing one way: a module imports only from its own layer or the
layers below it, a kind never imports another kind, and no two modules import each other
in a circle (imports inside functions count too)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gpulint"

# lowest first; a module may import its own layer and the ones before it
LAYERS = ("core", "formats", "knowledge", "common", "kinds", "crossfile", "report", "run", "face")
FACE_MODULES = ("gpulint.__main__", "gpulint.docgen")  # entry points kept at their documented paths


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    if module in FACE_MODULES:
        return "face"
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()):
        return parts[1] if parts[1] in LAYERS else "core"
    return "core"


def _kind(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "kinds" else None


def _imports() -> dict[str, set[str]]:
    modules = {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    out: dict[str, set[str]] = {}
    for module, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("gpulint"))
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.startswith("gpulint"):
                for alias in node.names:  # `from gpulint.kinds import dockerfile` names a module
                    candidate = f"{node.module}.{alias.name}"
                    found.add(candidate if candidate in modules else node.module)
        out[module] = found
    return out


def test_every_module_belongs_to_a_layer():
    for module in _imports():
        assert _layer(module) in LAYERS, module


def test_no_module_imports_a_higher_layer():
    wrong = [(m, i) for m, found in _imports().items() for i in found
             if LAYERS.index(_layer(i)) > LAYERS.index(_layer(m))]
    assert not wrong, wrong


def test_a_kind_imports_no_other_kind():
    wrong = [(m, i) for m, found in _imports().items() for i in found
             if _kind(m) and _kind(i) and _kind(m) != _kind(i)]
    assert not wrong, wrong


def test_no_import_cycles():
    graph = {m: {i for i in found if i != m} for m, found in _imports().items()}
    # a package's __init__ importing its own submodules is how a registry is built, not a cycle
    graph = {m: {i for i in found if not i.startswith(m + ".")} for m, found in graph.items()}
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> None:
        seen[module] = 1
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if seen.get(target) == 1:
                raise AssertionError(" -> ".join(stack[stack.index(target):] + [target]))
            if target not in seen:
                visit(target)
        stack.pop()
        seen[module] = 2

    for module in sorted(graph):
        if module not in seen:
            visit(module)


def test_the_checks_fail_on_a_wrong_import(tmp_path, monkeypatch):
    """The rules above catch what they are for: a formats module reaching up to the run."""
    copy = tmp_path / "gpulint"
    (copy / "formats").mkdir(parents=True)
    (copy / "run").mkdir()
    (copy / "__init__.py").write_text("")
    (copy / "formats" / "__init__.py").write_text("")
    (copy / "run" / "__init__.py").write_text("")
    (copy / "run" / "engine.py").write_text("from gpulint.formats import tomlpos\n")
    (copy / "formats" / "tomlpos.py").write_text("def f():\n    from gpulint.run.engine import x\n")
    monkeypatch.setattr("test_layers.PACKAGE", copy)
    try:
        test_no_module_imports_a_higher_layer()
    except AssertionError as exc:
        assert "gpulint.formats.tomlpos" in str(exc)
    else:
        raise AssertionError("a formats module importing run/ was not caught")
    try:
        test_no_import_cycles()
    except AssertionError as exc:
        assert "gpulint.run.engine" in str(exc)
    else:
        raise AssertionError("an import cycle was not caught")
