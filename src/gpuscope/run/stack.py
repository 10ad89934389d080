"""Stacking tools the way madengine does.

For tools `[A, B, C]` the command becomes `C.argv B.argv A.argv COMMAND` (the first tool is
innermost); setup runs C, B, A (outermost first) and teardown A, B, C (innermost first, which
is what an `ExitStack` entered in that order does). A wrapper identical to one already applied
is applied once. Environment changes merge in list order; a later tool wins a conflict, and
the conflict is reported.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass

from gpuscope.tools.tool import Layer, Notes, RunContext, Tool


@dataclass(frozen=True)
class Composition:
    """The command line and environment changes the stacked layers produce."""

    argv: tuple[str, ...]
    env: dict[str, str]
    applied: dict[str, tuple[str, ...]]  # tool -> the argv prefix actually applied


def open_layers(stack: ExitStack, tools: Sequence[Tool], ctx: RunContext) -> list[Layer]:
    """Enter every tool outermost-first; returns the layers innermost-first (list order)."""
    layers = [stack.enter_context(_guarded(tool, ctx)) for tool in reversed(tools)]
    return layers[::-1]


@contextmanager
def _guarded(tool: Tool, ctx: RunContext) -> Iterator[Layer]:
    """Setup errors propagate (the run must not start); teardown errors become warnings,
    so that one tool's failed teardown never stops the others'."""
    manager = tool.open(ctx)
    layer = manager.__enter__()
    try:
        yield layer
    except BaseException as error:
        _exit_quietly(manager, error, ctx.notes, tool.name)
        raise
    _exit_quietly(manager, None, ctx.notes, tool.name)


def _exit_quietly(
    manager: AbstractContextManager[Layer],
    error: BaseException | None,
    notes: Notes,
    name: str,
) -> None:
    try:
        if error is None:
            manager.__exit__(None, None, None)
        else:
            manager.__exit__(type(error), error, error.__traceback__)
    except Exception as failure:
        notes.warn(f"{name}: teardown failed: {type(failure).__name__}: {failure}")


def compose(layers: Sequence[Layer], command: Sequence[str], notes: Notes) -> Composition:
    """Wrap `command` in the layers' argv (first layer innermost) and merge their env."""
    argv = list(command)
    applied: dict[str, tuple[str, ...]] = {}
    for layer in layers:
        if layer.argv and layer.argv not in applied.values():
            argv[:0] = layer.argv
            applied[layer.tool] = layer.argv
    return Composition(argv=tuple(argv), env=merge_env(layers, notes), applied=applied)


def merge_env(layers: Sequence[Layer], notes: Notes) -> dict[str, str]:
    env: dict[str, str] = {}
    owner: dict[str, str] = {}
    for layer in layers:
        for key, value in layer.env.items():
            _note_conflict(env, owner, key, value, layer.tool, notes)
            env[key], owner[key] = value, layer.tool
    return env


def _note_conflict(
    env: Mapping[str, str], owner: Mapping[str, str], key: str, value: str, tool: str,
    notes: Notes,
) -> None:  # fmt: skip
    if key in env and env[key] != value:
        notes.warn(
            f"{tool} sets {key}={value!r}, overriding {owner[key]}'s {env[key]!r} "
            "(the later tool in the list wins)"
        )
