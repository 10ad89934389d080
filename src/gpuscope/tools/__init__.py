"""The capture tools `gpuscope run` stacks around a command: profilers, library tracers and
samplers, each a `Tool` made by a registered kind.

    >>> from gpuscope.tools import ToolRequest, load_catalog, resolve
    >>> tools = resolve([ToolRequest("nsys"), ToolRequest("gpu_info_power_profiler")],
    ...                 load_catalog())                                   # doctest: +SKIP

Modules: `tool` (the `Tool` contract and `ToolKind`, what makes tools), `registry` (tool kinds by
name: built-ins and plug-ins), `config` (tools.json, madengine's catalog format), `builtin/`
(rocprof, rpd, nsys, ncu, torch_profiler, library tracers, samplers), `host` (what this host
has: vendor, GPUs, drivers), `outputs` (a profiler's output folder analysed after the run).
Running the stack is `gpuscope.run`.
"""

from __future__ import annotations

from gpuscope.tools.config import ToolConfig, load_catalog, resolve
from gpuscope.tools.registry import Registry, ToolKind, default_registry
from gpuscope.tools.tool import Layer, RunContext, Tool

__all__ = [
    "Layer", "Registry", "RunContext", "Tool", "ToolConfig", "ToolKind", "default_registry",
    "load_catalog", "resolve",
]  # fmt: skip
