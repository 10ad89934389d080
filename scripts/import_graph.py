"""Print gpuscope's package-level import graph as text: one "pkg -> pkg  count" line per edge.

A package is a top-level sub-package or module of gpuscope (`analysis`, `trace`, `cli`, ...;
`__init__` is the package face); `--depth 2` splits sub-packages one level further
(`analysis.communication`, `trace.readers`). Every import counts: module level, inside functions,
under `if TYPE_CHECKING:`, and a string that names a gpuscope module (a registry importing by
name). Imports within one package are left out; tests/unit/test_layers.py checks the same edges.

    python scripts/import_graph.py            # edges, sorted
    python scripts/import_graph.py --private  # only imports of another package's _private module
    python scripts/import_graph.py --cycles   # file-level import cycles, largest first

`--cycles` lists the groups of modules (files) that import one another, directly or round a
circle, by any import statement: module level, inside functions, under `if TYPE_CHECKING:`
(strings that name a module are left out: they order packages, not files). Each group is a
strongly connected component of the file-level graph; tests/unit/test_layers.py wants none.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections import Counter
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(tree: ast.AST, name: str, is_package: bool) -> list[str]:
    """The gpuscope names a module imports (`from x import y` gives x.y), and the strings that
    name a gpuscope module (registries that import by name)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[: len(here) - node.level + 1]
                base = ".".join(here + ([base] if base else []))
            found += [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and re.fullmatch(r"gpuscope(\.\w+)+", str(node.value)):
            found.append(f"string:{node.value}")
    return [f for f in found if f.startswith(("gpuscope.", "string:gpuscope."))]


def file_edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the gpuscope modules its import statements name (strings left out)."""
    graph: dict[str, set[str]] = {}
    for name, path in sorted(modules.items()):
        tree = ast.parse(path.read_text(), str(path))
        targets = set()
        for target in imported(tree, name, path.name == "__init__.py"):
            if target.startswith("string:"):
                continue
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without
    recursion), largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def unit(name: str, depth: int) -> str:
    parts = name.split(".")[1:] or ["__init__"]
    return ".".join(parts[:depth])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=1)
    parser.add_argument("--private", action="store_true")
    parser.add_argument("--cycles", action="store_true")
    parser.add_argument("--src", type=Path, default=SRC, help="the folder holding gpuscope/")
    args = parser.parse_args()
    modules = {module_name(p, args.src): p for p in (args.src / "gpuscope").rglob("*.py")}
    if args.cycles:
        found = cycles(file_edges(modules))
        print(f"{len(found)} file-level import cycles")
        for component in found:
            print(f"{len(component)}: " + " ".join(m.removeprefix("gpuscope.") for m in component))
        return
    edges: Counter[tuple[str, str]] = Counter()
    for name, path in sorted(modules.items()):
        tree = ast.parse(path.read_text(), str(path))
        targets = set()
        for target in imported(tree, name, path.name == "__init__.py"):
            if target.startswith("string:"):  # only a string that names a module exactly
                target = target.removeprefix("string:")
                if target in modules:
                    targets.add(target)
                continue
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]  # `from pkg import name` names no module
            targets.add(target)
        for target in targets:
            src, dst = unit(name, args.depth), unit(target, args.depth)
            if src == dst:
                continue
            if args.private and not any(p.startswith("_") for p in target.split(".")[1:]):
                continue
            edges[src, dst] += 1
    for (src, dst), count in sorted(edges.items()):
        print(f"{src} -> {dst}  {count}")


if __name__ == "__main__":
    main()
