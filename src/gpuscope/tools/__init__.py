"""Tool stacks around any command: profilers, library tracers and samplers (`gpuscope run`).

    >>> from gpuscope.tools import RunRequest, ToolRequest, load_catalog, resolve, run
    >>> tools = resolve([ToolRequest("nsys"), ToolRequest("gpu_info_power_profiler")],
    ...                 load_catalog())                                   # doctest: +SKIP
    >>> request = RunRequest(command=("python3", "train.py"), tools=tuple(tools))
    >>> result = run(request)                                             # doctest: +SKIP
    >>> result.exit_code, result.run_dir                                  # doctest: +SKIP

Modules: `context` (madengine's --additional-context), `config` (tools.json), `registry`
(tool kinds, plugins), `tool` (the Tool contract), `stack` (stacking order), `command` (whether
a command can start: 126/127), `child` (the command's process group, signals, exit code),
`reaper` and `procs` (the processes it leaves behind), `gpu_processes` (who holds GPU memory),
`aftermath` (what is recorded of both), `session` (the whole run), `manifest`, `rundir`, `host`,
`doctor`, and `builtin/` (rocprof, rpd, nsys, ncu, torch_profiler, library tracers, samplers).
"""

from __future__ import annotations

from gpuscope.tools.config import ToolConfig, load_catalog, resolve
from gpuscope.tools.context import Context, ToolRequest, load_context
from gpuscope.tools.registry import Registry, ToolKind, default_registry
from gpuscope.tools.session import RunRequest, RunResult, run
from gpuscope.tools.tool import Layer, RunContext, Tool

__all__ = [
    "Context", "Layer", "Registry", "RunContext", "RunRequest", "RunResult", "Tool",
    "ToolConfig", "ToolKind", "ToolRequest", "default_registry", "load_catalog",
    "load_context", "resolve", "run",
]  # fmt: skip
