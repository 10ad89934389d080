"""The built-in tool kinds, registered exactly as a plugin would register its own.

Each kind's module is imported only when a tool of that kind is used, so that
`gpuscope run -- cmd` with no tools (or with a few) starts fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from gpuscope.tools.config import ToolConfig
from gpuscope.tools.tool import Tool, ToolKind

# kind -> (module under gpuscope.tools.builtin, class, shared by all tools of the kind)
BUILTIN_KINDS: dict[str, tuple[str, str, bool]] = {
    "command": ("_base", "WrapperTool", False),
    "rocprof": ("rocprof", "RocprofTool", False),
    "rpd": ("rpd", "RpdTool", False),
    "nsys": ("nsys", "NsysTool", False),
    "ncu": ("ncu", "NcuTool", False),
    "torch_profiler": ("torch_profiler", "TorchProfilerTool", False),
    "sampler": ("sampler", "SamplerTool", False),
    "library_trace": ("library", "LibraryTraceTool", True),
}


class _Lazy:
    """A factory that imports its tool class on first use."""

    def __init__(self, module: str, cls: str, shared: bool) -> None:
        self.module, self.cls, self.shared = module, cls, shared

    def __call__(self, configs: Sequence[ToolConfig]) -> Tool:
        module = importlib.import_module(f"gpuscope.tools.builtin.{self.module}")
        cls = getattr(module, self.cls)
        if self.shared:
            tool: Tool = cls(configs)
            return tool
        (config,) = configs
        one: Tool = cls(config)
        return one


def builtin_kinds() -> list[ToolKind]:
    """gpuscope's own kinds, for `registry.default_registry` to register like a plug-in's."""
    return [
        ToolKind(name, _Lazy(module, cls, shared), shared=shared)
        for name, (module, cls, shared) in BUILTIN_KINDS.items()
    ]
