"""Renderers by name: every output format of a document is one module with one function,
`render(document) -> str`, registered under a name.

    >>> from gpuscope.report import registry
    >>> sorted(registry.renderers())                      # doctest: +SKIP
    ['html', 'markdown', 'terminal']
    >>> page = registry.render("html", document)          # doctest: +SKIP

gpuscope's own renderers are registered the way a third party's is: an entry point in the
`gpuscope.renderers` group (gpuscope's pyproject.toml names `terminal`, `markdown` and `html`), or
`register(name, renderer)` at run time. A name registered twice raises. A format is one module:

    # pyproject.toml of the package that adds it
    [project.entry-points."gpuscope.renderers"]
    rst = "mypackage.rst"                # a module with `def render(document) -> str`

A renderer may take keyword options after the document (`markdown.render(doc, depth=2)`);
`render(name, doc, **options)` passes them on, and an option it does not take is a TypeError.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol, cast

from gpuscope import plugins
from gpuscope.document.model import Document
from gpuscope.errors import ConfigError

GROUP = "gpuscope.renderers"
# gpuscope's own, as its pyproject.toml declares them (tests/unit/test_plugins.py keeps the two
# equal): loaded from here too where no metadata names them (a source tree run by path)
OWN = (
    ("terminal", "gpuscope.report.terminal"),
    ("markdown", "gpuscope.report.markdown"),
    ("html", "gpuscope.report.html"),
)


class Renderer(Protocol):
    """The contract of a renderer: any document in, its text out (a module satisfies it)."""

    def render(self, document: Document) -> str: ...


_REGISTERED: dict[str, Renderer] = {}


def register(name: str, renderer: Renderer) -> None:
    """Add a renderer under `name`; ValueError when the name is taken (an installed one's
    too)."""
    _load_entry_points()
    plugins.add(_REGISTERED, name, renderer, "renderer")


def renderers() -> dict[str, Renderer]:
    """Every renderer by name: the entry points' (gpuscope's own among them), then those
    registered at run time."""
    _load_entry_points()
    return dict(_REGISTERED)


@functools.cache
def _load_entry_points() -> None:
    """Register the entry points' renderers, once per process (scanning the installed
    packages' metadata costs tens of ms)."""
    for name, renderer in installed():
        plugins.add(_REGISTERED, name, renderer, "renderer")


def installed() -> list[tuple[str, Renderer]]:
    """(name, module) of every entry point of the `gpuscope.renderers` group."""
    return list(plugins.installed(GROUP, OWN))


def renderer(name: str) -> Renderer:
    """The renderer registered as `name`; ConfigError naming the others when there is none."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    if not _load_entry_points.cache_info().currsize:  # only this one's module is imported
        one = plugins.installed_one(GROUP, name, OWN)
        if one is not None:
            return cast(Renderer, one)
    found = renderers()
    if name not in found:
        known = ", ".join(sorted(found)) or "none"
        raise ConfigError(
            f"no renderer named {name!r} (registered: {known}); gpuscope's own come from its "
            "installed metadata: reinstall it (pip install -e .) if they are missing"
        )
    return found[name]


def render(name: str, document: Document, **options: Any) -> str:
    """`document` drawn by the renderer `name`, with its keyword `options`."""
    function: Callable[..., str] = renderer(name).render
    return function(document, **options)
