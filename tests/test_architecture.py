"""The floor plan, kept honest: the import contracts of pyproject.toml
(import-linter), the pure packages in a fresh process, no import cycle
between files (nor between packages), a small top of hill/, small classes,
every package saying what it holds and what it may import (checked against
the import graph), and `bfjoust joust` loading the engine alone."""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
HILL = ROOT / "hill"
BOT = ROOT / "bot"
# what every package may use without saying so (hill/__init__.py): the base modules
BASE = ("hill.errors", "hill.config", "hill.layout", "hill.threads", "hill.faults", "hill.logs")
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


# --- the file-level import graph: every import statement counts ---------


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def build_graph(*packages: str) -> grimp.ImportGraph:
    """grimp's graph, as import-linter builds it: every import statement
    counts, those under `if TYPE_CHECKING:` and inside functions included;
    the outside modules as their top-level names."""
    return grimp.build_graph(*packages, include_external_packages=True, cache_dir=None)


@functools.cache
def import_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The files' imports of hill/ and bot/: (module -> the project's modules
    it imports, module -> the outside modules it imports)."""
    graph = build_graph("hill", "bot")
    ours = {m for m in graph.modules if m.split(".")[0] in ("hill", "bot")}
    inside: dict[str, set[str]] = {}
    outside: dict[str, set[str]] = {}
    for module in ours:
        imported = graph.find_modules_directly_imported_by(module)
        # less itself: grimp reads `from hill.engine import _engine` (compiled) as hill.engine
        inside[module] = (imported & ours) - {module}
        outside[module] = {m.split(".")[0] for m in imported - ours}
    return inside, outside


def find_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of `graph` (Tarjan),
    as the list of its modules, the first repeated at the end."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for following in sorted(graph.get(node, ())):
            if following not in index:
                visit(following)
                low[node] = min(low[node], low[following])
            elif following in on_stack:
                low[node] = min(low[node], index[following])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles = []
    for group in groups:
        start = min(group)
        # the shortest way back to `start` inside its group (breadth first)
        came_from: dict[str, str] = {}
        frontier = [start]
        while start not in came_from:
            following_frontier = []
            for node in frontier:
                for following in sorted(graph.get(node, set()) & group):
                    if following not in came_from:
                        came_from[following] = node
                        following_frontier.append(following)
            frontier = following_frontier
        path = [start]
        while len(path) == 1 or path[-1] != start:
            path.append(came_from[path[-1]])
        cycles.append(path[::-1])
    return cycles


def test_no_import_cycle_between_files() -> None:
    """Not even through imports for type hints (under TYPE_CHECKING) or
    inside functions: a cycle is fixed by moving the shared piece down."""
    inside, _ = import_graph()
    assert [" -> ".join(cycle) for cycle in find_cycles(inside)] == []


def test_the_cycle_finder_names_each_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c", "a"], ["e", "e"]]


def test_the_graph_counts_every_import_statement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "sample"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from sample.b import B\n"
        "def later():\n    import sample.c\n"
    )
    (package / "b.py").write_text("from sample import a\nclass B: ...\n")
    (package / "c.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = build_graph("sample")
    assert graph.find_modules_directly_imported_by("sample.a") >= {"sample.b", "sample.c"}
    edges = {m: graph.find_modules_directly_imported_by(m) & graph.modules for m in graph.modules}
    assert find_cycles(edges) == [["sample.a", "sample.b", "sample.a"]]


# --- each package's "May import:" line, against the graph ----------------


def part_of(module: str) -> str:
    """The package a module belongs to (hill's subpackage, or bot), or the
    module itself at the top of hill/."""
    parts = module.split(".")
    return "bot" if parts[0] == "bot" else ".".join(parts[:2])


def distribution_names() -> dict[str, set[str]]:
    """An importable name's distributions, lower case (git: gitpython)."""
    return {
        name: {d.lower() for d in found}
        for name, found in importlib.metadata.packages_distributions().items()
    }


def may_import(init: Path) -> str:
    """The first sentence after "May import:" in a package's docstring."""
    docstring = ast.get_docstring(ast.parse(init.read_text())) or ""
    found = re.search(r"May import:?\s(.*?)\.(?:\s|$)", docstring, re.DOTALL)
    assert found, f"{init.relative_to(ROOT)} says nothing of what it may import"
    return " ".join(found.group(1).split())


def named_in(sentence: str, part: Callable[[str], str] | None = None) -> set[str]:
    """The packages and libraries a "May import:" sentence names (`part`:
    the part of the project a name stands for, by default part_of)."""
    part = part or part_of
    words = set(re.findall(r"[A-Za-z_][\w.-]*[\w]", sentence))
    return {w.lower() for w in words} | {part(w) for w in words if w.startswith("hill.")}


def imports_of_parts(part: Callable[[str], str] | None = None) -> dict[str, set[str]]:
    """Each package's imports (`part`: the part a module belongs to, by
    default part_of): the project's other parts (the base modules aside)
    and the outside libraries (the standard library aside)."""
    part = part or part_of
    inside, outside = import_graph()
    parts: dict[str, set[str]] = defaultdict(set)
    for module in inside:
        own = part(module)
        parts[own] |= {part(m) for m in inside[module]} - {own, *BASE}
        parts[own] |= outside[module] - set(sys.stdlib_module_names) - {"__future__"}
    return parts


PACKAGES = sorted(
    [init.parent for init in HILL.glob("*/__init__.py") if init.parent.name != "starters"] + [BOT]
)
# the web's concerns (hill/web/*/), each saying what it may import beside the web's core
WEB_PACKAGES = sorted(init.parent for init in (HILL / "web").glob("*/__init__.py"))


def web_part_of(module: str) -> str:
    """Inside the web: its subpackage (hill.web.pages) or core module
    (hill.web.builds); elsewhere part_of."""
    parts = module.split(".")
    inside = parts[:2] == ["hill", "web"] and len(parts) > 2
    return ".".join(parts[:3]) if inside else part_of(module)


def check_may_import(package: Path, part: Callable[[str], str]) -> None:
    """The first sentence after "May import:" names every package (hill.store,
    bot) and library (numpy, or its distribution's name: GitPython) the
    package's files import, and nothing it does not (the base modules,
    hill/__init__.py's "what everything may use", go unsaid)."""
    own = part(module_name(package / "__init__.py"))
    named = named_in(may_import(package / "__init__.py"), part)
    distributions = distribution_names()

    def said(name: str) -> bool:
        return name.lower() in named or bool(distributions.get(name, set()) & named)

    imports = imports_of_parts(part)[own]
    unsaid = sorted(name for name in imports if not said(name))
    assert unsaid == [], f"{own} imports {unsaid}, which its May import line does not name"
    stale = sorted(
        n for n in named if n.startswith(("hill.", "bot")) and n not in {*imports, *BASE}
    )
    assert stale == [], f"{own}'s May import line names {stale}, which it never imports"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_each_package_says_truly_what_it_may_import(package: Path) -> None:
    check_may_import(package, part_of)


@pytest.mark.parametrize("package", WEB_PACKAGES, ids=lambda p: p.name)
def test_each_web_concern_says_truly_what_it_may_import(package: Path) -> None:
    """The same check inside the web: its concerns name the web's core
    modules and the other concerns they import (hill.web.builds,
    hill.web.analytics), the rest of the hill and the libraries."""
    check_may_import(package, web_part_of)


def test_the_may_import_check_reads_names_and_distributions() -> None:
    sentence = "hill.store (its read side), hill.rules.names, GitPython, numpy"
    assert named_in(sentence) >= {"hill.store", "hill.rules", "gitpython", "numpy"}
    assert "gitpython" in distribution_names()["git"]


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
