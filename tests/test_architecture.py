"""The floor plan, kept honest: the import contracts of pyproject.toml
(import-linter), the pure packages in a fresh process, no package cycle,
a small top of hill/, small classes, every package saying what it holds,
and `bfjoust joust` loading the engine alone."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
HILL = ROOT / "hill"
PURE = ("hill.rules", "hill.ladder", "hill.tournaments", "hill.analytics")
IO_LIBRARIES = ("sqlalchemy", "alembic", "aiohttp", "git", "dask", "distributed", "irc", "jinja2")
MAX_TOP_MODULES = 8
MAX_CLASS_LINES = 250


def run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_import_contracts_hold() -> None:
    """pyproject.toml's [tool.importlinter] contracts: the rules are pure,
    imports point down the layers, the base imports no package, the web
    reads through the store."""
    result = subprocess.run(
        [Path(sys.executable).parent / "lint-imports", "--no-cache"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_pure_packages_load_no_io_library_in_a_fresh_process() -> None:
    code = f"""
import importlib, pkgutil, sys
for name in {PURE!r}:
    package = importlib.import_module(name)
    for module in pkgutil.walk_packages(package.__path__, name + "."):
        importlib.import_module(module.name)
print(sorted({{m.split(".")[0] for m in sys.modules}} & set({IO_LIBRARIES!r})))
"""
    assert run_python(code).strip() == "[]"


def package_of(module: str) -> str:
    """hill's part a module belongs to: its subpackage, or itself at the top."""
    parts = module.split(".")
    return ".".join(parts[:2])


def test_no_package_cycle_inside_hill() -> None:
    graph = grimp.build_graph("hill")
    edges: dict[str, set[str]] = defaultdict(set)
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if package_of(module) != package_of(imported):
                edges[package_of(module)].add(package_of(imported))
    cycles = []
    for start in list(edges):
        # a path back to `start` through other parts is a cycle
        seen, stack = set(), [(start, (start,))]
        while stack:
            part, path = stack.pop()
            for following in edges[part]:
                if following == start:
                    cycles.append(" -> ".join((*path, start)))
                elif following not in seen:
                    seen.add(following)
                    stack.append((following, (*path, following)))
    assert cycles == []


def test_few_plain_modules_at_the_top_of_hill() -> None:
    top = sorted(path.name for path in HILL.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top


def test_every_package_says_what_it_holds_and_what_it_may_import() -> None:
    quiet = []
    for init in sorted(HILL.glob("*/__init__.py")):
        if init.parent.name in ("starters", "web"):  # data; the web's is its server
            continue
        docstring = ast.get_docstring(ast.parse(init.read_text())) or ""
        if "May import" not in docstring:
            quiet.append(str(init.relative_to(ROOT)))
    assert quiet == []


@pytest.mark.parametrize("folder", ["hill", "bot"])
def test_no_class_over_250_lines(folder: str) -> None:
    long = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_CLASS_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} {lines}")
    assert long == []


def test_the_engine_commands_load_the_engine_alone() -> None:
    """`bfjoust joust|matrix|check|trace` import hill.cli: nothing of the hill
    but the engine comes with it (the other commands load theirs when run)."""
    code = "import sys, hill.cli; print(sorted(m for m in sys.modules if m.startswith('hill')))"
    loaded = eval(run_python(code))
    assert loaded == [
        "hill",
        "hill.cli",
        "hill.cli.engine",
        "hill.cli.shared",
        "hill.engine",
        "hill.engine._engine",
        "hill.errors",
    ]
