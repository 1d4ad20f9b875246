"""The package's shape: no import cycle among its modules (imports at any level counted), a docstring in each."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src"


def modules() -> dict[str, Path]:
    """Every module of migrate by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((SOURCE / "migrate").rglob("*.py")):
        parts = path.relative_to(SOURCE).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of migrate that NAME imports anywhere in its file: at the top, in a function, for type checking."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            named += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                above = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*above, *([node.module] if node.module else [])])
            named += [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    found = set()
    for module in named:
        while module and module not in known:  # `from migrate.x import name` imports migrate.x
            module = module.rpartition(".")[0]
        if module and module != name:
            found.add(module)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each module of migrate -> the modules of migrate it imports."""
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def a_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of GRAPH as the path around it, or [] when it has none (a depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 100 and graph["migrate.scan.orchestrate"]  # the walk found the package and its imports
    assert a_cycle(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import() -> None:
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}) == []


def test_a_function_level_import_counts(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from migrate.scan import scan\n\n    from .. import model\n")
    known = {"migrate.scan": Path(), "migrate.model": Path(), "migrate.port.m": module}
    assert imported("migrate.port.m", module, known) == {"migrate.scan", "migrate.model"}


def the_picture() -> tuple[dict[str, str], dict[str, set[str]]]:
    """docs/architecture.md's picture: each module or package its box names -> the box; each box -> those it points to."""
    text = (SOURCE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("```mermaid", 1)[1].split("```", 1)[0]
    boxes: dict[str, str] = {}
    for box, label in re.findall(r'^\s*(\w+)\["([^"]+)"\]', block, re.M):
        for name in re.findall(r"\b(\w+)\.py\b", label) + re.findall(r"^(\w+)/", label):
            boxes[name] = box
    arrows: dict[str, set[str]] = {}
    for left, right in re.findall(r"^\s*([\w &]+?)\s*-->\s*([\w &]+?)\s*$", block, re.M):
        for a in left.split("&"):
            arrows.setdefault(a.strip(), set()).update(b.strip() for b in right.split("&"))
    return boxes, arrows


def box_of(module: str, boxes: dict[str, str]) -> str:
    """The box of MODULE: its package's (migrate.scan.file -> scan/) or its own (migrate.risk -> risk.py)."""
    parts = module.split(".")
    return boxes[parts[1]] if len(parts) > 1 else "package"


def test_the_architecture_picture_is_the_import_graph() -> None:
    """Every import between two boxes follows the picture's arrows (those into the ground floor are not drawn), and
    every arrow is an import."""
    boxes, arrows = the_picture()
    graph = import_graph()
    assert {box_of(m, boxes) for m in graph} - {"package"} == set(boxes.values())  # each module has its box

    def reached(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(arrows.get(start, ()))
        while todo:
            if (box := todo.pop()) not in seen:
                seen.add(box)
                todo += arrows.get(box, ())
        return seen

    imports = {(box_of(a, boxes), box_of(b, boxes)) for a, targets in graph.items() for b in targets}
    imports = {(a, b) for a, b in imports if a != b and "package" not in (a, b)}
    assert sorted((a, b) for a, b in imports if b != "ground" and b not in reached(a)) == []
    assert sorted((a, b) for a, targets in arrows.items() for b in targets if (a, b) not in imports) == []


def test_each_module_says_its_job_in_its_docstring() -> None:
    silent = [name for name, path in modules().items()
              if not (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").strip()]
    assert silent == []
