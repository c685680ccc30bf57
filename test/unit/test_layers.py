"""The package's layers import only downwards (issue 14).

Allowed: ``dialect`` <- ``plans`` <- ``passes`` <- the API, and ``dialect`` <-
``plans`` <- ``lowering`` <- ``runtime`` <- the API; ``tools`` may import anything. Every import of every module
is read from its source (``ast``; imports inside functions count too) and resolved
to the layer it lands in. ``KNOWN`` lists the back edges that are still there, to be
removed as issue 14 moves their targets; a new back edge fails the test, and so does
a listed one that is gone (so the list only shrinks).
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Source folder -> package (pyproject's package-dir: api/ is alpa_mlir itself).
FOLDERS = {"api": "alpa_mlir", "dialect": "alpa_mlir.dialect", "plans": "alpa_mlir.plans", "passes": "alpa_mlir.passes",
           "lowering": "alpa_mlir.lowering", "runtime": "alpa_mlir.runtime", "tools": "alpa_mlir.tools"}
ALLOWED = {
    "dialect": {"dialect"},
    "plans": {"dialect", "plans"},
    "passes": {"dialect", "plans", "passes"},
    "lowering": {"dialect", "plans", "lowering"},
    "runtime": {"dialect", "plans", "lowering", "runtime"},
    "api": {"dialect", "plans", "passes", "lowering", "runtime", "api"},
    "tools": set(FOLDERS),
}
# (importing module, imported module) back edges still to remove (issue 14).
KNOWN = {
    ("alpa_mlir.passes.inter_op.stage_construction", "alpa_mlir.lowering.spmd"),
    ("alpa_mlir.passes.inter_op.stage_construction", "alpa_mlir.runtime.profiling"),
    ("alpa_mlir.passes.intra_op.auto_sharding", "alpa_mlir.lowering.reshard_probe"),
}


def layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "alpa_mlir":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED and parts[1] != "api" else "api"


def module_name(path: Path) -> tuple[str, bool]:
    """The installed module name of a source file, and whether it is a package's ``__init__``."""
    folder, *rest = path.relative_to(ROOT).with_suffix("").parts
    is_package = rest[-1:] == ["__init__"]
    return ".".join([FOLDERS[folder], *(rest[:-1] if is_package else rest)]), is_package


def imports() -> set[tuple[str, str]]:
    """(importing module, imported module) for every ``alpa_mlir`` import in the sources."""
    edges = set()
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            name, is_package = module_name(path)
            package = name if is_package else name.rpartition(".")[0]
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom):
                    target = importlib.util.resolve_name("." * node.level + (node.module or ""), package) \
                        if node.level else node.module
                    edges.add((name, target))
                elif isinstance(node, ast.Import):
                    edges.update((name, alias.name) for alias in node.names)
    return {(a, b) for a, b in edges if layer(b) is not None}


def back_edges() -> set[tuple[str, str]]:
    return {(a, b) for a, b in imports() if layer(b) not in ALLOWED[layer(a)]}


def test_layers_import_only_downwards():
    found = back_edges()
    assert not found - KNOWN, f"new imports against the layering: {sorted(found - KNOWN)}"
    assert not KNOWN - found, f"gone, remove from KNOWN: {sorted(KNOWN - found)}"


def test_the_walk_sees_imports_inside_functions():
    # auto_sharding imports the XLA probe inside a function; the walk must find it.
    assert ("alpa_mlir.passes.intra_op.auto_sharding", "alpa_mlir.lowering.reshard_probe") in imports()


def test_the_runtime_imports_without_the_solver():
    # The runtime reads the names the passes write (dialect.names), not the passes that
    # write them: importing it must not load cvxpy (2.5 s of a 5 s import before).
    code = "import sys, alpa_mlir.runtime.pipeshard; print('cvxpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
