"""What gpuscope's registries share: readers (`trace.registry`), extra analyses
(`analysis.extras`), tool kinds (`tools.registry`) and renderers (`report.registry`). Each is a
name-keyed registry with a Protocol for what it holds, an entry-point group through which an
installed package adds to it, and built-ins registered the way a third party's are; a name taken
twice raises.

    >>> found: dict[str, object] = {}
    >>> add(found, "html", object(), "renderer")
    >>> add(found, "html", object(), "renderer")
    Traceback (most recent call last):
    ValueError: renderer 'html' is already registered
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

T = TypeVar("T")


def add(registered: dict[str, T], name: str, plugin: T, what: str) -> None:
    """`registered[name] = plugin`; ValueError when `name` is taken."""
    if name in registered:
        raise ValueError(f"{what} {name!r} is already registered")
    registered[name] = plugin


def installed(group: str, own: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, Any], ...]:
    """(name, loaded object) of every entry point of `group`, read once per process. `own`:
    (name, module) of gpuscope's own entries in the group, as pyproject.toml declares them,
    loaded where the metadata lacks them — a source tree run by path (PYTHONPATH=src) has none."""
    return _installed(group, own)


@functools.cache
def _installed(group: str, own: tuple[tuple[str, str], ...]) -> tuple[tuple[str, Any], ...]:
    found = [(entry.name, entry.load()) for entry in _entry_points().select(group=group)]
    names = {name for name, _ in found}
    return tuple(found) + tuple((n, _load(m)) for n, m in own if n not in names)


@functools.cache
def installed_one(group: str, name: str, own: tuple[tuple[str, str], ...] = ()) -> Any:
    """The loaded object of entry point `name` of `group` (None when there is none), loading
    no other: a command that draws one format imports only that renderer."""
    for entry in _entry_points().select(group=group, name=name):
        return entry.load()
    module = dict(own).get(name)
    return _load(module) if module is not None else None


def _load(module: str) -> Any:
    import importlib

    return importlib.import_module(module)


@functools.cache
def _entry_points() -> Any:
    """Every installed package's entry points, scanned once for all groups: each scan reads
    every package's metadata (~70 ms with Ray and Dask installed), and four groups are asked."""
    from importlib import metadata

    return metadata.entry_points()
