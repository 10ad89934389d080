"""The `Tool` contract: one profiler, tracer or sampler that can wrap a command.

A tool is checked before anything starts (`check`, no side effects), then opened as a context
manager around the wrapped command (`open`): setup before `yield`, teardown after it. What it
yields is a `Layer`: the argv prefix and environment it adds, and a hook for the workload's
start and end marks. Tools stack (see `stack.py`); teardown runs even when the command fails
or is interrupted, because the layers live on one `contextlib.ExitStack`.

    >>> class Echo:
    ...     name = "echo"
    ...     def check(self, ctx): pass
    ...     @contextlib.contextmanager
    ...     def open(self, ctx):
    ...         yield Layer(tool="echo", argv=("echo",))    # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from gpuscope.tools.config import ToolConfig

Mark = Callable[[str], None]


@dataclass(frozen=True)
class Layer:
    """What one opened tool adds around the command."""

    tool: str
    argv: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    on_mark: Mark | None = None
    tee: Mapping[str, Path] = field(default_factory=dict)  # "stdout"/"stderr" -> copy here


@dataclass
class Notes:
    """Warnings gathered during a run, and work deferred until every tool has torn down."""

    warnings: list[str] = field(default_factory=list)
    _deferred: dict[str, Callable[[], None]] = field(default_factory=dict)
    # told of each deferred step as it starts (the command has ended; analysing a big trace can
    # take a while and the user should see why gpuscope has not returned yet)
    progress: Callable[[str], None] | None = None

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def defer(self, key: str, action: Callable[[], None]) -> None:
        """Run `action` once, after all teardowns; the same key registered twice runs once."""
        self._deferred.setdefault(key, action)

    def run_deferred(self) -> None:
        for key, action in self._deferred.items():
            if self.progress is not None:
                self.progress(f"{key} …")
            try:
                action()
            except Exception as error:  # a failed plot must not lose the run's outputs
                self.warn(f"{key}: {type(error).__name__}: {error}")


@dataclass(frozen=True)
class RunContext:
    """Everything a tool may look at: where the run lives, the host, the child's base env."""

    run_dir: Path
    run_id: str
    command: tuple[str, ...]
    base_env: Mapping[str, str]
    vendor: str | None = None
    model: str = ""
    notes: Notes = field(default_factory=Notes)

    def which(self, program: str) -> str | None:
        """`program`'s path on the child's PATH (or itself if it names an existing file)."""
        return which(program, self.base_env.get("PATH", ""))


def which(program: str, path: str) -> str | None:
    """`shutil.which` without importing shutil (it pulls in bz2/lzma: startup time)."""
    if "/" in program:
        return program if os.path.isfile(program) else None
    for folder in path.split(os.pathsep):
        candidate = os.path.join(folder or ".", program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


class Tool(Protocol):
    """A profiler, tracer or sampler; see the module docstring."""

    name: str

    def check(self, ctx: RunContext) -> None:
        """Raise `ToolError` if this tool cannot work here; no side effects."""

    def open(self, ctx: RunContext) -> AbstractContextManager[Layer]:
        """Set up, yield the layer, tear down (also after failure or interruption)."""
        ...


@dataclass(frozen=True)
class ToolKind:
    """An implementation of tools, what the registry holds (`tools.registry`): `factory` makes a
    `Tool` from the configs of tools.json that name this kind. With `shared`, all tools of this
    kind in one run become one `Tool` (all library tracers write one `library_trace.csv`)."""

    name: str
    factory: Callable[[Sequence[ToolConfig]], Tool]
    shared: bool = False
