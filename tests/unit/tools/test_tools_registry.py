"""The tool-kind registry: built-ins registered like plugins, duplicates refused, sharing."""

from __future__ import annotations

from importlib import import_module

import pytest
from tools_fakes import Recorder

from gpuscope.errors import ConfigError
from gpuscope.madengine.context import ToolRequest
from gpuscope.tools.builtin import BUILTIN_KINDS
from gpuscope.tools.config import ToolConfig, load_catalog, resolve
from gpuscope.tools.registry import Registry, ToolKind, default_registry, instantiate


def test_builtin_kinds_are_registered() -> None:
    assert set(default_registry()) >= {
        "command", "rocprof", "rpd", "nsys", "ncu", "torch_profiler", "sampler", "library_trace",
    }  # fmt: skip


@pytest.mark.parametrize("kind", sorted(BUILTIN_KINDS))
def test_every_builtin_kind_names_a_class_that_exists(kind: str) -> None:
    """The built-ins load lazily, by name (for a fast start): a renamed module or class fails
    here rather than when a run first asks for that tool."""
    module, cls, _ = BUILTIN_KINDS[kind]
    assert isinstance(getattr(import_module(f"gpuscope.tools.builtin.{module}"), cls), type)


def test_registering_a_name_twice_raises() -> None:
    registry = Registry()
    kind = ToolKind("mine", lambda configs: Recorder(configs[0].name, []))
    registry.register(kind)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(kind)
    with pytest.raises(ValueError, match="already registered"):
        default_registry().register(ToolKind("rocprof", kind.factory))


def test_unknown_kind_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"known kinds: .*rocprof"):
        default_registry().kind_of(ToolConfig(name="x", kind="nope"))


def test_library_tracers_share_one_tool_at_the_first_position() -> None:
    names = ["cublas_trace", "nsys", "nccl_trace", "gpu_info_vram_profiler", "cudnn_trace"]
    configs = resolve([ToolRequest(n) for n in names], load_catalog())
    planned = instantiate(configs, default_registry())
    assert [p.kind for p in planned] == ["library_trace", "nsys", "sampler"]
    assert planned[0].tool.name == "cublas_trace+nccl_trace+cudnn_trace"
    assert [c.name for c in planned[0].configs] == ["cublas_trace", "nccl_trace", "cudnn_trace"]
