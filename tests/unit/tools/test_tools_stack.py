"""Stacking order exactly as madengine: first tool innermost, setup outermost-first,
teardown innermost-first, identical wrappers once; teardown always runs."""

from __future__ import annotations

from contextlib import ExitStack

import pytest
from tools_fakes import Recorder

from gpuscope.errors import ToolError
from gpuscope.run.stack import compose, open_layers
from gpuscope.tools.tool import Layer, Notes, RunContext


def _tools(events: list[str]) -> list[Recorder]:
    return [
        Recorder("A", events, argv=("a", "--x")),
        Recorder("B", events, argv=("b",), env={"SHARED": "b", "B": "1"}),
        Recorder("C", events, argv=("c", "-y"), env={"SHARED": "c"}),
    ]


def test_first_tool_innermost_setup_outermost_first_teardown_innermost_first(
    ctx: RunContext,
) -> None:
    events: list[str] = []
    with ExitStack() as stack:
        layers = open_layers(stack, _tools(events), ctx)
        composition = compose(layers, ("app", "arg"), ctx.notes)
        events.append("run")
    assert composition.argv == ("c", "-y", "b", "a", "--x", "app", "arg")
    assert events == ["setup C", "setup B", "setup A", "run",
                      "teardown A", "teardown B", "teardown C"]  # fmt: skip


def test_env_merges_in_list_order_and_conflicts_are_reported(ctx: RunContext) -> None:
    events: list[str] = []
    with ExitStack() as stack:
        composition = compose(open_layers(stack, _tools(events), ctx), ("app",), ctx.notes)
    assert composition.env == {"SHARED": "c", "B": "1"}
    assert ctx.notes.warnings == [
        "C sets SHARED='c', overriding B's 'b' (the later tool in the list wins)"
    ]


def test_identical_wrappers_are_applied_once() -> None:
    layers = [Layer("A", ("wrap", "-v")), Layer("B", ("other",)), Layer("C", ("wrap", "-v"))]
    composition = compose(layers, ("app",), Notes())
    assert composition.argv == ("other", "wrap", "-v", "app")
    assert composition.applied == {"A": ("wrap", "-v"), "B": ("other",)}


def test_teardown_runs_when_the_command_fails(ctx: RunContext) -> None:
    events: list[str] = []
    with pytest.raises(KeyboardInterrupt), ExitStack() as stack:
        open_layers(stack, _tools(events), ctx)
        raise KeyboardInterrupt
    assert events[-3:] == ["teardown A", "teardown B", "teardown C"]


def test_a_failed_setup_unwinds_the_tools_already_set_up(ctx: RunContext) -> None:
    events: list[str] = []
    tools = _tools(events)
    tools[1].fail_setup = True  # B fails after C (outermost) was set up
    with pytest.raises(ToolError, match="B setup failed"), ExitStack() as stack:
        open_layers(stack, tools, ctx)
    assert events == ["setup C", "setup B", "teardown C"]


def test_a_failed_teardown_is_a_warning_and_the_others_still_run(ctx: RunContext) -> None:
    events: list[str] = []
    tools = _tools(events)
    tools[0].fail_teardown = True
    with ExitStack() as stack:
        open_layers(stack, tools, ctx)
    assert events[-3:] == ["teardown A", "teardown B", "teardown C"]
    assert ctx.notes.warnings == ["A: teardown failed: RuntimeError: A teardown broke"]


def test_deferred_actions_run_once_and_failures_become_warnings() -> None:
    notes = Notes()
    calls: list[str] = []
    notes.defer("plot", lambda: calls.append("first"))
    notes.defer("plot", lambda: calls.append("second"))
    notes.defer("broken", lambda: 1 / 0)
    notes.run_deferred()
    assert calls == ["first"]
    assert notes.warnings == ["broken: ZeroDivisionError: division by zero"]


def test_each_deferred_step_is_announced_as_it_starts() -> None:
    """After the command ends, `gpuscope run` analyses the profilers' outputs: the user sees
    which step it is in rather than a silent wait."""
    said: list[str] = []
    notes = Notes(progress=said.append)
    order: list[str] = []
    notes.defer("analyze rocprof_output", lambda: order.append(f"ran after: {said[-1]}"))
    notes.defer("plot", lambda: None)
    notes.run_deferred()
    assert said == ["analyze rocprof_output …", "plot …"]
    assert order == ["ran after: analyze rocprof_output …"]
