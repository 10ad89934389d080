"""Tool kinds by name: built-ins and third-party plugins registered the same way.

A *kind* is an implementation (`rocprof`, `sampler`, `library_trace`, ...; a `ToolKind`, whose
factory makes `Tool`s); a *tool* is a named entry of tools.json that says which kind runs it
and with what cmd and env. gpuscope's own kinds (`tools.builtin`) are registered with
`Registry.register`, as a plug-in's are; an installed package adds kinds through entry points of
the `gpuscope.tools` group (each loads a `ToolKind`), read on first need. A name registered
twice raises. A new kind is one module plus one registration:

    # pyproject.toml of the package that adds it
    [project.entry-points."gpuscope.tools"]
    mytracer = "mypackage.tracer:KIND"   # KIND = ToolKind("mytracer", MyTool.from_configs)

    >>> registry = Registry()
    >>> registry.register(ToolKind("mine", lambda configs: MyTool(configs[0])))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from gpuscope import plugins
from gpuscope.errors import ConfigError
from gpuscope.tools.builtin import builtin_kinds
from gpuscope.tools.config import GENERIC_KIND, ToolConfig
from gpuscope.tools.tool import Tool, ToolKind

GROUP = "gpuscope.tools"
__all__ = ["GROUP", "Planned", "Registry", "ToolKind", "default_registry", "instantiate"]


class Registry:
    """Name -> ToolKind; duplicate names raise."""

    def __init__(self, plugins: Callable[[], Iterable[ToolKind]] | None = None) -> None:
        self._kinds: dict[str, ToolKind] = {}
        self._plugins = plugins  # loaded on first need: scanning entry points costs startup

    def register(self, kind: ToolKind) -> None:
        plugins.add(self._kinds, kind.name, kind, "tool kind")

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    def __iter__(self) -> Iterator[str]:
        self.load_plugins()
        return iter(sorted(self._kinds))

    def load_plugins(self) -> None:
        found, self._plugins = self._plugins, None
        for kind in found() if found is not None else ():
            self.register(kind)

    def kind_of(self, config: ToolConfig) -> ToolKind:
        """The kind that runs `config`: its `kind`, else one named like it, else `command`."""
        if (config.kind or config.name) not in self._kinds:
            self.load_plugins()
        name = config.kind or (config.name if config.name in self._kinds else GENERIC_KIND)
        if name not in self._kinds:
            raise ConfigError(
                f"tool {config.name!r} names kind {name!r}, which is not installed; "
                f"known kinds: {', '.join(self)}"
            )
        return self._kinds[name]


def default_registry() -> Registry:
    """A fresh registry with the built-in kinds and any installed plugins."""
    registry = Registry(plugins=installed_plugins)
    for kind in builtin_kinds():
        registry.register(kind)
    return registry


def installed_plugins() -> list[ToolKind]:
    """The `ToolKind`s of the `gpuscope.tools` entry points."""
    return [kind for _, kind in plugins.installed(GROUP)]


@dataclass(frozen=True)
class Planned:
    """A tool ready to run, with the kind and the config(s) it came from."""

    tool: Tool
    kind: str
    configs: tuple[ToolConfig, ...]


def instantiate(configs: Sequence[ToolConfig], registry: Registry) -> list[Planned]:
    """One Tool per config, in order; configs of a shared kind become one Tool placed at
    the first of them."""
    groups: dict[str, list[ToolConfig]] = {}
    order: list[tuple[ToolKind, list[ToolConfig]]] = []
    for config in configs:
        kind = registry.kind_of(config)
        if kind.shared and kind.name in groups:
            groups[kind.name].append(config)
            continue
        group = [config]
        if kind.shared:
            groups[kind.name] = group
        order.append((kind, group))
    return [Planned(kind.factory(group), kind.name, tuple(group)) for kind, group in order]
