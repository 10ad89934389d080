"""The layers of docs/design.md as contracts, read from the source with `ast`: every import counts
(module level, inside functions, under `if TYPE_CHECKING:`), and so does a string that names a
gpuscope module (`"gpuscope.commands.analyze"`: a registry that imports by name).

1. A package imports only packages of lower tiers, or itself. The tiers are DESIGN.md's layers,
   split where a layer's own packages depend on one another (errors and _version under the rest
   of layer 1; peaks under the rest of layer 2; commands under cli under __main__).
2. An analysis never imports a renderer (analysis/ -> report/), and a renderer draws any document
   without knowing which analysis made it (report/ -> analysis/, diff/, counters/, ranks/).
3. `_private` means private to its package: `gpuscope.a._b` (or anything under it) is imported
   only by modules of `gpuscope.a` and its sub-packages. So a reader never imports another
   reader's private module.
4. Nothing imports the package face (`from gpuscope import __version__`): it is the top.
5. No two files import each other, directly or round a circle, by any import statement (module
   level, in a function, under `if TYPE_CHECKING:`): a type lives in its own module, beside what
   serializes it, and is imported downward (`python scripts/import_graph.py --cycles`).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
FACE = "gpuscope"

TIERS: tuple[tuple[str, ...], ...] = (  # lowest first
    ("errors", "_version", "text", "plugins"),  # layer 1
    ("document", "output", "schemas", "rank_folders", "_read_workers", "formats"),  # layer 1
    ("peaks",),  # layer 2
    ("trace", "timing", "samplers", "libtrace", "madengine"),  # layer 2
    ("analysis", "report"),  # layer 3
    ("ranks", "diff", "counters", "export", "frames"),  # layer 4
    ("tools", "capture", "libperf", "history"),  # layer 5
    ("run", "doctor"),  # layer 5: a run stacks the tools; the doctor asks which can run here
    ("commands", "notebook"),  # layer 6: the interfaces (command line, IPython)
    ("cli",),  # layer 6
    ("__main__",),  # layer 6
    (FACE,),  # gpuscope/__init__.py: the library's face, above everything
)
FORBIDDEN = {  # rule 2, said on its own so that a failure names it
    "analysis": {"report"},
    "report": {"analysis", "diff", "counters", "ranks"},
}
# (importer, imported): why it cannot be fixed now. Keep it empty.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}

_MODULE_STRING = re.compile(r"^gpuscope(\.[A-Za-z_][A-Za-z0-9_]*)+$")


@cache
def modules() -> dict[str, Path]:
    """Every module of gpuscope by dotted name (a package by its own name)."""
    found = {}
    for path in (SRC / "gpuscope").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def resolve(name: str) -> str:
    """The module an imported name lives in (`gpuscope.a.b.func` -> `gpuscope.a.b`)."""
    while name not in modules() and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports(module: str, strings: bool = True) -> Iterator[tuple[int, str]]:
    """(line, imported module) for every gpuscope import of `module` (and, with `strings`, every
    string that names a gpuscope module)."""
    path = modules()[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, resolve(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                yield node.lineno, resolve(f"{base}.{alias.name}")
        elif strings and isinstance(node, ast.Constant) and _names_a_module(node.value):
            yield node.lineno, node.value


def _names_a_module(value: object) -> bool:
    return isinstance(value, str) and bool(_MODULE_STRING.match(value)) and value in modules()


def unit(module: str) -> str:
    """The package (or top-level module) a module belongs to: the tiers' names."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else FACE


def tier(name: str) -> int:
    for level, names in enumerate(TIERS):
        if name in names:
            return level
    raise AssertionError(f"gpuscope/{name} is in no tier: add it to TIERS and docs/design.md")


@cache
def edges() -> list[tuple[str, int, str]]:
    """(importer, line, imported) for every import between two gpuscope modules."""
    found = {
        (module, line, target)
        for module in modules()
        for line, target in imports(module)
        if target.startswith(FACE) and target != module
    }
    return sorted(found)


def cycles() -> list[list[str]]:
    """The groups of modules that import one another (strongly connected components of more
    than one module of the import-statement graph), found by Tarjan's algorithm."""
    graph = {m: {t for _, t in imports(m, strings=False) if t in modules() and t != m}
             for m in modules()}  # fmt: skip
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for child in sorted(graph[node]):
            if child not in index:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in stack:
                low[node] = min(low[node], index[child])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def owner(module: str) -> str | None:
    """The package a private module is private to: `gpuscope.a._b.c` -> `gpuscope.a`."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def test_every_package_has_a_tier() -> None:
    for module in modules():
        tier(unit(module))


def test_imports_go_down_the_layers() -> None:
    wrong = []
    for module, line, target in edges():
        src, dst = unit(module), unit(target)
        if src == dst or (module, target) in KNOWN_EXCEPTIONS:
            continue
        if tier(dst) >= tier(src):
            wrong.append(f"{module}:{line} imports {target} ({src} may not import {dst})")
    assert not wrong, "imports against docs/design.md's layers:\n" + "\n".join(wrong)


def test_analyses_and_renderers_stay_apart() -> None:
    wrong = [
        f"{module}:{line} imports {target}"
        for module, line, target in edges()
        if unit(target) in FORBIDDEN.get(unit(module), ())
    ]
    assert not wrong, "an analysis imports a renderer, or a renderer an analysis:\n" + "\n".join(
        wrong
    )


def test_private_modules_stay_private_to_their_package() -> None:
    wrong = []
    for module, line, target in edges():
        package = owner(target)
        if package is None or module == package or module.startswith(package + "."):
            continue
        if (module, target) not in KNOWN_EXCEPTIONS:
            wrong.append(f"{module}:{line} imports {target}, private to {package}")
    assert not wrong, "imports of another package's private module:\n" + "\n".join(wrong)


def test_nothing_imports_the_package_face() -> None:
    wrong = [f"{m}:{line}" for m, line, target in edges() if target == FACE]
    assert not wrong, "import from gpuscope._version, not the package face: " + ", ".join(wrong)


def test_no_two_files_import_each_other() -> None:
    found = cycles()
    assert not found, "file-level import cycles:\n" + "\n".join(" ".join(c) for c in found)


def test_a_cycle_hidden_in_a_function_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deferred import closes a circle as surely as one at the top of the file."""
    real = imports

    def with_a_deferred_import(module: str, strings: bool = True) -> Iterator[tuple[int, str]]:
        yield from real(module, strings)
        if module == "gpuscope.errors":
            yield 0, "gpuscope.output"  # output.py imports errors; errors "imports" it back

    monkeypatch.setattr(sys.modules[__name__], "imports", with_a_deferred_import)
    assert ["gpuscope.errors", "gpuscope.output"] in cycles()


@pytest.mark.parametrize(
    ("module", "expected"),
    [("gpuscope.trace.readers.nsys._sql", "gpuscope.trace.readers.nsys"),
     ("gpuscope.analysis._finding", "gpuscope.analysis"),
     ("gpuscope.analysis.communication.names", None), ("gpuscope.__main__", None)],
)  # fmt: skip
def test_owner_of_a_private_module(module: str, expected: str | None) -> None:
    assert owner(module) == expected


def test_a_reader_cannot_reach_into_another_reader() -> None:
    """Rule 3 for the readers' packages: nsys/ importing rocprof/'s private module fails."""
    importer, target = "gpuscope.trace.readers.nsys.read", "gpuscope.trace.readers.rocprof._csv"
    package = owner(target)
    assert package is not None and not importer.startswith(package + ".")
