"""The package's folders in the direction data flows: each layer imports only the ones before it.

descriptors -> reference -> operators -> engine -> reports -> models -> frontends. The
descriptors and the reference executor import neither onnx nor onnxruntime; nothing but a front
end imports a front end; no module imports another module's private (``_name``) helper.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import ort_layouts

PACKAGE = Path(ort_layouts.__file__).parent
LAYERS = ["_errors", "descriptors", "reference", "operators", "engine", "reports", "models", "frontends"]
PURE = {"descriptors", "reference"}  # no onnx, no onnxruntime


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _layer(module: str) -> str | None:
    """The layer of a dotted module name inside the package (None: the package root itself)."""
    parts = module.split(".")
    if parts[0] != "ort_layouts":
        return None
    if len(parts) == 1:
        return None
    return parts[1] if parts[1] in LAYERS else None


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import in a file, at any depth (lazy imports included)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative imports are not used in this package
                found.append((node.lineno, "." * node.level + (node.module or ""), []))
            else:
                found.append((node.lineno, node.module or "", [a.name for a in node.names]))
    return found


def _own_layer(path: Path) -> str | None:
    rel = path.relative_to(PACKAGE).parts
    return rel[0] if len(rel) > 1 else (rel[0][:-3] if rel[0] == "_errors.py" else None)


def _violations() -> list[str]:
    out = []
    for path in _modules():
        own = _own_layer(path)
        rel = path.relative_to(PACKAGE.parent)
        for line, module, names in _imports(path):
            where = f"{rel}:{line} imports {module}"
            if module.startswith("."):
                out.append(f"{where}: use absolute imports")
                continue
            top = module.split(".")[0]
            if own in PURE and top in ("onnx", "onnxruntime"):
                out.append(f"{where}: the {own} layer is pure DirectML / numpy")
            target = _layer(module)
            if module == "ort_layouts" and names:  # from ort_layouts import X: the public API
                if own is not None and own != "frontends":
                    out.append(f"{where}: a layer imports the package's public API (a cycle)")
                continue
            if target is None:
                continue
            if own is None:  # __init__ / __main__
                if path.name == "__init__.py" and path.parent == PACKAGE and target == "frontends":
                    out.append(f"{where}: the library imports its front end")
                continue
            if LAYERS.index(target) > LAYERS.index(own):
                out.append(f"{where}: {own} must not import {target} (against the data flow)")
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                out.append(f"{where}: private helper {private} of another module")
    return out


def test_imports_follow_the_data_flow() -> None:
    assert _violations() == []


@pytest.mark.parametrize(("importer", "imported", "expected"), [
    ("descriptors", "ort_layouts.engine.runner", True),
    ("reference", "ort_layouts.operators.case", True),
    ("engine", "ort_layouts.frontends.cli", True),
    ("reports", "ort_layouts.engine.result", False),
    ("frontends", "ort_layouts.models.extract", False),
])
def test_the_direction_rule_itself(importer: str, imported: str, expected: bool) -> None:
    """The check above flags an import against the direction, and only that."""
    against = LAYERS.index(_layer(imported) or "") > LAYERS.index(importer)
    assert against is expected


def test_the_check_finds_a_planted_violation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A descriptors module importing onnx and the engine is reported twice."""
    fake = tmp_path / "ort_layouts"
    (fake / "descriptors").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "descriptors" / "bad.py").write_text(
        "import onnx\n\ndef f():\n    from ort_layouts.engine.runner import run_cases\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    found = _violations()
    assert len(found) == 2 and "pure" in found[0] and "against the data flow" in found[1]


def test_every_module_is_in_a_layer() -> None:
    """Besides the package's entry points, every module sits in one of the layer folders."""
    entry = ("__init__.py", "__main__.py", "_errors.py", "_startup.py")
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name not in entry]
    assert loose == []
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= set(LAYERS)


def test_the_startup_module_imports_the_standard_library_only() -> None:
    """ARCHITECTURE.md: ``_startup.py`` imports nothing of ours, the standard library only, and
    the package imports it before anything else: its guard of the command line's start is set
    before numpy, onnx and onnxruntime load."""
    imported = {module.split(".")[0] for _, module, _ in _imports(PACKAGE / "_startup.py")}
    assert imported and not imported - sys.stdlib_module_names, sorted(imported - sys.stdlib_module_names)
    first = next((module, names) for _, module, names in _imports(PACKAGE / "__init__.py")
                 if module != "__future__")
    assert first in (("ort_layouts._startup", []), ("ort_layouts", ["_startup"]))
