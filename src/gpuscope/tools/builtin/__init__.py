"""The built-in tool kinds, registered exactly as a plugin would register its own."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gpuscope.tools.builtin._base import WrapperTool
from gpuscope.tools.builtin.library import LibraryTraceTool
from gpuscope.tools.builtin.ncu import NcuTool
from gpuscope.tools.builtin.nsys import NsysTool
from gpuscope.tools.builtin.rocprof import RocprofTool
from gpuscope.tools.builtin.rpd import RpdTool
from gpuscope.tools.builtin.sampler import SamplerTool
from gpuscope.tools.builtin.torch_profiler import TorchProfilerTool
from gpuscope.tools.config import ToolConfig
from gpuscope.tools.registry import Registry, ToolKind
from gpuscope.tools.tool import Tool


def _one_each(cls: type) -> Callable[[Sequence[ToolConfig]], Tool]:
    def factory(configs: Sequence[ToolConfig]) -> Tool:
        (config,) = configs
        tool: Tool = cls(config)
        return tool

    return factory


_SINGLE: dict[str, type] = {
    "command": WrapperTool,
    "rocprof": RocprofTool,
    "rpd": RpdTool,
    "nsys": NsysTool,
    "ncu": NcuTool,
    "torch_profiler": TorchProfilerTool,
    "sampler": SamplerTool,
}


def register_builtins(registry: Registry) -> None:
    for name, cls in _SINGLE.items():
        registry.register(ToolKind(name, _one_each(cls)))
    registry.register(ToolKind("library_trace", LibraryTraceTool, shared=True))
