"""The package's layers import only downwards (issue 14).

Allowed: ``dialect`` <- ``plans`` <- ``passes`` <- the API, and ``dialect`` <-
``plans`` <- ``lowering`` <- ``runtime`` <- the API; ``tools`` may import anything.
Every import of every module is read from its source (``ast``; imports inside
functions count too) and resolved to the layer it lands in; any import against the
layering fails the test. What a pass needs from a layer above it (XLA's resharding
probe, the runtime's stage timer) is handed to it (``alpa_mlir.services``).
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


def imports_of(source: str, name: str, is_package: bool) -> set[tuple[str, str]]:
    """(``name``, imported module) for every ``alpa_mlir`` import in ``source``, the text of module ``name``."""
    package = name if is_package else name.rpartition(".")[0]
    edges = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.ImportFrom):
            target = importlib.util.resolve_name("." * node.level + (node.module or ""), package) \
                if node.level else node.module
            edges.add((name, target))
        elif isinstance(node, ast.Import):
            edges.update((name, alias.name) for alias in node.names)
    return {(a, b) for a, b in edges if layer(b) is not None}


def imports() -> set[tuple[str, str]]:
    """(importing module, imported module) for every ``alpa_mlir`` import in the sources."""
    return {edge for folder in FOLDERS for path in (ROOT / folder).rglob("*.py")
            for edge in imports_of(path.read_text(), *module_name(path))}


def back_edges() -> set[tuple[str, str]]:
    return {(a, b) for a, b in imports() if layer(b) not in ALLOWED[layer(a)]}


def test_layers_import_only_downwards():
    assert not back_edges(), f"imports against the layering: {sorted(back_edges())}"


def test_the_walk_sees_every_kind_of_import():
    # Relative, absolute and function-local imports all count: a lazy import must not hide a back edge.
    name = "alpa_mlir.passes.intra_op.auto_sharding"
    source = "from ...lowering import spmd\nimport alpa_mlir.tools\ndef f():\n    from ...runtime import x\n"
    assert imports_of(source, name, False) == {(name, "alpa_mlir.lowering"), (name, "alpa_mlir.tools"),
                                               (name, "alpa_mlir.runtime")}
    assert all(layer(b) not in ALLOWED[layer(a)] for a, b in imports_of(source, name, False))


def test_the_runtime_imports_without_the_solver():
    # The runtime reads the names the passes write (dialect.names), not the passes that
    # write them: importing it must not load cvxpy (2.5 s of a 5 s import before).
    code = "import sys, alpa_mlir.runtime.pipeshard; print('cvxpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_the_pass_tool_starts_without_the_solver():
    # alpa-opt imports every pass; CVXPY (0.6-0.8 s) loads with the first ILP and
    # scipy.optimize (0.45 s) with the first profile fit, so a run that solves none (most
    # of the lit tests) starts in 1.7 s instead of 2.9.
    code = "import sys, alpa_mlir.tools.alpa_opt; print(sorted({'cvxpy', 'scipy.optimize'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_code_keeps_to_its_lint_rules():
    # pyproject.toml's [tool.ruff]: pyflakes, pycodestyle, isort, bugbear, pyupgrade, and
    # readable functions: at most 6 positional parameters (PLR0917; options after them
    # keyword-only), 12 branches (PLR0912) and 50 statements (PLR0915). Modules are split by
    # concept, not by length: no line cap.
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                             str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
